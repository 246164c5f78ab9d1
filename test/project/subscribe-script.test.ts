import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { DEMO } from "../support/client.ts";
import { placeOrder, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { ROOT, useTestService } from "../support/service.ts";
import { tempDir } from "../support/tempDirs.ts";
import { waitUntil } from "../support/wait.ts";

// `npm run subscribe` (scripts/subscribe.ts), the README's tour step 4, run
// for real against the test service: it finds the API on PORT as `npm run
// pay` does, says "subscribed" only when the server has not refused the
// subscription, and shows a refusal (its code) with exit 1.

const t = useTestService({
  deleteNewOrders: true,
  async cleanup() {
    await t.db.query("delete from app_public.coffees where id = $1", [coffee.id]);
    await t.db.query("delete from app_public.ingredients where id = $1", [coffee.ingredientId]);
  },
});
let coffee: StockedCoffee;
let envFile: string;

beforeAll(async () => {
  coffee = await stockedCoffee(t, "Script", "2.90", 1);
  // No .env of the checkout's: only what the test gives.
  envFile = path.join(tempDir("subscribe"), "empty.env");
  writeFileSync(envFile, "");
});

/** The real `npm run subscribe -- <args>`, in its own process group; `stop` ends it and waits. */
function subscribeScript(args: string[], env: Record<string, string>) {
  const base: Record<string, string | undefined> = { ...process.env, NODE_OPTIONS: "", LOG_LEVEL: "silent", ENV_FILE: envFile, ...env };
  delete base.API_URL;
  if (env.API_URL) base.API_URL = env.API_URL;
  if (!env.PORT) delete base.PORT;
  const child = spawn("npm", ["run", "-s", "subscribe", "--", ...args], { cwd: ROOT, env: base, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const out = { stdout: "", stderr: "", code: undefined as number | null | undefined };
  child.stdout.on("data", (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<void>((resolve) =>
    child.once("close", (code) => {
      out.code = code;
      resolve();
    }),
  );
  return {
    out,
    exited,
    async stop() {
      if (out.code === undefined) process.kill(-child.pid!, "SIGTERM");
      await exited;
    },
  };
}

test("follows PORT (no API_URL): a barista's queue, 'subscribed' on stderr, then the paid order on stdout", async () => {
  const port = new URL(t.url).port;
  const sub = subscribeScript([DEMO.barista.email, "coffee", "--queue", DEMO.stores.baixa], { PORT: port });
  try {
    await waitUntil("subscribed", () => /subscribed to the queue of store/.test(sub.out.stderr) || sub.out.code !== undefined, 60_000);
    expect({ code: sub.out.code, stderr: sub.out.stderr }).toEqual({ code: undefined, stderr: expect.stringContaining("subscribed to the queue of store") });
    const order = await placeOrder(t, await t.token("alice"), [{ coffeeId: coffee.id, quantity: 1 }]);
    await t.db.query("update app_public.orders set status = 'PAID' where id = $1", [order.id]);
    await waitUntil("the paid order printed", () => sub.out.stdout.includes(order.id), 15_000);
    expect(JSON.parse(sub.out.stdout.split("\n").find((l) => l.includes(order.id))!)).toMatchObject({ data: { orderQueueChanged: { id: order.id, status: "PAID" } } });
  } finally {
    await sub.stop();
  }
}, 90_000);

test("a customer's --queue: the server's refusal (FORBIDDEN) and exit 1, never 'subscribed'", async () => {
  const sub = subscribeScript([DEMO.alice.email, "coffee", "--queue", DEMO.stores.baixa], { API_URL: t.url });
  try {
    await waitUntil("the script to end", () => sub.out.code !== undefined, 60_000);
    expect({ code: sub.out.code, stdout: sub.out.stdout }).toEqual({ code: 1, stdout: "" });
    expect(sub.out.stderr).toMatch(/^refused: FORBIDDEN: .+/m);
    expect(sub.out.stderr).not.toContain("subscribed");
  } finally {
    await sub.stop();
  }
}, 90_000);
