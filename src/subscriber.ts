import pg from "pg";
import { randomUUID } from "node:crypto";
import { logger } from "./logger.ts";
import { listenLag } from "./metrics.ts";
import {
  LISTEN_PROBE_INTERVAL_MS,
  LISTEN_PROBE_TOPIC,
  ORDER_PAYLOADS_SQL,
  orderIdOfTopic,
  orderQueueTopic,
  orderStatusTopic,
  orderTopic,
  storeIdOfQueueTopic,
  type Delivery,
  type DeliveryScope,
  type SharingSubscriber,
} from "../common/topics.ts";

// The LISTEN side of subscriptions. PostGraphile's stock PgSubscriber ends
// every subscription when its connection drops; this one reconnects (with
// backoff), LISTENs again, and then tells each followed order's
// subscribers the order's current state, so events missed during the gap
// collapse into one and nobody has to resubscribe (queue followers get
// each order in the queue once).

interface Waiter {
  resolve(result: IteratorResult<string>): void;
}

// Grafast asks for the next event only once the previous one is answered,
// so the delivery a stream handed out last (recorded in its scope) is the one
// being answered.
class TopicStream implements AsyncIterableIterator<string> {
  private queue: Delivery[] = [];
  private waiters: Waiter[] = [];
  private done = false;
  private readonly onClose: () => void;
  private readonly scope: DeliveryScope;
  constructor(onClose: () => void, scope: DeliveryScope) {
    this.onClose = onClose;
    this.scope = scope;
  }

  push(delivery: Delivery) {
    if (this.done) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(this.handOut(delivery));
    else if (this.queue.length < 1000) this.queue.push(delivery); // a stalled reader must not grow memory without bound
  }

  private handOut(delivery: Delivery): IteratorResult<string> {
    this.scope.delivery = delivery;
    return { value: delivery.payload, done: false };
  }

  next(): Promise<IteratorResult<string>> {
    if (this.queue.length) return Promise.resolve(this.handOut(this.queue.shift()!));
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiters.push({ resolve }));
  }

  return(): Promise<IteratorResult<string>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<string>> {
    this.close();
    return Promise.reject(error);
  }

  close() {
    if (this.done) return;
    this.done = true;
    this.queue = [];
    this.scope.delivery = null;
    for (const w of this.waiters.splice(0)) w.resolve({ value: undefined, done: true });
    this.onClose();
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

/** The LISTEN connection's probe of itself (every LISTEN_PROBE_INTERVAL_MS; cafe_listen_lag_seconds). */
export const LISTEN_PROBE_SQL = "select pg_notify($1, $2) /* listen probe */";

export class ReconnectingPgSubscriber implements SharingSubscriber {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private readonly topics = new Map<string, Set<TopicStream>>();
  private released = false;
  private retryDelayMs = 100;
  /** Reconnections so far (for tests and metrics). */
  reconnects = 0;

  private readonly connectionString: string;
  constructor(connectionString: string) {
    this.connectionString = connectionString;
  }

  private readonly connectedHooks: Array<() => Promise<void>> = [];

  /**
   * Runs `fn` after every (re)connection, once the LISTENs are in place
   * (and now, if connected): for state that missed events must reload.
   */
  onConnected(fn: () => Promise<void>): void {
    this.connectedHooks.push(fn);
    if (this.client) void this.runHook(fn);
  }

  private async runHook(fn: () => Promise<void>) {
    try {
      await fn();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, "reload after the LISTEN connection came back failed");
    }
  }

  /**
   * A round trip on the LISTEN connection. Postgres sends a listener its
   * pending notifications before answering it, so every NOTIFY committed
   * before this call has been delivered when it resolves.
   */
  async flush(): Promise<void> {
    await this.withClient((c) => this.run(c, "select 1"));
  }

  /** Channels currently LISTENed to. */
  get listeningTopics(): string[] {
    return [...this.topics.keys()];
  }

  /** `scope` (plugins/SubscriptionsPlugin.ts) learns which delivery the stream handed out last. */
  subscribe(topic: string, scope: DeliveryScope = { delivery: null }): AsyncIterableIterator<string> {
    const stream: TopicStream = new TopicStream(() => this.unsubscribe(topic, stream), scope);
    let set = this.topics.get(topic);
    if (!set) {
      set = new Set();
      this.topics.set(topic, set);
      void this.withClient((c) => this.run(c, `listen ${pg.escapeIdentifier(topic)}`)).catch(() => {});
    }
    set.add(stream);
    return stream;
  }

  private unsubscribe(topic: string, stream: TopicStream) {
    const set = this.topics.get(topic);
    if (!set) return;
    set.delete(stream);
    if (set.size === 0) {
      this.topics.delete(topic);
      if (this.client) void this.run(this.client, `unlisten ${pg.escapeIdentifier(topic)}`).catch(() => {});
    }
  }

  private chain: Promise<unknown> = Promise.resolve();

  /** One statement at a time on the LISTEN connection. */
  private run(client: pg.Client, text: string, values?: unknown[]) {
    const next = this.chain.then(() => client.query(text, values));
    this.chain = next.catch(() => {});
    return next;
  }

  private async withClient(fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
    if (!this.client) await this.connect();
    if (this.client) await fn(this.client);
  }

  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      while (!this.released) {
        const client = new pg.Client({ connectionString: this.connectionString, keepAlive: true });
        try {
          client.on("error", (err) => this.lost(client, err));
          client.on("end", () => this.lost(client, null));
          await client.connect();
          client.on("notification", (n) => this.deliver(n.channel, n.payload ?? ""));
          // Reads current order states after a reconnect; LISTEN needs no privilege.
          this.chain = Promise.resolve();
          await this.run(client, "set role cafe_system");
          for (const topic of this.topics.keys()) await this.run(client, `listen ${pg.escapeIdentifier(topic)}`);
          await this.run(client, `listen ${pg.escapeIdentifier(LISTEN_PROBE_TOPIC)}`);
          const wasReconnect = this.reconnects > 0 || this.retryDelayMs > 100;
          this.client = client;
          this.retryDelayMs = 100;
          if (wasReconnect) await this.resync(client);
          for (const fn of this.connectedHooks) await this.runHook(fn);
          return;
        } catch (err) {
          await client.end().catch(() => {});
          logger.warn({ err: (err as Error).message, retryInMs: this.retryDelayMs }, "LISTEN connection failed; retrying");
          await new Promise((r) => setTimeout(r, this.retryDelayMs));
          this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5000);
        }
      }
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private lost(client: pg.Client, err: Error | null) {
    if (this.client !== client) return;
    this.client = null;
    if (this.released) return;
    this.reconnects++;
    logger.warn({ err: err?.message }, "LISTEN connection lost; reconnecting");
    void this.connect();
  }

  /** Whether the LISTEN connection is up (cafe_listen_connected). */
  get connected(): boolean {
    return this.client !== null;
  }

  // LISTEN lag (cafe_listen_lag_seconds): a NOTIFY of this process's own,
  // sent on the LISTEN connection every LISTEN_PROBE_INTERVAL_MS, timed
  // from its sending to its delivery here (one clock: this process's).
  private readonly instance = randomUUID();
  private readonly probe = setInterval(() => {
    const client = this.client;
    if (client) void this.run(client, LISTEN_PROBE_SQL, [LISTEN_PROBE_TOPIC, `${this.instance}:${performance.now()}`]).catch(() => {});
  }, LISTEN_PROBE_INTERVAL_MS).unref();

  private deliver(topic: string, payload: string) {
    if (topic === LISTEN_PROBE_TOPIC) {
      const [instance, sent] = payload.split(":");
      if (instance === this.instance) listenLag.observe((performance.now() - Number(sent)) / 1000);
      return;
    }
    const set = this.topics.get(topic);
    if (!set) return;
    const delivery: Delivery = { payload, shared: new Map() };
    for (const stream of set) stream.push(delivery);
  }

  /** After a gap: one event per followed order, with its state now; queue followers get the queue as it is now. */
  private async resync(client: pg.Client) {
    const ids = new Set<string>();
    for (const topic of this.topics.keys()) {
      const id = orderIdOfTopic(topic);
      if (id) ids.add(id);
    }
    if (ids.size > 0) {
      const { rows } = (await this.run(
        client,
        `select o.id, ${ORDER_PAYLOADS_SQL.order} as "order", ${ORDER_PAYLOADS_SQL.orderStatus} as status from app_public.orders o where o.id = any($1::uuid[])`,
        [[...ids]],
      )) as pg.QueryResult<{ id: string; order: string; status: string }>;
      for (const row of rows) {
        this.deliver(orderTopic(row.id), row.order);
        this.deliver(orderStatusTopic(row.id), row.status);
      }
      logger.info({ orders: rows.length }, "LISTEN connection back; sent current order states");
    }
    const stores = [...this.topics.keys()].map(storeIdOfQueueTopic).filter((id): id is string => id !== null);
    if (stores.length > 0) {
      const { rows } = (await this.run(
        client,
        `select o.store_id::text as store, ${ORDER_PAYLOADS_SQL.orderQueue} as payload from app_public.orders o
          where o.store_id = any($1::uuid[]) and o.status in ('PAID', 'PREPARING', 'BREWING', 'READY') order by o.time_ordered, o.id`,
        [stores],
      )) as pg.QueryResult<{ store: string; payload: string }>;
      for (const row of rows) this.deliver(orderQueueTopic(row.store), row.payload);
      logger.info({ orders: rows.length, stores: stores.length }, "LISTEN connection back; sent the queues as they are");
    }
  }

  release(): void {
    this.released = true;
    clearInterval(this.probe);
    for (const set of this.topics.values()) for (const s of [...set]) s.close();
    this.topics.clear();
    const client = this.client;
    this.client = null;
    if (client) void client.end().catch(() => {});
  }
}
