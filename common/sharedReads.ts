import type { PgClient, PgClientQuery, WithPgClient } from "postgraphile/@dataplan/pg";
import type { DeliveryScope } from "./topics.ts";
import { heldTransaction, type HeldTransaction } from "./heldTransaction.ts";

// One re-read per event for subscribers who would see the same thing.
//
// Each subscription event is read again from Postgres under the
// subscriber's role (plugins/SubscriptionsPlugin.ts). With a thousand subscribers
// of one order that is a thousand identical transactions (BEGIN, set_config,
// SELECT, COMMIT) per event. Here the statements Grafast's PgExecutor sends
// while answering one delivery (one NOTIFY, src/subscriber.ts) are shared by
// every subscriber whose answer would be the same: same statement, same
// values, and same visibility. Each shared read starts after the delivery
// arrived, so it sees at least the change that was announced, as the
// subscriber's own read would have; the next delivery starts afresh.
//
// Same visibility:
// - customers (and anyone not staff): byte-identical pgSettings (role, user
//   id, sign-in id), so RLS that depends on the user decides, per user;
// - staff too: what they see depends on the stores they work at
//   (app_public.staff_store_ids() in the policies of every store-scoped
//   table), so two baristas share only when their pgSettings are the same:
//   one member of staff's sockets share, two stores' baristas never do.

type PgSettings = Record<string, string | undefined> | null;

/** Who shares `text`'s result: the pgSettings that can make a difference to it (all of them). */
export function visibilityKey(pgSettings: PgSettings, _text: string): string {
  return JSON.stringify(pgSettings ?? {});
}

/** A PgExecutor read (rows as arrays, a SELECT): the only statements shared. */
const shareable = (q: PgClientQuery) => q.arrayMode === true && /^\s*select\b/i.test(q.text);

/**
 * `withPgClient` for one subscription: while it answers a delivery (the
 * one `scope` holds), shareable statements go through the delivery's
 * `shared` map; anything else runs as it would have, in one transaction
 * per callback with the subscriber's own pgSettings.
 */
export function sharingWithPgClient(real: WithPgClient, scope: DeliveryScope): WithPgClient {
  return async <T>(pgSettings: PgSettings, callback: (client: PgClient) => T | Promise<T>): Promise<T> => {
    const delivery = scope.delivery;
    if (!delivery) return real(pgSettings, callback);
    let own: HeldTransaction | null = null;
    const ownClient = () => (own ??= heldTransaction(real, pgSettings)).client;
    const client: PgClient = {
      query<TData>(q: PgClientQuery) {
        if (!shareable(q)) return ownClient().then((c) => c.query<TData>(q));
        const key = `${visibilityKey(pgSettings, q.text)}\n${q.text}\n${JSON.stringify(q.values ?? [])}`;
        let result = delivery.shared.get(key) as ReturnType<PgClient["query"]> | undefined;
        if (!result) {
          result = real(pgSettings, (c) => c.query(q));
          delivery.shared.set(key, result);
        }
        // Each subscriber gets its own list (the rows themselves are only read).
        return result.then((r) => ({ ...r, rows: r.rows.slice() as TData[] }));
      },
      withTransaction(fn) {
        return ownClient().then((c) => c.withTransaction(fn as never));
      },
    };
    let value: T;
    try {
      value = await callback(client);
    } catch (error) {
      await (own as HeldTransaction | null)?.end(error ?? new Error("failed"));
      throw error;
    }
    await (own as HeldTransaction | null)?.end();
    return value;
  };
}
