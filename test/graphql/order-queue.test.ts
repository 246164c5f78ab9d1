import { createClient } from "graphql-ws";
import pg from "pg";
import WebSocket from "ws";
import { DEMO, errorsOf, subscribe } from "../support/client.ts";
import { documentsOf } from "../support/contract.ts";
import { testDatabaseUrl, waitForListen } from "../support/db.ts";
import { moveAsDba, orderIn, placeOrder, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { sendCallback } from "../support/paymentProvider.ts";
import { ChildService, listenerPid, listening, useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";
import { orderQueueTopic } from "../../common/topics.ts";

// orderQueueChanged: the barista dashboard follows the whole queue live.
// Real server, a second API process, real graphql-ws sockets and the
// triggers' NOTIFY, whatever changed the order (a signed callback, a DBA's SQL).

const BARISTA = documentsOf("barista");
const ADMIN = documentsOf("admin");
const QUEUE = `subscription Queue { orderQueueChanged { id status total paidAt items { quantity coffee { id } } } }`;

const t = useTestService({ sandbox: true });
let coffee: StockedCoffee;
let tokens: Record<"alice" | "barista" | "admin", string>;

beforeAll(async () => {
  coffee = await stockedCoffee(t, "Queue", "3.20", 1);
  tokens = { alice: await t.token("alice"), barista: await t.token("barista"), admin: await t.token("admin") };
});

type Event = { id: string; status: string; total: number; paidAt: string | null; items: Array<{ quantity: number; coffee: { id: string } }> };
const eventsOf = (sub: ReturnType<typeof subscribe<{ orderQueueChanged: Event }>>, orderId: string) => sub.results.map((r) => r.data?.orderQueueChanged).filter((e): e is Event => e?.id === orderId);

test("an order paid through a signed callback reaches a barista subscribed on another API process, and an admin on this one, within a second", async () => {
  const other = await ChildService.startApi();
  const remote = createClient({
    url: other.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${tokens.barista}` },
    retryAttempts: 0,
    lazy: true,
  });
  try {
    const mine = listenerPid(t);
    const barista = subscribe<{ orderQueueChanged: Event }>(remote, BARISTA, {}, "QueueLive");
    await waitForListen(orderQueueTopic(DEMO.stores.baixa), { excludePids: mine ? [mine] : [] });
    const admin = subscribe<{ orderQueueChanged: Event }>(t.ws(tokens.admin), ADMIN, {}, "AdminQueueLive");
    await listening(t, [orderQueueTopic(DEMO.stores.baixa)]);

    const order = await placeOrder(t, tokens.alice, [{ coffeeId: coffee.id, quantity: 2 }]);
    // A PENDING order is not in the queue yet.
    const paidAt = Date.now();
    const answer = await sendCallback(t, {
      order_id: order.id,
      status: "paid",
      amount: Number(order.total),
      items: [{ product: coffee.id, quantity: 2 }],
      event_id: `evt_queue_${order.id}`,
    });
    expect(answer).toMatchObject({ status: 200, body: { status: "processed" } });

    await waitUntil("the barista's event on the other process", () => eventsOf(barista, order.id).length >= 1, 5000, 10);
    const arrivedAfter = Date.now() - paidAt;
    await waitUntil("the admin's event on this process", () => eventsOf(admin, order.id).length >= 1, 5000, 10);
    expect(arrivedAfter).toBeLessThan(1000);
    expect(eventsOf(barista, order.id)).toEqual([
      expect.objectContaining({ id: order.id, status: "PAID", total: Number(order.total), items: [{ quantity: 2, coffee: { name: coffee.name }, specialInstructions: null }] }),
    ]);
    expect(eventsOf(admin, order.id)).toEqual([expect.objectContaining({ id: order.id, status: "PAID", customer: { name: expect.any(String) } })]);
    for (const sub of [barista, admin]) {
      expect(eventsOf(sub, order.id)[0]!.paidAt).toBeTruthy();
      expect(errorsOf(sub)).toEqual([]);
    }
  } finally {
    await remote.dispose();
    await other.stop();
  }
}, 90_000);

test("customers are FORBIDDEN and anonymous clients UNAUTHENTICATED", async () => {
  const customer = subscribe(t.ws(tokens.alice), QUEUE);
  const anonymous = subscribe(t.ws(null), QUEUE);
  await Promise.all([customer.waitFor(1), anonymous.waitFor(1)]);
  expect(errorsOf(customer).map((e) => e.extensions?.code)).toEqual(["FORBIDDEN"]);
  expect(errorsOf(anonymous).map((e) => e.extensions?.code)).toEqual(["UNAUTHENTICATED"]);
  expect(customer.results.filter((r) => r.data?.orderQueueChanged)).toEqual([]);
});

test("each order's steps arrive in the order they happened, each with its own status, even when a DBA's SQL makes them back to back", async () => {
  const sub = subscribe<{ orderQueueChanged: Event }>(t.ws(tokens.barista), QUEUE);
  await listening(t, [orderQueueTopic(DEMO.stores.baixa)]);
  // Two orders walked through the queue as fast as SQL goes, interleaved.
  const a = await orderIn(t, "PENDING", coffee.id, { quantity: 1 });
  const b = await orderIn(t, "PENDING", coffee.id, { quantity: 3 });
  const unpaid = await orderIn(t, "PENDING", coffee.id);
  for (const s of ["PAID", "PREPARING", "BREWING", "READY", "COMPLETED"] as const) {
    await t.db.query("update app_public.orders set status = $2 where id = $1", [a, s]);
    if (s === "PAID" || s === "PREPARING") await t.db.query("update app_public.orders set status = $2 where id = $1", [b, s]);
  }
  await t.db.query("update app_public.orders set status = 'CANCELLED' where id = $1", [b]); // cancelled after payment: leaves the queue
  await moveAsDba(t, unpaid, "CANCELLED"); // never paid: never in the queue

  await waitUntil("8 events", () => eventsOf(sub, a).length + eventsOf(sub, b).length >= 8, 5000, 10);
  await new Promise((r) => setTimeout(r, 300)); // nothing more may come
  expect(eventsOf(sub, a).map((e) => e.status)).toEqual(["PAID", "PREPARING", "BREWING", "READY", "COMPLETED"]);
  expect(eventsOf(sub, b).map((e) => e.status)).toEqual(["PAID", "PREPARING", "CANCELLED"]);
  expect(eventsOf(sub, b)[0]!.items).toEqual([{ quantity: 3, coffee: { id: coffee.id } }]);
  expect(eventsOf(sub, unpaid)).toEqual([]);
  expect(errorsOf(sub)).toEqual([]);
});

test("when the LISTEN connection drops, it comes back and queue followers get each queued order once, as it is now", async () => {
  const sub = subscribe<{ orderQueueChanged: Event }>(t.ws(tokens.barista), QUEUE);
  await listening(t, [orderQueueTopic(DEMO.stores.baixa)]);
  const queued = await orderIn(t, "PREPARING", coffee.id, { quantity: 2 });
  const done = await orderIn(t, "COMPLETED", coffee.id);
  await waitUntil("the order's two steps", () => eventsOf(sub, queued).length >= 2, 5000, 10);
  const before = t.service.api!.subscriber.reconnects;
  const pid = listenerPid(t);
  expect(pid).not.toBeNull();
  const su = new pg.Client({ connectionString: testDatabaseUrl() });
  await su.connect();
  await su.query("select pg_terminate_backend($1)", [pid]);
  await su.end();
  await waitUntil("a reconnection", () => t.service.api!.subscriber.reconnects > before, 10_000, 20);
  await waitUntil("the queued order again", () => eventsOf(sub, queued).length >= 3, 10_000, 20);
  expect(eventsOf(sub, queued).map((e) => e.status)).toEqual(["PAID", "PREPARING", "PREPARING"]);
  expect(eventsOf(sub, done).map((e) => e.status)).toEqual(["PAID", "PREPARING", "BREWING", "READY", "COMPLETED"]); // left the queue: not sent again
  expect(errorsOf(sub)).toEqual([]);
}, 30_000);
