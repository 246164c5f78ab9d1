import { randomUUID } from "node:crypto";
import jwt from "jsonwebtoken";
import WebSocket from "ws";
import { DEMO, type DemoUser, errorsOf, gql, subscribe, wsClient } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { waitForListen } from "../support/db.ts";
import { percentile, say } from "../support/figures.ts";
import { placeOrder, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { ChildService, listenChannels, listenerPid, listening, openStreams, startTestService, useTestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// Subscriptions over graphql-ws on /graphql, against the real server, a real
// socket and real LISTEN/NOTIFY: TrackOrder (orderUpdated) and StatusFeed
// (orderStatusChanged) from the mobile app, NewOnMenu (newCoffee) from the
// admin dashboard. Who may follow what, the connection's token (4403 for a
// bad one, UNAUTHENTICATED at expiry), a second API process on the same
// database, clean-up of LISTEN channels and connections, and delivery latency.

const MOBILE = operationsOf("mobile");
const ADMIN = operationsOf("admin");
const BARISTA = operationsOf("barista");

const TRACK_ORDER = { doc: MOBILE, op: "TrackOrder" };
const STATUS_FEED = { doc: MOBILE, op: "StatusFeed" };
const NEW_ON_MENU = { doc: ADMIN, op: "NewOnMenu" };

let tokens: Record<DemoUser, string>;
let coffee: StockedCoffee;
let baristaName: string;
let adminName: string;
let coffeesAtStart: string[];

// Put the shared test database back: this file's orders, coffees and their ingredients go.
const t = useTestService({
  deleteNewOrders: true,
  async cleanup() {
    const { rows } = await t.db.query("delete from app_public.coffees where not (id = any($1::uuid[])) returning id", [coffeesAtStart]);
    expect(rows.length).toBeGreaterThan(0);
    await t.db.query("delete from app_public.ingredients where id = $1", [coffee.ingredientId]);
  },
});

beforeAll(async () => {
  coffeesAtStart = (await t.db.query("select id from app_public.coffees")).rows.map((r) => r.id);
  tokens = await t.tokens();
  coffee = await stockedCoffee(t, "Subs", "3.20", 10);
  const { rows } = await t.db.query("select id, name from app_public.baristas where id = any($1)", [[DEMO.barista.id, DEMO.admin.id]]);
  baristaName = rows.find((r) => r.id === DEMO.barista.id).name;
  adminName = rows.find((r) => r.id === DEMO.admin.id).name;
});

const newOrder = (user: "alice" | "bob" = "alice", quantity = 1) => placeOrder(t, tokens[user], [{ coffeeId: coffee.id, quantity }]);
const advance = (id: string, status: string, token = tokens.barista) => t.gql(BARISTA, { operationName: "Advance", variables: { id, status }, token });
const dbSetStatus = (id: string, status: string) => t.db.query("update app_public.orders set status = $2 where id = $1", [id, status]);
const orderTopics = (id: string) => [`order:${id}`, `order_status:${id}`];

/** A new order of alice's, followed by her with TrackOrder and StatusFeed on one socket, both listening. */
async function followNewOrder() {
  const order = await newOrder("alice");
  const client = t.ws(tokens.alice);
  const track = subscribe(client, TRACK_ORDER.doc, { id: order.id }, TRACK_ORDER.op);
  const feed = subscribe(client, STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
  await listening(t, orderTopics(order.id));
  return { order, client, track, feed };
}

function ok(r: { body: { data?: any; errors?: any[] } }) {
  expect(r.body.errors).toBeUndefined();
  return r.body.data;
}

/** The estimated ready time the API serves for an order (as TrackOrder selects it). */
async function servedOrder(id: string, token = tokens.alice) {
  const r = await t.gql(`query($id: ID!) { order(id: $id) { id status estimatedReadyTime barista { name } } }`, { variables: { id }, token });
  return ok(r).order;
}

describe("TrackOrder and StatusFeed: a customer follows her own new order", () => {
  test("every change arrives in order: payment (SQL), barista's updateOrderStatus, a DBA's raw UPDATE; messages and barista as they were", async () => {
    const { order, track, feed } = await followNewOrder();

    const steps: Array<{ status: string; message: string; barista: string | null; act: () => Promise<unknown> }> = [
      { status: "PAID", message: "Payment received", barista: null, act: () => dbSetStatus(order.id, "PAID") },
      { status: "PREPARING", message: "Preparing", barista: null, act: async () => ok(await advance(order.id, "PREPARING")) },
      { status: "BREWING", message: "Brewing", barista: baristaName, act: async () => ok(await advance(order.id, "BREWING")) },
      { status: "READY", message: "Ready for pickup", barista: baristaName, act: () => dbSetStatus(order.id, "READY") },
      { status: "COMPLETED", message: "Completed", barista: baristaName, act: async () => ok(await advance(order.id, "COMPLETED")) },
    ];
    for (const [i, step] of steps.entries()) {
      await step.act();
      await Promise.all([feed.waitFor(i + 1), track.waitFor(i + 1)]);
      expect(errorsOf(feed)).toEqual([]);
      expect(errorsOf(track)).toEqual([]);
      expect({ step: step.status, event: feed.results[i] }).toEqual({
        step: step.status,
        event: { data: { orderStatusChanged: { status: step.status, message: step.message, barista: step.barista ? { name: step.barista } : null } } },
      });
      const served = await servedOrder(order.id);
      expect({ step: step.status, event: track.results[i] }).toEqual({
        step: step.status,
        event: {
          data: {
            orderUpdated: { id: order.id, status: step.status, estimatedReadyTime: served.estimatedReadyTime, barista: step.barista ? { name: step.barista } : null },
          },
        },
      });
    }
    // One event a change, no more.
    await sleep(400);
    expect(feed.results).toHaveLength(steps.length);
    expect(track.results).toHaveLength(steps.length);
    expect(feed.completed).toBe(false);
    expect(track.completed).toBe(false);
    feed.dispose();
    track.dispose();
  });

  test("changes in quick succession: StatusFeed still reports every step in order; TrackOrder one event a change, ending with the last state", async () => {
    const { order, track, feed } = await followNewOrder();

    await dbSetStatus(order.id, "PAID");
    ok(await advance(order.id, "PREPARING"));
    ok(await advance(order.id, "BREWING"));
    await dbSetStatus(order.id, "READY");
    ok(await advance(order.id, "COMPLETED"));

    await Promise.all([feed.waitFor(5), track.waitFor(5)]);
    expect(feed.results.map((r) => r.data?.orderStatusChanged)).toEqual([
      { status: "PAID", message: "Payment received", barista: null },
      { status: "PREPARING", message: "Preparing", barista: null },
      { status: "BREWING", message: "Brewing", barista: { name: baristaName } },
      { status: "READY", message: "Ready for pickup", barista: { name: baristaName } },
      { status: "COMPLETED", message: "Completed", barista: { name: baristaName } },
    ]);
    const order_ = ["PENDING", "PAID", "PREPARING", "BREWING", "READY", "COMPLETED"];
    const seen = track.results.map((r) => r.data?.orderUpdated?.status as string);
    expect(seen).toHaveLength(5);
    expect(seen.every((s, i) => i === 0 || order_.indexOf(s) >= order_.indexOf(seen[i - 1]!))).toBe(true);
    expect(seen[seen.length - 1]).toBe("COMPLETED");
    feed.dispose();
    track.dispose();
  });

  test("only the selected fields arrive", async () => {
    const order = await newOrder("alice");
    const client = t.ws(tokens.alice);
    const streamsBefore = openStreams(t);
    const narrowFeed = subscribe(client, `subscription($o: ID!) { orderStatusChanged(orderId: $o) { status } }`, { o: order.id });
    const narrowTrack = subscribe(client, `subscription($o: ID!) { orderUpdated(id: $o) { status } }`, { o: order.id });
    const wideFeed = subscribe(client, `subscription($o: ID!) { orderStatusChanged(orderId: $o) { orderId status message barista { id name } } }`, { o: order.id });
    const track = subscribe(client, TRACK_ORDER.doc, { id: order.id }, TRACK_ORDER.op);
    await listening(t, orderTopics(order.id));
    // The topics are LISTENed once the first subscription holds them; wait for all four streams.
    await waitUntil("four open streams", () => openStreams(t) >= streamsBefore + 4);
    await dbSetStatus(order.id, "PAID");
    await Promise.all([narrowFeed.waitFor(1), narrowTrack.waitFor(1), wideFeed.waitFor(1), track.waitFor(1)]);

    expect(narrowFeed.results[0]).toStrictEqual({ data: { orderStatusChanged: { status: "PAID" } } });
    expect(narrowTrack.results[0]).toStrictEqual({ data: { orderUpdated: { status: "PAID" } } });
    expect(wideFeed.results[0]).toStrictEqual({ data: { orderStatusChanged: { orderId: order.id, status: "PAID", message: "Payment received", barista: null } } });
    expect(Object.keys(track.results[0]!.data.orderUpdated).sort()).toEqual(["barista", "estimatedReadyTime", "id", "status"]);
    // No extensions or other top-level keys either.
    for (const s of [narrowFeed, narrowTrack, wideFeed, track]) expect(Object.keys(s.results[0]!)).toEqual(["data"]);
    for (const s of [narrowFeed, narrowTrack, wideFeed, track]) s.dispose();
  });

  test("an id is an id however it is written: the upper-case form of the order's UUID receives the events", async () => {
    const order = await newOrder("alice");
    const upper = order.id.toUpperCase();
    expect(upper).not.toBe(order.id);
    const client = t.ws(tokens.alice);
    const feed = subscribe(client, STATUS_FEED.doc, { orderId: upper }, STATUS_FEED.op);
    const track = subscribe(client, `subscription($id: ID!) { orderUpdated(id: $id) { id status } }`, { id: upper });
    // Both listen on the canonical topics, the ones the triggers publish on.
    await listening(t, orderTopics(order.id));
    await dbSetStatus(order.id, "PAID");
    await Promise.all([feed.waitFor(1), track.waitFor(1)]);
    expect(errorsOf(feed)).toEqual([]);
    expect(feed.results.map((r) => r.data?.orderStatusChanged?.status)).toEqual(["PAID"]);
    expect(track.results.map((r) => r.data?.orderUpdated)).toEqual([{ id: order.id, status: "PAID" }]);
    // Lookups and mutations take it too, and answer the canonical form.
    const read = await t.gql(`query($id: ID!) { order(id: $id) { id } }`, { variables: { id: upper }, token: tokens.alice });
    expect(read.body).toEqual({ data: { order: { id: order.id } }, extensions: expect.anything() });
    const cancel = await t.gql(`mutation($id: ID!) { cancelOrder(id: $id) }`, { variables: { id: upper }, token: tokens.alice });
    expect(cancel.body.data).toEqual({ cancelOrder: true });
    await feed.waitFor(2);
    expect(feed.results.map((r) => r.data?.orderStatusChanged?.status)).toEqual(["PAID", "CANCELLED"]);
    feed.dispose();
    track.dispose();
  });

  test("TrackOrder also reports a change of the order's other fields (no status change): StatusFeed stays quiet", async () => {
    const { order, track, feed } = await followNewOrder();
    const later = new Date(Date.now() + 3_600_000);
    later.setMilliseconds(0);
    await t.db.query("update app_public.orders set estimated_ready_time = $2 where id = $1", [order.id, later]);
    await track.waitFor(1);
    expect(errorsOf(track)).toEqual([]);
    expect(track.results[0]!.data.orderUpdated).toMatchObject({ id: order.id, status: "PENDING" });
    expect(new Date(track.results[0]!.data.orderUpdated.estimatedReadyTime).getTime()).toBe(later.getTime());
    await sleep(300);
    expect(feed.results).toHaveLength(0);
    track.dispose();
    feed.dispose();
  });
});

describe("NewOnMenu", () => {
  test("admin, a customer and an anonymous client all receive a coffee created by AddCoffee, with the selected fields", async () => {
    const adminSub = subscribe(t.ws(tokens.admin), NEW_ON_MENU.doc, {}, NEW_ON_MENU.op);
    const anonSub = subscribe(t.ws(null), NEW_ON_MENU.doc, {}, NEW_ON_MENU.op);
    const aliceSub = subscribe(t.ws(tokens.alice), `subscription { newCoffee { name } }`);
    await listening(t, ["coffee:new"]);
    // listening() sees the topic once the first subscriber is in: give the others a moment.
    await sleep(200);

    const name = `Subscribed Brew ${Date.now().toString(36)}`;
    const created = ok(await t.gql(ADMIN, { operationName: "AddCoffee", variables: { name, price: 4.25 }, token: tokens.admin })).createCoffee;
    expect(created).toMatchObject({ name, price: 4.25 });

    for (const sub of [adminSub, anonSub, aliceSub]) await waitUntil("the new coffee", () => sub.results.some((r) => r.data?.newCoffee?.name === name), 5000);
    const mine = (sub: typeof adminSub) => sub.results.filter((r) => r.data?.newCoffee?.name === name);
    expect(mine(adminSub)).toStrictEqual([{ data: { newCoffee: { id: created.id, name, price: 4.25 } } }]);
    expect(mine(anonSub)).toStrictEqual([{ data: { newCoffee: { id: created.id, name, price: 4.25 } } }]);
    expect(mine(aliceSub)).toStrictEqual([{ data: { newCoffee: { name } } }]);
    for (const sub of [adminSub, anonSub, aliceSub]) expect(errorsOf(sub)).toEqual([]);
    // Repricing is not a new coffee.
    const before = adminSub.results.length;
    ok(await t.gql(ADMIN, { operationName: "Reprice", variables: { id: created.id, newPrice: 4.5 }, token: tokens.admin }));
    await sleep(300);
    expect(adminSub.results).toHaveLength(before);
    for (const sub of [adminSub, anonSub, aliceSub]) sub.dispose();
  });
});

describe("who may follow an order", () => {
  test("alice subscribing to bob's order gets NOT_FOUND (both subscriptions), nothing is LISTENed to, and bob's changes never reach her", async () => {
    const bobs = await newOrder("bob");
    const client = t.ws(tokens.alice);
    const track = subscribe(client, TRACK_ORDER.doc, { id: bobs.id }, TRACK_ORDER.op);
    const feed = subscribe(client, STATUS_FEED.doc, { orderId: bobs.id }, STATUS_FEED.op);
    const demo = subscribe(client, TRACK_ORDER.doc, { id: DEMO.bobPendingOrder }, TRACK_ORDER.op);
    for (const s of [track, feed, demo]) await waitUntil("an error", () => errorsOf(s).length > 0 || s.completed, 5000);
    for (const s of [track, feed, demo]) {
      const errors = errorsOf(s);
      expect(errors.map((e) => e.extensions?.code)).toEqual(["NOT_FOUND"]);
      expect(s.results.filter((r) => r.data && Object.values(r.data).some((v) => v !== null))).toEqual([]);
    }
    expect(t.service.api!.subscriber.listeningTopics).not.toContain(`order:${bobs.id}`);
    expect(t.service.api!.subscriber.listeningTopics).not.toContain(`order_status:${bobs.id}`);
    await dbSetStatus(bobs.id, "PAID");
    await sleep(300);
    for (const s of [track, feed, demo]) expect(s.results.filter((r) => r.data?.orderUpdated || r.data?.orderStatusChanged)).toEqual([]);
  });

  test("an order that does not exist is NOT_FOUND; a malformed id is refused without data", async () => {
    const client = t.ws(tokens.alice);
    const missing = subscribe(client, STATUS_FEED.doc, { orderId: "0f8fad5b-d9cb-469f-a165-70867728950e" }, STATUS_FEED.op);
    const malformed = subscribe(client, STATUS_FEED.doc, { orderId: "not-a-uuid" }, STATUS_FEED.op);
    for (const s of [missing, malformed]) await waitUntil("an error", () => errorsOf(s).length > 0 || s.completed, 5000);
    expect(errorsOf(missing).map((e) => e.extensions?.code)).toEqual(["NOT_FOUND"]);
    expect(["NOT_FOUND", "BAD_USER_INPUT"]).toContain(errorsOf(malformed)[0]?.extensions?.code);
    expect(malformed.results.filter((r) => r.data?.orderStatusChanged)).toEqual([]);
  });

  test("anonymous: orderUpdated and orderStatusChanged are UNAUTHENTICATED, even for an order that exists", async () => {
    const order = await newOrder("alice");
    const client = t.ws(null);
    const track = subscribe(client, TRACK_ORDER.doc, { id: order.id }, TRACK_ORDER.op);
    const feed = subscribe(client, STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
    for (const s of [track, feed]) await waitUntil("an error", () => errorsOf(s).length > 0 || s.completed, 5000);
    for (const s of [track, feed]) {
      expect(errorsOf(s).map((e) => e.extensions?.code)).toEqual(["UNAUTHENTICATED"]);
      expect(s.results.filter((r) => r.data?.orderUpdated || r.data?.orderStatusChanged)).toEqual([]);
    }
    await dbSetStatus(order.id, "PAID");
    await sleep(300);
    for (const s of [track, feed]) expect(s.results.filter((r) => r.data?.orderUpdated || r.data?.orderStatusChanged)).toEqual([]);
  });

  test("staff (barista and admin) may follow any customer's order", async () => {
    const bobs = await newOrder("bob");
    const barista = t.ws(tokens.barista);
    const admin = t.ws(tokens.admin);
    const subs = [
      subscribe(barista, TRACK_ORDER.doc, { id: bobs.id }, TRACK_ORDER.op),
      subscribe(barista, STATUS_FEED.doc, { orderId: bobs.id }, STATUS_FEED.op),
      subscribe(admin, TRACK_ORDER.doc, { id: bobs.id }, TRACK_ORDER.op),
      subscribe(admin, STATUS_FEED.doc, { orderId: bobs.id }, STATUS_FEED.op),
    ];
    await listening(t, orderTopics(bobs.id));
    await sleep(100);
    // Each change is seen by every subscriber before the next one is made:
    // orderUpdated reads the order when its event arrives, so two subscribers
    // could otherwise read it at different steps.
    await dbSetStatus(bobs.id, "PAID");
    for (const s of subs) await s.waitFor(1);
    ok(await advance(bobs.id, "PREPARING", tokens.admin));
    for (const s of subs) await s.waitFor(2);
    ok(await advance(bobs.id, "BREWING", tokens.admin));
    for (const s of subs) await s.waitFor(3);
    for (const s of subs) expect(errorsOf(s)).toEqual([]);
    expect(subs[1]!.results.map((r) => r.data?.orderStatusChanged)).toEqual([
      { status: "PAID", message: "Payment received", barista: null },
      { status: "PREPARING", message: "Preparing", barista: null },
      { status: "BREWING", message: "Brewing", barista: { name: adminName } },
    ]);
    expect(subs[3]!.results).toEqual(subs[1]!.results);
    expect(subs[0]!.results.at(-1)!.data.orderUpdated).toMatchObject({ id: bobs.id, status: "BREWING", barista: { name: adminName } });
    expect(subs[2]!.results).toEqual(subs[0]!.results);
    for (const s of subs) s.dispose();
  });
});

describe("the connection's token", () => {
  /** Opens a raw graphql-transport-ws socket, sends connection_init with `payload`, and reports how it ended. */
  function rawInit(payload: unknown): Promise<{ code: number; reason: string; messages: any[] }> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(t.wsUrl, "graphql-transport-ws");
      const messages: any[] = [];
      const timer = setTimeout(() => {
        socket.terminate();
        resolve({ code: -1, reason: "still open after 5 s", messages });
      }, 5000);
      socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload })));
      socket.on("message", (m) => {
        const msg = JSON.parse(m.toString());
        messages.push(msg);
        if (msg.type === "connection_ack") {
          clearTimeout(timer);
          socket.close(1000);
          resolve({ code: 0, reason: "acknowledged", messages });
        }
      });
      socket.on("close", (code, reason) => {
        clearTimeout(timer);
        resolve({ code, reason: reason.toString(), messages });
      });
      socket.on("error", reject);
    });
  }

  test("a bad token in connection_init closes the socket with 4403", async () => {
    const wrongSecret = jwt.sign({ role: "customer", user_id: DEMO.alice.id }, "x".repeat(40), { algorithm: "HS256", audience: "cafe-api", expiresIn: 600 });
    const expired = jwt.sign({ role: "customer", user_id: DEMO.alice.id, exp: Math.floor(Date.now() / 1000) - 60 }, t.config.JWT_SECRET, {
      algorithm: "HS256",
      audience: "cafe-api",
    });
    for (const authorization of ["Bearer nonsense", `Bearer ${wrongSecret}`, `Bearer ${expired}`, "Basic YWxpY2U6Y29mZmVl"]) {
      const end = await rawInit({ authorization });
      expect({ authorization: authorization.slice(0, 20), code: end.code, acked: end.messages.some((m) => m.type === "connection_ack") }).toEqual({
        authorization: authorization.slice(0, 20),
        code: 4403,
        acked: false,
      });
    }
  });

  test("a good token is acknowledged, whatever the case of the payload's key; no token is anonymous", async () => {
    expect((await rawInit({ authorization: `Bearer ${tokens.alice}` })).code).toBe(0);
    expect((await rawInit({ Authorization: `Bearer ${tokens.alice}` })).code).toBe(0);
    expect((await rawInit({})).code).toBe(0);

    // The capitalised key really signs alice in: she may follow her own order.
    const order = await newOrder("alice");
    const { createClient } = await import("graphql-ws");
    const client = createClient({ url: t.wsUrl, webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${tokens.alice}` }, retryAttempts: 0, lazy: true });
    try {
      const feed = subscribe(client, STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
      await listening(t, [`order_status:${order.id}`]);
      await dbSetStatus(order.id, "PAID");
      await feed.waitFor(1);
      expect(errorsOf(feed)).toEqual([]);
      expect(feed.results[0]!.data.orderStatusChanged.status).toBe("PAID");
    } finally {
      await client.dispose();
    }
  });

  test("a token that expires ends its open subscriptions with an UNAUTHENTICATED error; later changes are not delivered", async () => {
    const order = await newOrder("alice");
    const shortLived = jwt.sign({ role: "customer", user_id: DEMO.alice.id, sid: randomUUID() }, t.config.JWT_SECRET, { algorithm: "HS256", audience: "cafe-api", expiresIn: 2 });
    const issuedAt = Date.now();
    const client = t.ws(shortLived);
    const feed = subscribe(client, STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
    const track = subscribe(client, TRACK_ORDER.doc, { id: order.id }, TRACK_ORDER.op);
    await listening(t, orderTopics(order.id));
    // Live while the token is valid.
    await dbSetStatus(order.id, "PAID");
    await Promise.all([feed.waitFor(1), track.waitFor(1)]);
    expect(feed.results[0]!.data.orderStatusChanged.status).toBe("PAID");
    expect(track.results[0]!.data.orderUpdated.status).toBe("PAID");

    for (const s of [feed, track]) await waitUntil("the subscription to end", () => s.completed || s.error, 6000, 25);
    const endedAfter = Date.now() - issuedAt;
    for (const s of [feed, track]) {
      const errors = errorsOf(s);
      expect(errors.map((e) => e.extensions?.code)).toEqual(["UNAUTHENTICATED"]);
    }
    // Not before the token's expiry (1 s granularity of exp).
    expect(endedAfter).toBeGreaterThanOrEqual(900);
    const count = feed.results.length;
    ok(await advance(order.id, "PREPARING"));
    await sleep(400);
    expect(feed.results).toHaveLength(count);
    expect(feed.results.filter((r) => r.data?.orderStatusChanged?.status === "PREPARING")).toEqual([]);
    expect(track.results.filter((r) => r.data?.orderUpdated?.status === "PREPARING")).toEqual([]);
  });
});

type Sub = ReturnType<typeof subscribe<any>>;

/**
 * Through this process (t): pays the order (in SQL), moves it to PREPARING
 * and BREWING, and adds a coffee; then the status feed, the order's updates
 * and the new-coffee feed (on another process) must have delivered them.
 */
async function changeHereAndExpect(
  orderId: string,
  { feed, track, menu }: { feed: Sub; track: Sub; menu: Sub },
  { roast, price, where, noErrors = false }: { roast: string; price: number; where: string; noErrors?: boolean },
) {
  await dbSetStatus(orderId, "PAID");
  ok(await advance(orderId, "PREPARING"));
  ok(await advance(orderId, "BREWING"));
  const name = `${roast} Roast ${Date.now().toString(36)}`;
  const created = ok(await t.gql(ADMIN, { operationName: "AddCoffee", variables: { name, price }, token: tokens.admin })).createCoffee;

  await Promise.all([feed.waitFor(3), track.waitFor(3)]);
  await waitUntil(`the coffee on ${where}`, () => menu.results.some((r) => r.data?.newCoffee?.id === created.id), 5000);
  if (noErrors) expect(errorsOf(feed)).toEqual([]);
  expect(feed.results.map((r) => r.data?.orderStatusChanged)).toEqual([
    { status: "PAID", message: "Payment received", barista: null },
    { status: "PREPARING", message: "Preparing", barista: null },
    { status: "BREWING", message: "Brewing", barista: { name: baristaName } },
  ]);
  expect(track.results.at(-1)!.data.orderUpdated).toMatchObject({ id: orderId, status: "BREWING", barista: { name: baristaName } });
  expect(menu.results.find((r) => r.data?.newCoffee?.id === created.id)).toStrictEqual({ data: { newCoffee: { id: created.id, name, price } } });
}

describe("several API processes on one database", () => {
  test("a second API process delivers events for changes made through the first (status feed, order updates, new coffees)", async () => {
    const t2 = await startTestService();
    try {
      const order = await newOrder("alice");
      const aliceOn2 = t2.ws(tokens.alice);
      const feed = subscribe(aliceOn2, STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
      const track = subscribe(aliceOn2, TRACK_ORDER.doc, { id: order.id }, TRACK_ORDER.op);
      const menu = subscribe(t2.ws(null), NEW_ON_MENU.doc, {}, NEW_ON_MENU.op);
      await listening(t2, [...orderTopics(order.id), "coffee:new"]);
      await sleep(100);

      // Changes through the first process only.
      await changeHereAndExpect(order.id, { feed, track, menu }, { roast: "Two Process", price: 3.35, where: "process 2" });

      // And the other way round: followed on the first, changed through the second.
      const feed1 = subscribe(t.ws(tokens.alice), STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
      await listening(t, [`order_status:${order.id}`]);
      ok(await t2.gql(BARISTA, { operationName: "Advance", variables: { id: order.id, status: "READY" }, token: tokens.barista }));
      await feed1.waitFor(1);
      expect(feed1.results[0]!.data.orderStatusChanged).toEqual({ status: "READY", message: "Ready for pickup", barista: { name: baristaName } });
    } finally {
      await t2.stop();
    }
  });
});

describe("a separate API process (its own OS process, as `npm run start:api` runs it)", () => {
  test("it delivers events for changes made through this one, and this one for changes made through it", async () => {
    const other = await ChildService.startApi();
    const clients: Array<{ dispose(): void | Promise<void> }> = [];
    const client = (token: string | null) => {
      const c = wsClient(other.url, token).client;
      clients.push(c);
      return c;
    };
    try {
      const mine = listenerPid(t);
      const exclude = mine ? [mine] : [];
      const order = await newOrder("alice");
      const alice = client(tokens.alice);
      const feed = subscribe(alice, STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
      await waitForListen(`order_status:${order.id}`, { excludePids: exclude });
      const track = subscribe(alice, TRACK_ORDER.doc, { id: order.id }, TRACK_ORDER.op);
      await waitForListen(`order:${order.id}`, { excludePids: exclude });
      const menu = subscribe(client(null), NEW_ON_MENU.doc, {}, NEW_ON_MENU.op);
      await waitForListen("coffee:new", { excludePids: exclude });

      await changeHereAndExpect(order.id, { feed, track, menu }, { roast: "Other Process", price: 3.45, where: "the other process", noErrors: true });

      // The other way round.
      const feedHere = subscribe(t.ws(tokens.alice), STATUS_FEED.doc, { orderId: order.id }, STATUS_FEED.op);
      await listening(t, [`order_status:${order.id}`]);
      const r = await gql(other.url, BARISTA, { operationName: "Advance", variables: { id: order.id, status: "READY" }, token: tokens.barista });
      expect(r.body.errors).toBeUndefined();
      await feedHere.waitFor(1);
      expect(feedHere.results[0]!.data.orderStatusChanged).toEqual({ status: "READY", message: "Ready for pickup", barista: { name: baristaName } });
      feedHere.dispose();
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- the other process logged:\n${other.tail()}`, { cause: e });
    } finally {
      for (const c of clients) await c.dispose();
      await other.stop();
    }
  });
});

describe("clean-up and cost", () => {
  test("50 subscribe/unsubscribe cycles leave no LISTEN channel, topic, stream, pool connection or backend behind", async () => {
    const api = t.service.api!;
    const orders = await Promise.all(Array.from({ length: 10 }, () => newOrder("alice")));
    const backends = async () => Number((await t.db.query("select count(*)::int as n from pg_stat_activity where datname = current_database()")).rows[0].n);
    // Warm the API pool up (a few requests at once), so opening its connections is not counted as growth.
    await Promise.all(Array.from({ length: 4 }, () => t.gql("{ coffees { id } }", { token: tokens.alice })));
    const measure = async () => ({
      topics: api.subscriber.listeningTopics.length,
      streams: openStreams(t),
      channels: (await listenChannels(t))?.length ?? null,
      pool: api.pool.totalCount,
      backends: await backends(),
    });
    const baseline = await measure();

    const peak = { pool: 0, topics: 0, channels: 0, streams: 0 };
    const shared = t.ws(tokens.alice);
    const anonymous = t.ws(null);
    for (let i = 0; i < 50; i++) {
      const o = orders[i % orders.length]!;
      const kind = i % 5;
      if (kind === 4) {
        // A raw socket that subscribes and then drops dead (no complete, no close handshake).
        const socket = new WebSocket(t.wsUrl, "graphql-transport-ws");
        await new Promise<void>((resolve, reject) => {
          socket.on("error", reject);
          socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${tokens.alice}` } })));
          socket.on("message", (m) => {
            const msg = JSON.parse(m.toString());
            if (msg.type === "connection_ack") {
              socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: MOBILE, operationName: "TrackOrder", variables: { id: o.id } } }));
              resolve();
            }
          });
        });
        await listening(t, [`order:${o.id}`]);
        socket.terminate();
      } else if (kind === 3) {
        // A client of its own, disposed (socket closed) while subscribed.
        const own = t.ws(tokens.alice);
        subscribe(own, STATUS_FEED.doc, { orderId: o.id }, STATUS_FEED.op);
        subscribe(own, NEW_ON_MENU.doc, {}, NEW_ON_MENU.op);
        await listening(t, [`order_status:${o.id}`, "coffee:new"]);
        await own.dispose();
      } else {
        // On a shared connection: subscribe, then complete (unsubscribe).
        const sub =
          kind === 0
            ? subscribe(shared, TRACK_ORDER.doc, { id: o.id }, TRACK_ORDER.op)
            : kind === 1
              ? subscribe(shared, STATUS_FEED.doc, { orderId: o.id }, STATUS_FEED.op)
              : subscribe(anonymous, NEW_ON_MENU.doc, {}, NEW_ON_MENU.op);
        await listening(t, [kind === 0 ? `order:${o.id}` : kind === 1 ? `order_status:${o.id}` : "coffee:new"]);
        sub.dispose();
      }
      peak.pool = Math.max(peak.pool, api.pool.totalCount);
      peak.topics = Math.max(peak.topics, api.subscriber.listeningTopics.length);
      peak.streams = Math.max(peak.streams, openStreams(t));
      peak.channels = Math.max(peak.channels, (await listenChannels(t))?.length ?? 0);
    }
    // Unsubscribing is immediate; allow a second for the UNLISTENs and socket closes to land.
    await sleep(1000);
    await (api.subscriber as unknown as { chain?: Promise<unknown> }).chain;
    const after = await measure();
    say(
      `[subscriptions] 50 subscribe/unsubscribe cycles (30 completed on a shared socket, 10 sockets closed, 10 sockets dropped): ` +
        `LISTEN channels of the server's listener ${baseline.channels} -> ${after.channels} (peak ${peak.channels}); ` +
        `subscriber topics ${baseline.topics} -> ${after.topics} (peak ${peak.topics}); open streams ${baseline.streams} -> ${after.streams} (peak ${peak.streams}); ` +
        `API pool ${baseline.pool} -> ${after.pool} (peak ${peak.pool}, max ${t.config.DATABASE_POOL_SIZE}); ` +
        `backends on the database ${baseline.backends} -> ${after.backends}`,
    );
    expect(peak.pool).toBeLessThanOrEqual(t.config.DATABASE_POOL_SIZE);
    expect(after.backends).toBeLessThanOrEqual(baseline.backends + 1);
    expect({ topics: after.topics, streams: after.streams, channels: after.channels }).toEqual({
      topics: baseline.topics,
      streams: baseline.streams,
      channels: baseline.channels,
    });

    // Still working afterwards.
    const fresh = await newOrder("alice");
    const feed = subscribe(shared, STATUS_FEED.doc, { orderId: fresh.id }, STATUS_FEED.op);
    await listening(t, [`order_status:${fresh.id}`]);
    await dbSetStatus(fresh.id, "PAID");
    await feed.waitFor(1);
    expect(feed.results.map((r) => r.data?.orderStatusChanged?.status)).toEqual(["PAID"]);
    feed.dispose();
  });

  test("delivery latency of 50 status changes (printed, not asserted)", async () => {
    const orders = await Promise.all(Array.from({ length: 10 }, () => newOrder("alice")));
    const client = t.ws(tokens.alice);
    const feeds = orders.map((o) => subscribe(client, STATUS_FEED.doc, { orderId: o.id }, STATUS_FEED.op));
    await listening(
      t,
      orders.map((o) => `order_status:${o.id}`),
    );
    await sleep(100);

    const fromReturn: number[] = [];
    const fromSend: number[] = [];
    const steps = ["PAID", "PREPARING", "BREWING", "READY", "COMPLETED"];
    for (const [i, o] of orders.entries()) {
      for (const [j, status] of steps.entries()) {
        const feed = feeds[i]!;
        // Timestamp each arrival as it lands.
        let arrivedAt = 0;
        const target = j + 1;
        const started = performance.now();
        const waiting = feed.waitFor(target, 5000).then(() => (arrivedAt = performance.now()));
        await dbSetStatus(o.id, status);
        const returned = performance.now();
        await waiting;
        expect(feed.results[j]?.data?.orderStatusChanged?.status).toBe(status);
        fromReturn.push(arrivedAt - returned);
        fromSend.push(arrivedAt - started);
      }
    }
    const fmt = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `median ${percentile(s, 50).toFixed(2)} ms, p99 ${percentile(s, 99).toFixed(2)} ms, max ${s[s.length - 1]!.toFixed(2)} ms`;
    };
    say(
      `[subscriptions] latency over ${fromReturn.length} status changes (raw UPDATE -> StatusFeed event at the client): from the UPDATE returning: ${fmt(fromReturn)}; from the UPDATE being sent: ${fmt(fromSend)}`,
    );
    expect(fromReturn).toHaveLength(50);
    for (const f of feeds) f.dispose();
  });
});
