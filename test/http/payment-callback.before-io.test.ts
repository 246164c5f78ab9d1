import { sendCallback } from "../support/paymentProvider.ts";
import { useTestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// The payment callback refuses a blocked or over-the-limit source from
// memory, before any transaction: no connection from either pool, no row
// written; the provider's signed delivery from that source still goes
// through, on the route's own pool. The service trusts the loopback proxy,
// so each test is its own source (X-Forwarded-For).

const t = useTestService({
  env: { TRUST_PROXY: "loopback", CALLBACK_RATE_LIMIT: "5" },
  async cleanup() {
    await t.db.query("delete from app_private.blocked_sources where source like '198.51.100.%'");
    await t.db.query("delete from app_private.payment_deliveries where source like '198.51.100.%'");
  },
});

describe("payment callback: refused before any I/O", () => {
  /** Counts the connections both pools hand out while `fn` runs. */
  async function acquisitions(fn: () => Promise<void>): Promise<{ api: number; callback: number }> {
    const api = t.service.api!;
    const n = { api: 0, callback: 0 };
    const onApi = () => n.api++;
    const onCallback = () => n.callback++;
    api.pool.on("acquire", onApi);
    api.callbackPool.on("acquire", onCallback);
    try {
      await fn();
    } finally {
      api.pool.off("acquire", onApi);
      api.callbackPool.off("acquire", onCallback);
    }
    return n;
  }

  test("a flood from a blocked source (no token, a wrong one, oversized bodies, from another address of its /64) takes no connection and writes nothing; the provider's signed delivery from it still goes through, on the route's own pool", async () => {
    const source = "198.51.100.20";
    await t.db.query("insert into app_private.blocked_sources (source, blocked_until, reason) values ($1, now() + interval '10 minutes', 'test')", [source]);
    await t.db.query("insert into app_private.blocked_sources (source, blocked_until, reason) values ('2001:db8:9:9::/64', now() + interval '10 minutes', 'test')");
    // The service learns of blocks by notification.
    await t.service.api!.subscriber.flush();
    await sleep(10);
    const big = JSON.stringify({ padding: "x".repeat(70_000) });
    const answers: number[] = [];
    const used = await acquisitions(async () => {
      for (let i = 0; i < 100; i++) {
        const from = i % 4 === 3 ? `2001:db8:9:9::${i.toString(16)}` : source;
        const options = i % 4 === 0 ? { token: null } : i % 4 === 1 ? { token: "wrong-token-0123456789" } : { token: null, signature: null };
        answers.push((await sendCallback(t.url, i % 4 === 2 ? big : { event: "payment.completed" }, { ...options, headers: { "x-forwarded-for": from } })).status);
      }
    });
    expect(new Set(answers)).toEqual(new Set([429]));
    // The health probe (every 2 s) is the API pool's only user meanwhile.
    expect(used.callback).toBe(0);
    expect(used.api).toBeLessThanOrEqual(3);
    const { rows } = await t.db.query("select count(*)::int as n from app_private.payment_deliveries where source in ($1, '2001:db8:9:9::/64')", [source]);
    expect(rows[0].n).toBe(0);

    const signed = await acquisitions(async () => {
      const r = await sendCallback(t.url, { event: "something.else", data: { amount: "1.00", customer: "alice@example.com" } }, { headers: { "x-forwarded-for": source } });
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { status: "ignored" } });
    });
    expect(signed.callback).toBeGreaterThanOrEqual(1);
  });

  test("CALLBACK_RATE_LIMIT: past it a source's deliveries are refused 429 from memory (nothing written); a validly signed one still goes through", async () => {
    const source = "198.51.100.21";
    const answers = await Promise.all(Array.from({ length: 30 }, () => sendCallback(t.url, { event: "payment.completed" }, { token: null, headers: { "x-forwarded-for": source } })));
    const refused = answers.filter((a) => a.status === 429).length;
    const unauthorized = answers.filter((a) => a.status === 401).length;
    expect(refused + unauthorized).toBe(30);
    expect(unauthorized).toBeLessThanOrEqual(10); // 5 a second (a window may turn meanwhile)
    expect(refused).toBeGreaterThanOrEqual(20);
    expect(answers.find((a) => a.status === 429)?.body?.error?.code).toBe("RATE_LIMITED");
    // Each 401's delivery row is written as it is answered; wait for the last of them, then none more.
    const logged = async () => (await t.db.query("select count(*)::int as n from app_private.payment_deliveries where source = $1", [source])).rows[0].n as number;
    await waitUntil(`${unauthorized} deliveries logged`, async () => (await logged()) >= unauthorized);
    expect(await logged()).toBe(unauthorized);
    const r = await sendCallback(t.url, { event: "something.else", data: { amount: "1.00", customer: "alice@example.com" } }, { headers: { "x-forwarded-for": source } });
    expect(r.status).toBe(200);
  });

  test("the provider's verified deliveries do not spend the limit (shared with the Stripe route): after 12 at once from a source, its unverified one is answered 401, not 429; a wrong signature still spends it", async () => {
    const source = "198.51.100.22";
    const verified = await Promise.all(
      Array.from({ length: 12 }, () => sendCallback(t.url, { event: "something.else", data: { amount: "1.00", customer: "alice@example.com" } }, { headers: { "x-forwarded-for": source } })),
    );
    expect(verified.map((r) => r.status)).toEqual(Array(12).fill(200));
    const unverified = await sendCallback(t.url, { event: "payment.completed" }, { token: null, headers: { "x-forwarded-for": source } });
    expect(unverified.status).toBe(401);
    // With the token and a wrong signature: spends it (5 a second), so 12 at once are mostly refused.
    const badSignature = await Promise.all(
      Array.from({ length: 12 }, () => sendCallback(t.url, { event: "payment.completed" }, { signature: "sha256=00", headers: { "x-forwarded-for": "198.51.100.23" } })),
    );
    expect(badSignature.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(2);
    expect(badSignature.every((r) => r.status === 429 || r.status === 401)).toBe(true);
  });
});
