import { createHash, timingSafeEqual } from "node:crypto";

// What `Authorization: Bearer <token>` carries: the access tokens of
// /graphql (src/auth.ts verifies them) and shared secrets (the payment
// provider's token, the metrics scraper's token).

/** The token of an `Authorization: Bearer <token>` header, if that is what it is. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
}

const sha256 = (data: string) => createHash("sha256").update(data).digest();

/** Compares in constant time, whatever the lengths (both are hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}
