import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { webhookSignature } from "../../src/worker/tasks/notification__send_webhook.ts";
import { DEMO, errorsOf, subscribe } from "../support/client.ts";
import { moveAsDba, placeOrder, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { listening, useTestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";
import { say } from "../support/figures.ts";

// Customer notifications: a row per (order, kind) written
// by a trigger on the order's status, whoever moves it; delivered over the
// customer's own notificationAdded subscription and, by graphile-worker, to
// an outgoing webhook signed the Standard Webhooks way. The receiver here is
// a real HTTP server that checks each signature with the secret, as a
// provider would, and can be "down" (503, or dropping the connection).

/** Standard Webhooks secret: whsec_ + base64 of the key's bytes. */
const SECRET = `whsec_${Buffer.from("notify-test-key-0123456789abcdef").toString("base64")}`;
const SUBSCRIPTION = /* GraphQL */ `
  subscription {
    notificationAdded {
      id
      kind
      message
      orderId
      customerId
    }
  }
`;

interface Accepted {
  id: string;
  timestamp: number;
  body: any;
}

/** A webhook receiver per the Standard Webhooks spec: verifies, then dedupes by webhook-id. */
class Receiver {
  mode: "up" | "down" | "reset" = "up";
  /** Every request answered 2xx (a repeated webhook-id included). */
  readonly accepted: Accepted[] = [];
  /** Requests refused while down (503) or cut off (reset). */
  refusedWhileDown = 0;
  /** Requests whose signature or timestamp did not verify. */
  badSignatures = 0;
  private readonly server = http.createServer((req, res) => this.handle(req, res));
  url = "";

  async start() {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/cafe`;
  }

  stop() {
    this.server.closeAllConnections();
    return new Promise<void>((r) => this.server.close(() => r()));
  }

  /** The distinct webhook-ids accepted. */
  ids() {
    return new Set(this.accepted.map((a) => a.id));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (this.mode === "reset") {
        this.refusedWhileDown++;
        req.socket.destroy();
        return;
      }
      if (this.mode === "down") {
        this.refusedWhileDown++;
        res.writeHead(503).end();
        return;
      }
      const body = Buffer.concat(chunks).toString("utf8");
      const id = String(req.headers["webhook-id"] ?? "");
      const timestamp = Number(req.headers["webhook-timestamp"]);
      if (!verify(id, timestamp, body, String(req.headers["webhook-signature"] ?? ""))) {
        this.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      this.accepted.push({ id, timestamp, body: JSON.parse(body) });
      res.writeHead(204).end();
    });
  }
}

/** The receiver's check (Standard Webhooks): any `v1,<sig>` of the space-separated list matches; the timestamp is within 5 minutes. */
function verify(id: string, timestamp: number, body: string, header: string): boolean {
  if (!id || !Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > 300) return false;
  const key = Buffer.from(SECRET.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  return header.split(" ").some((s) => {
    const [version, sig] = s.split(",");
    if (version !== "v1" || !sig) return false;
    const given = Buffer.from(sig, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const receiver = new Receiver();
// Filled in before the service starts (useTestService reads env when its beforeAll runs).
const env: Record<string, string> = {};
beforeAll(async () => {
  await receiver.start();
  env.NOTIFY_WEBHOOK_URL = receiver.url;
  env.NOTIFY_WEBHOOK_SECRET = SECRET;
});

const SETTINGS = ["notify_webhook_backoff_base_seconds", "notify_webhook_backoff_max_seconds"];
let settingsAtStart: Array<{ key: string; value: string }> = [];
let coffee: StockedCoffee;
let tokens: Awaited<ReturnType<typeof t.tokens>>;

const t = useTestService({
  worker: true,
  env,
  deleteNewOrders: true,
  async cleanup() {
    for (const s of settingsAtStart) await t.db.query("update app_private.settings set value = $2 where key = $1", [s.key, s.value]);
    await t.db.query("delete from app_public.coffees where id = $1", [coffee.id]);
    await t.db.query("delete from app_public.ingredients where id = $1", [coffee.ingredientId]);
  },
});
afterAll(() => receiver.stop());

beforeAll(async () => {
  settingsAtStart = (await t.db.query("select key, value::text from app_private.settings where key = any($1)", [SETTINGS])).rows;
  tokens = await t.tokens();
  coffee = await stockedCoffee(t, "Notify", "3.10", 1);
});

const notificationsOf = async (orderId: string) =>
  (await t.db.query("select id, customer_id, kind, message from app_public.notifications where order_id = $1 order by created_at, kind", [orderId])).rows;
const setStatus = (id: string, status: string) => t.db.query("update app_public.orders set status = $2 where id = $1", [id, status]);
const delivered = async (ids: string[]) =>
  (await t.db.query("select count(*)::int as n from app_private.notification_webhooks where notification_id = any($1) and delivered_at is not null", [ids])).rows[0].n;

describe("a customer hears paid and ready for pickup", () => {
  test("a paid (by the provider's callback), then ready (by the barista) order: two notifications, over her subscription and the signed webhook; no one else hears", async () => {
    const alice = t.ws(tokens.alice);
    const bob = t.ws(tokens.bob);
    const mine = subscribe(alice, SUBSCRIPTION);
    const bobs = subscribe(bob, SUBSCRIPTION);
    await listening(t, [`notification:${DEMO.alice.id}`, `notification:${DEMO.bob.id}`]);

    const order = await placeOrder(t, tokens.alice, [{ coffeeId: coffee.id, quantity: 2 }]);
    const paid = await sendCallback(t, paymentBody({ id: order.id, email: DEMO.alice.email, total: order.total, lines: [] }, "A", "event"));
    expect(paid.body).toMatchObject({ status: "processed" });
    await waitUntil("the worker to start preparing", async () => (await t.db.query("select status from app_public.orders where id = $1", [order.id])).rows[0].status === "PREPARING");
    await setStatus(order.id, "BREWING");
    const ready = await t.gql(`mutation($id: ID!) { updateOrderStatus(id: $id, status: READY) { status } }`, {
      variables: { id: order.id },
      token: tokens.barista,
    });
    expect(ready.body.errors).toBeUndefined();

    const rows = await notificationsOf(order.id);
    expect(rows.map((r) => [r.kind, r.customer_id])).toEqual([
      ["payment_received", DEMO.alice.id],
      ["ready_for_pickup", DEMO.alice.id],
    ]);

    await mine.waitFor(2);
    expect(errorsOf(mine)).toEqual([]);
    expect(mine.results.map((r) => r.data!.notificationAdded)).toEqual(rows.map((r) => ({ id: r.id, kind: r.kind, message: r.message, orderId: order.id, customerId: DEMO.alice.id })));
    expect(mine.results[1]!.data!.notificationAdded.message).toBe("Your order is ready for pickup.");

    await waitUntil("both webhooks", () => rows.every((r) => receiver.ids().has(r.id)), 15_000);
    for (const r of rows) {
      const got = receiver.accepted.filter((a) => a.id === r.id);
      expect(got).toHaveLength(1);
      expect(got[0]!.body).toMatchObject({ type: `notification.${r.kind}`, data: { id: r.id, kind: r.kind, orderId: order.id, customerId: DEMO.alice.id, message: r.message } });
    }
    expect(receiver.badSignatures).toBe(0);
    // The worker records the delivery once the receiver has answered.
    await waitUntil("both deliveries recorded", async () => (await delivered(rows.map((r) => r.id))) === 2);

    // Bob heard nothing of it.
    await sleep(300);
    expect(bobs.results).toEqual([]);
    expect(errorsOf(bobs)).toEqual([]);
    mine.dispose();
    bobs.dispose();
  });

  test("cancelled after payment: one refund_owed notification; cancelled unpaid, or moved through other statuses: none; a status taken twice notifies once", async () => {
    const paidOrder = await placeOrder(t, tokens.bob, [{ coffeeId: coffee.id, quantity: 1 }]);
    await setStatus(paidOrder.id, "PAID");
    await setStatus(paidOrder.id, "CANCELLED");
    const kinds = (await notificationsOf(paidOrder.id)).map((r) => r.kind);
    expect(kinds).toEqual(["payment_received", "refund_owed"]);
    expect((await notificationsOf(paidOrder.id))[1].message).toMatch(/cancelled; 3\.10 will be refunded/);
    const { rows: refunds } = await t.db.query("select amount::text from app_public.refunds where order_id = $1", [paidOrder.id]);
    expect(refunds).toEqual([{ amount: "3.10" }]);

    const unpaid = await placeOrder(t, tokens.bob, [{ coffeeId: coffee.id, quantity: 1 }]);
    await setStatus(unpaid.id, "CANCELLED");
    expect(await notificationsOf(unpaid.id)).toEqual([]);

    // The whole path: paid and ready only; READY again (a DBA's back-and-forth) adds nothing.
    const full = await placeOrder(t, tokens.bob, [{ coffeeId: coffee.id, quantity: 1 }]);
    await moveAsDba(t, full.id, "COMPLETED");
    await t.db.query("insert into app_public.order_status_transitions values ('COMPLETED', 'READY', 'dba')");
    try {
      await setStatus(full.id, "READY");
    } finally {
      await t.db.query("delete from app_public.order_status_transitions where from_status = 'COMPLETED' and to_status = 'READY' and role = 'dba'");
    }
    expect((await notificationsOf(full.id)).map((r) => r.kind)).toEqual(["payment_received", "ready_for_pickup"]);
    const { rows: jobs } = await t.db.query("select count(*)::int as n from app_private.notification_webhooks w join app_public.notifications n on n.id = w.notification_id where n.order_id = $1", [
      full.id,
    ]);
    expect(jobs[0].n).toBe(2);
  });

  test("notificationAdded: anonymous is UNAUTHENTICATED, staff FORBIDDEN", async () => {
    for (const [token, code] of [
      [null, "UNAUTHENTICATED"],
      [tokens.barista, "FORBIDDEN"],
      [tokens.admin, "FORBIDDEN"],
    ] as const) {
      const sub = subscribe(t.ws(token), SUBSCRIPTION);
      await sub.waitFor(1);
      expect(errorsOf(sub).map((e) => e.extensions?.code)).toEqual([code]);
      sub.dispose();
    }
  });
});

describe("a webhook receiver that is down", () => {
  test("orders go on while it is down; after it comes back it gets each event exactly once, and a re-run job sends nothing again", async () => {
    // A minute's outage scaled to ~8 s: backoff base 0.25 s doubling, at most 1 s (defaults: 2 s, 3600 s).
    await t.db.query("update app_private.settings set value = 0.25 where key = 'notify_webhook_backoff_base_seconds'");
    await t.db.query("update app_private.settings set value = 1 where key = 'notify_webhook_backoff_max_seconds'");
    receiver.mode = "down";
    const before = receiver.accepted.length;

    const orders = [];
    const started = Date.now();
    for (let i = 0; i < 3; i++) {
      const o = await placeOrder(t, tokens.alice, [{ coffeeId: coffee.id, quantity: 1 }]);
      await moveAsDba(t, o.id, "READY");
      orders.push(o.id);
    }
    // The orders did not wait for the receiver.
    expect(Date.now() - started).toBeLessThan(5_000);
    const ids: string[] = [];
    for (const id of orders) ids.push(...(await notificationsOf(id)).map((r) => r.id));
    expect(ids).toHaveLength(6);

    await waitUntil("attempts refused while down", () => receiver.refusedWhileDown >= 6, 10_000);
    await sleep(3_000);
    receiver.mode = "reset"; // then the connection drops (a network error, not an answer)
    await sleep(3_000);
    expect(receiver.accepted.length).toBe(before);
    receiver.mode = "up";
    const upAt = Date.now();

    await waitUntil("every webhook delivered", async () => (await delivered(ids)) === ids.length, 20_000);
    const catchUpMs = Date.now() - upAt;
    await sleep(2_500); // a duplicate would show up here (poll interval 1 s)
    const got = receiver.accepted.slice(before);
    expect(new Set(got.map((a) => a.id))).toEqual(new Set(ids));
    expect(got).toHaveLength(ids.length); // each exactly once
    expect(receiver.badSignatures).toBe(0);

    const { rows } = await t.db.query("select min(attempts)::int as min, max(attempts)::int as max from app_private.notification_webhooks where notification_id = any($1)", [ids]);
    expect(rows[0].min).toBeGreaterThan(2);
    expect(rows[0].max).toBeLessThan(25);
    say(
      `[notifications] receiver down ${Math.round((upAt - started) / 1000)} s (503, then dropped connections): ${receiver.refusedWhileDown} attempts refused; attempts per event ${rows[0].min}-${rows[0].max}; all ${ids.length} delivered ${catchUpMs} ms after it came back, each once`,
    );

    // A job run again for a delivered notification sends nothing.
    await t.db.query("select graphile_worker.add_job('notification__send_webhook', json_build_object('id', $1::text), job_key := 'rerun:' || $1)", [ids[0]]);
    await waitUntil("the re-run job to finish", async () => (await t.db.query("select count(*)::int as n from graphile_worker.jobs where key = 'rerun:' || $1", [ids[0]])).rows[0].n === 0, 10_000);
    expect(receiver.accepted.length).toBe(before + ids.length);
    const { rows: left } = await t.db.query("select count(*)::int as n from graphile_worker.jobs where key = any($1)", [ids.map((id) => `notification__send_webhook:${id}`)]);
    expect(left[0].n).toBe(0);
  });
});

describe("configuration", () => {
  test("NOTIFY_WEBHOOK_URL needs NOTIFY_WEBHOOK_SECRET; a short secret or a non-http URL is refused", () => {
    expect(() => loadConfig({ NOTIFY_WEBHOOK_URL: "https://sms.example/hook" })).toThrow(/NOTIFY_WEBHOOK_SECRET: required/);
    expect(() => loadConfig({ NOTIFY_WEBHOOK_URL: "https://sms.example/hook", NOTIFY_WEBHOOK_SECRET: "short" })).toThrow(ConfigError);
    expect(() => loadConfig({ NOTIFY_WEBHOOK_URL: "https://sms.example/hook", NOTIFY_WEBHOOK_SECRET: "whsec_c2hvcnQ=" })).toThrow(/NOTIFY_WEBHOOK_SECRET/);
    expect(() => loadConfig({ NOTIFY_WEBHOOK_URL: "ftp://sms.example/hook", NOTIFY_WEBHOOK_SECRET: SECRET })).toThrow(/NOTIFY_WEBHOOK_URL/);
    expect(loadConfig({ NOTIFY_WEBHOOK_URL: "https://sms.example/hook", NOTIFY_WEBHOOK_SECRET: SECRET }).NOTIFY_WEBHOOK_URL).toBe("https://sms.example/hook");
    expect(loadConfig({}).NOTIFY_WEBHOOK_URL).toBeUndefined();
  });

  test("the signature is the Standard Webhooks one: a raw-string secret is its own UTF-8 bytes, whsec_ is base64", () => {
    const body = '{"a":1}';
    const raw = "a-raw-secret-of-24-chars!";
    const expected = (key: Buffer) => `v1,${createHmac("sha256", key).update(`msg_1.1700000000.${body}`).digest("base64")}`;
    expect(webhookSignature(raw, "msg_1", 1700000000, body)).toBe(expected(Buffer.from(raw)));
    expect(webhookSignature(SECRET, "msg_1", 1700000000, body)).toBe(expected(Buffer.from(SECRET.slice(6), "base64")));
    expect(verify("msg_1", Math.floor(Date.now() / 1000), body, webhookSignature(SECRET, "msg_1", Math.floor(Date.now() / 1000), body))).toBe(true);
    expect(verify("msg_1", Math.floor(Date.now() / 1000), body, webhookSignature(raw, "msg_1", Math.floor(Date.now() / 1000), body))).toBe(false);
  });
});
