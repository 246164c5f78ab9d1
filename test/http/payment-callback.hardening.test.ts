import { placeOrder, removeStockedCoffee, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { sendCallback, type SendOptions } from "../support/paymentProvider.ts";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

// The payment callback against a hostile public: "paid" is decided in one
// place (exactly "paid"; look-alikes and a payment without amount or items
// never pay), a blocked source's requests write nothing and no stranger's
// failure feeds the provider's burst alert, refused deliveries are purged
// after their retention by a scheduled task, a payment in another currency
// is refused, and a refund owed records what was paid, flagged and alerted
// when it is more than the order's total. The service trusts the loopback
// proxy, so each test is its own source (X-Forwarded-For).

let c: StockedCoffee;
let alice: string;
let burstAtStart: number;
let sourceSerial = 0;

const t = useTestService({
  worker: true,
  env: { TRUST_PROXY: "loopback" },
  deleteNewOrders: true,
  async cleanup() {
    await t.db.query("update app_private.alert_rules set threshold = $1 where kind = 'burst'", [burstAtStart]);
    await t.db.query("update app_private.settings set value = 30 where key = 'failed_delivery_retention_days'");
    await t.db.query("delete from app_private.blocked_sources where source like '198.51.100.%'");
    await removeStockedCoffee(t, c);
  },
});

const nextSource = () => `198.51.100.${(sourceSerial += 1)}`;

async function send(body: unknown, source: string, options: SendOptions = {}) {
  return sendCallback(t, body, { ...options, headers: { "x-forwarded-for": source, ...options.headers } });
}

async function newOrder(quantity = 1) {
  return placeOrder(t, alice, [{ coffeeId: c.id, quantity }]);
}

const paid = (orderId: string, amount: string, extra: Record<string, unknown> = {}) => ({
  order_id: orderId,
  status: "paid",
  amount,
  items: [{ product: c.id, quantity: 1 }],
  event_id: `evt-${orderId}-${Math.random()}`,
  ...extra,
});

async function statusOf(id: string): Promise<string> {
  return (await t.db.query("select status::text from app_public.orders where id = $1", [id])).rows[0].status;
}

async function alerts(kind: string, orderId?: string): Promise<number> {
  const { rows } = await t.db.query("select count(*)::int as n from app_public.payment_alerts where kind = $1 and ($2::uuid is null or order_id = $2)", [kind, orderId ?? null]);
  return rows[0].n;
}

async function metric(outcome: string): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const m = new RegExp(`^cafe_payment_callbacks_total\\{outcome="${outcome}"\\} (\\d+)`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}

beforeAll(async () => {
  alice = await t.token("alice");
  burstAtStart = (await t.db.query("select threshold from app_private.alert_rules where kind = 'burst'")).rows[0].threshold;
  c = await stockedCoffee(t, "Hardening", "4.00", 1);
});

describe('"paid" is decided in one place', () => {
  test('"PAİD" (dotted capital I) with no amount and no items: 400 VALIDATION_FAILED, the order stays PENDING', async () => {
    const o = await newOrder();
    const r = await send({ order_id: o.id, status: "PAİD" }, nextSource());
    expect({ status: r.status, code: r.body?.error?.code, details: r.body?.error?.details }).toEqual({
      status: 400,
      code: "VALIDATION_FAILED",
      details: [{ path: "status", message: expect.stringContaining("paid") }],
    });
    expect(await statusOf(o.id)).toBe("PENDING");
  });

  test('"paid" in another case is refused, "paid" without amount or items is refused; a plain other status is ignored; none pays', async () => {
    const o = await newOrder();
    const cases: Array<[unknown, number, string]> = [
      [{ order_id: o.id, status: "PAID", amount: "4.00", items: [{ product: c.id, quantity: 1 }] }, 400, "VALIDATION_FAILED"],
      [{ order_id: o.id, status: "Paid" }, 400, "VALIDATION_FAILED"],
      [{ order_id: o.id, status: "paid" }, 400, "VALIDATION_FAILED"],
      [{ order_id: o.id, status: "paid", amount: "4.00" }, 400, "VALIDATION_FAILED"],
      [{ order_id: o.id, status: "paid", items: [{ product: c.id, quantity: 1 }] }, 400, "VALIDATION_FAILED"],
      [{ order_id: o.id, status: "pending", amount: "4.00", items: [{ product: c.id, quantity: 1 }] }, 200, "ignored"],
      [{ event: "Payment.Completed", data: { amount: "4.00", customer: "alice@example.com", order_id: o.id } }, 200, "ignored"],
    ];
    for (const [body, status, code] of cases) {
      const r = await send(body, nextSource());
      expect({ body, status: r.status, code: r.body?.error?.code ?? r.body?.status }).toEqual({ body, status, code });
    }
    expect(await statusOf(o.id)).toBe("PENDING");
  });

  test("the database never pays a payment without an amount, or a shape-B payment without items, whoever calls it", async () => {
    const o = await newOrder();
    const client = await t.db.connect();
    try {
      await client.query("begin");
      await client.query("set local role cafe_system");
      const call = (amount: string | null, status: string | null, items: string | null) =>
        client.query(
          "select (r).code from (select app_private.process_payment_callback('192.0.2.1', $1, 'x', 'payment.completed', $2, $3, 'alice@example.com', $4::numeric, $5::jsonb, null) as r) x",
          [`direct-${Math.random()}`, status, o.id, amount, items],
        );
      expect((await call(null, null, null)).rows[0].code).toBe("VALIDATION_FAILED");
      expect((await call(null, "paid", JSON.stringify([{ product: c.id, quantity: 1 }]))).rows[0].code).toBe("VALIDATION_FAILED");
      expect((await call("4.00", "paid", null)).rows[0].code).toBe("VALIDATION_FAILED");
      await client.query("commit");
    } finally {
      client.release();
    }
    expect(await statusOf(o.id)).toBe("PENDING");
  });
});

describe("what a stranger can make us write", () => {
  test("200 callbacks with a wrong token from one address: 6 rows written, 194 answered 429 and counted in memory only, no burst alert", async () => {
    const source = nextSource();
    const { rows: rules } = await t.db.query("select threshold from app_private.alert_rules where kind = 'auth_failures'");
    const threshold: number = rules[0].threshold;
    // A burst threshold these 200 would pass, were they counted.
    await t.db.query("update app_private.alert_rules set threshold = 50 where kind = 'burst'");
    const burstBefore = await alerts("burst");
    const metricBefore = await metric("RATE_LIMITED");
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await send({ event: "payment.completed" }, source, { token: "not-the-webhook-token" })).status);
    const counts = statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 401: threshold + 1, 429: 200 - threshold - 1 });
    const { rows } = await t.db.query("select count(*)::int as n from app_private.payment_deliveries where source = $1", [source]);
    expect(rows[0].n).toBe(threshold + 1);
    expect(await metric("RATE_LIMITED")).toBe(metricBefore + 200 - threshold - 1);
    expect(await alerts("burst")).toBe(burstBefore);
    await t.db.query("update app_private.alert_rules set threshold = $1 where kind = 'burst'", [burstAtStart]);
  });

  test("bodies over 64 KiB from a stranger are answered 413 every time and write nothing (counted in the metric)", async () => {
    const source = nextSource();
    const { rows: rules } = await t.db.query("select threshold from app_private.alert_rules where kind = 'auth_failures'");
    const threshold: number = rules[0].threshold;
    const big = JSON.stringify({ padding: "x".repeat(70_000) });
    const before = await metric("PAYLOAD_TOO_LARGE");
    const statuses: number[] = [];
    for (let i = 0; i < threshold + 5; i++) statuses.push((await send(big, source, { token: null, signature: null })).status);
    expect(statuses).toEqual(Array(threshold + 5).fill(413));
    const { rows } = await t.db.query("select count(*)::int as n from app_private.payment_deliveries where source = $1", [source]);
    expect(rows[0].n).toBe(0);
    expect(await metric("PAYLOAD_TOO_LARGE")).toBe(before + threshold + 5);
  });

  test("failures before authentication never feed the burst alert; the provider's deliveries still do", async () => {
    await t.db.query("update app_private.alert_rules set threshold = 20 where kind = 'burst'");
    await t.db.query("delete from app_private.alert_windows where kind = 'burst'");
    const burstBefore = await alerts("burst");
    for (let i = 0; i < 25; i++) {
      // 25 strangers, one failure each: none is blocked, none is the provider.
      await t.db.query("select app_private.log_delivery($1, 401, 'rejected', 'UNAUTHORIZED', 'wrong token')", [`203.0.113.${i}`]);
    }
    expect(await alerts("burst")).toBe(burstBefore);
    for (let i = 0; i < 25; i++) await t.db.query("select app_private.log_delivery('192.0.2.50', 200, 'ignored', null, 'burst check', $1)", [`burst-${i}-${Math.random()}`]);
    expect(await alerts("burst")).toBe(burstBefore + 1);
    await t.db.query("update app_private.alert_rules set threshold = $1 where kind = 'burst'", [burstAtStart]);
    await t.db.query("delete from app_private.payment_deliveries where source = '192.0.2.50' or source like '203.0.113.%'");
  });

  test("refused deliveries older than failed_delivery_retention_days are purged; others stay; the worker runs the purge (hourly crontab)", async () => {
    const insert = (outcome: string, code: string | null, daysAgo: number) =>
      t.db
        .query("insert into app_private.payment_deliveries (source, http_status, outcome, code, received_at) values ('192.0.2.60', 400, $1, $2, now() - make_interval(days => $3)) returning id", [
          outcome,
          code,
          daysAgo,
        ])
        .then((r) => Number(r.rows[0].id));
    const oldFailed = await insert("rejected", "VALIDATION_FAILED", 31);
    const recentFailed = await insert("rejected", "UNAUTHORIZED", 29);
    const oldProcessed = await insert("processed", null, 400);
    const left = async () => (await t.db.query("select id::int from app_private.payment_deliveries where source = '192.0.2.60' order by id")).rows.map((r) => r.id);

    const purge = async () => {
      const client = await t.db.connect();
      try {
        await client.query("begin; set local role cafe_system");
        const n = (await client.query("select app_private.purge_failed_deliveries() as n")).rows[0].n;
        await client.query("commit");
        return n;
      } finally {
        client.release();
      }
    };
    expect(await left()).toEqual([oldFailed, recentFailed, oldProcessed]);
    expect(await purge()).toBeGreaterThanOrEqual(1);
    expect(await left()).toEqual([recentFailed, oldProcessed]);
    // The setting decides.
    await t.db.query("update app_private.settings set value = 7 where key = 'failed_delivery_retention_days'");
    await purge();
    expect(await left()).toEqual([oldProcessed]);

    // Scheduled: the worker registered the crontab entry, and runs the task.
    const { rows: crons } = await t.db.query("select identifier from graphile_worker._private_known_crontabs where identifier = 'purge_failed_deliveries'");
    expect(crons).toEqual([{ identifier: "purge_failed_deliveries" }]);
    const again = await insert("rejected", "BAD_SIGNATURE", 8);
    await t.db.query("select graphile_worker.add_job('purge_failed_deliveries', '{}'::json)");
    await waitUntil("the worker's purge", async () => !(await left()).includes(again), 10_000, 100);
    await t.db.query("update app_private.settings set value = 30 where key = 'failed_delivery_retention_days'");
    await t.db.query("delete from app_private.payment_deliveries where source = '192.0.2.60'");
  });
});

describe("currency", () => {
  test("another currency than the café's (settings.currency, EUR) is 422 CURRENCY_MISMATCH with an alert and pays nothing; EUR in any case, or none, pays", async () => {
    const { rows } = await t.db.query("select text_value from app_private.settings where key = 'currency'");
    expect(rows).toEqual([{ text_value: "EUR" }]);
    const o = await newOrder();
    const usd = await send(paid(o.id, "4.00", { currency: "USD" }), nextSource());
    expect({ status: usd.status, code: usd.body?.error?.code }).toEqual({ status: 422, code: "CURRENCY_MISMATCH" });
    expect(await alerts("currency_mismatch", o.id)).toBe(1);
    const gbp = await send({ event: "payment.completed", data: { amount: "4.00", customer: "alice@example.com", order_id: o.id, currency: "GBP" } }, nextSource());
    expect({ status: gbp.status, code: gbp.body?.error?.code }).toEqual({ status: 422, code: "CURRENCY_MISMATCH" });
    const malformed = await send(paid(o.id, "4.00", { currency: "EURO" }), nextSource());
    expect({ status: malformed.status, code: malformed.body?.error?.code }).toEqual({ status: 400, code: "VALIDATION_FAILED" });
    expect(await statusOf(o.id)).toBe("PENDING");

    const eur = await send(paid(o.id, "4.00", { currency: "eur" }), nextSource());
    expect({ status: eur.status, body: eur.body?.status }).toEqual({ status: 200, body: "processed" });
    const o2 = await newOrder();
    const none = await send(paid(o2.id, "4.00"), nextSource());
    expect({ status: none.status, body: none.body?.status }).toEqual({ status: 200, body: "processed" });
  });
});

describe("refund amounts", () => {
  test("a payment of 9,999.99 for a cancelled 4.00 order: the refund records what was paid and the total, is flagged, and raises refund_above_total", async () => {
    const o = await newOrder();
    await t.db.query("update app_public.orders set status = 'CANCELLED' where id = $1", [o.id]);
    const r = await send(paid(o.id, "9999.99"), nextSource());
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 422, code: "ORDER_NOT_PAYABLE" });
    const { rows } = await t.db.query("select amount::text, paid_amount::text, order_total::text, above_order_total from app_public.refunds where order_id = $1", [o.id]);
    expect(rows).toEqual([{ amount: "9999.99", paid_amount: "9999.99", order_total: "4.00", above_order_total: true }]);
    expect(await alerts("refund_above_total", o.id)).toBe(1);
    expect(await alerts("refund_needed", o.id)).toBe(1);

    // The order's total: owed, not flagged.
    const o2 = await newOrder();
    await t.db.query("update app_public.orders set status = 'CANCELLED' where id = $1", [o2.id]);
    await send(paid(o2.id, "4.00"), nextSource());
    const { rows: fair } = await t.db.query("select amount::text, above_order_total from app_public.refunds where order_id = $1", [o2.id]);
    expect(fair).toEqual([{ amount: "4.00", above_order_total: false }]);
    expect(await alerts("refund_above_total", o2.id)).toBe(0);
    const { rows: rule } = await t.db.query("select kind from app_private.alert_rules where kind = 'refund_above_total'");
    expect(rule).toHaveLength(1);
  });
});
