import type { PgClient, WithPgClient } from "postgraphile/@dataplan/pg";

export interface HeldTransaction {
  /** The transaction's client, once it is open. */
  readonly client: Promise<PgClient>;
  /**
   * Commits (or, given an error, rolls back) and waits for it; fails when the
   * commit does. With `then`, after a successful commit, runs `then` on the
   * same connection in a transaction of its own with the same settings: the
   * COMMIT and the new BEGIN and settings go in one round trip, and no other
   * connection is taken from the pool.
   */
  end(error?: unknown, then?: (client: PgClient) => Promise<unknown>): Promise<void>;
}

type PgSettings = Record<string, string | undefined> | null;
type BaseClient = PgClient & { rawClient?: { escapeLiteral?(s: string): string; query?(text: string): Promise<{ command?: string } | Array<{ command?: string }>> } };

/**
 * BEGIN and the settings in one round trip (PostGraphile's adaptor sends
 * them as two): a simple-protocol query, the values as literals.
 */
function beginWith(pgSettings: PgSettings, client: BaseClient): string {
  const literal = (s: string) => client.rawClient?.escapeLiteral?.(s) ?? `'${s.replace(/'/g, "''")}'`;
  const settings = Object.entries(pgSettings ?? {}).filter((e): e is [string, string] => e[1] != null);
  if (settings.length === 0) return "begin";
  return `begin; select ${settings.map(([k, v]) => `set_config(${literal(k)}, ${literal(String(v))}, true)`).join(", ")}`;
}

/** `client` inside the transaction: a nested transaction is a savepoint. */
function insideTransaction(client: PgClient): PgClient {
  const inside: PgClient = {
    query: (q) => client.query(q),
    async withTransaction(fn) {
      await client.query({ text: "savepoint tx" });
      try {
        const value = await fn(inside as never);
        await client.query({ text: "release savepoint tx" });
        return value;
      } catch (e) {
        await client.query({ text: "rollback to savepoint tx" });
        throw e;
      }
    },
  };
  return inside;
}

/**
 * A transaction on a client of `real` (BEGIN, the pgSettings as set_config
 * ... true, as PostGraphile does), held open until `end`.
 */
export function heldTransaction(real: WithPgClient, pgSettings: PgSettings): HeldTransaction {
  let finish!: (error?: unknown) => void;
  let then: ((client: PgClient) => Promise<unknown>) | undefined;
  let committed!: () => void;
  let notCommitted!: (e: unknown) => void;
  const commit = new Promise<void>((resolve, reject) => ((committed = resolve), (notCommitted = reject)));
  commit.catch(() => {}); // (nobody may be waiting)
  const held = new Promise<void>((resolve, reject) => (finish = (e) => (e === undefined ? resolve() : reject(e))));
  let handOut!: (c: PgClient) => void;
  let fail!: (e: unknown) => void;
  const client = new Promise<PgClient>((resolve, reject) => ((handOut = resolve), (fail = reject)));
  client.catch(() => {}); // (nobody may be waiting)
  const done = real(null, async (base: BaseClient) => {
    await base.query({ text: beginWith(pgSettings, base) });
    handOut(insideTransaction(base));
    try {
      await held;
    } catch (error) {
      await base.query({ text: "rollback" }).catch(() => {});
      throw error;
    }
    // A statement that failed (even one whose error someone caught) aborted
    // the transaction: COMMIT then answers ROLLBACK, without an error. Only
    // node-postgres' own result says which (the adaptor's drops `command`).
    const raw = base.rawClient;
    const next = then;
    const answers = raw?.query ? await raw.query(next ? `commit; ${beginWith(pgSettings, base)}` : "commit") : undefined;
    if (!raw?.query) await base.query({ text: "commit" });
    const result = Array.isArray(answers) ? (answers[0] as { command?: string }) : answers;
    if (result?.command === "ROLLBACK") {
      if (next) await base.query({ text: "rollback" }).catch(() => {}); // the transaction `then` would have run in
      throw new Error("The transaction was rolled back: one of its statements failed.");
    }
    if (!next) return committed();
    if (!raw?.query) await base.query({ text: beginWith(pgSettings, base) });
    const reading = next(insideTransaction(base));
    committed(); // (once `then` has started: its caller finds it running)
    try {
      await reading;
      await base.query({ text: "commit" });
    } catch {
      // `then` reports its own failure to whoever waits for it.
      await base.query({ text: "rollback" }).catch(() => {});
    }
  });
  done.then(committed, (e) => (fail(e), notCommitted(e))); // no transaction at all (the pool or BEGIN failed): whoever waits for the client fails
  return {
    client,
    async end(error?: unknown, andThen?: (client: PgClient) => Promise<unknown>) {
      if (error === undefined) then = andThen;
      finish(error);
      try {
        await commit;
      } catch (e) {
        if (error === undefined) throw e;
      }
    },
  };
}
