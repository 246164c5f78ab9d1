// What the bench's servers share: how they end (on SIGTERM, or when the
// runner that spawned it goes away, it cleans up and exits 0; a failing start
// exits 1) and the settings a bearer token gives a request, as the service
// sets them (role and claims, verified with the same JWT secret).
import jwt from "jsonwebtoken";

export function pgSettingsFor(authorization: string | undefined): Record<string, string> {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token) return { role: "cafe_anonymous" };
  const claims = jwt.verify(token, process.env.JWT_SECRET!, { algorithms: ["HS256"], audience: "cafe-api" }) as { role: string; user_id: string };
  return { role: `cafe_${claims.role}`, "jwt.claims.user_id": claims.user_id, "jwt.claims.role": claims.role };
}

export function stopOn(cleanup: () => unknown): void {
  const stop = async () => {
    await cleanup();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("disconnect", stop);
}

export function runChild(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
