import type { PgClient, WithPgClient } from "postgraphile/@dataplan/pg";

export interface HeldTransaction {
  /** The transaction's client, once it is open. */
  readonly client: Promise<PgClient>;
  /** Commits (or, given an error, rolls back) and waits for it; fails when the commit does. */
  end(error?: unknown): Promise<void>;
}

type PgSettings = Record<string, string | undefined> | null;
type BaseClient = PgClient & { rawClient?: { escapeLiteral?(s: string): string; query?(text: string): Promise<{ command?: string }> } };

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
    const commit = raw?.query ? await raw.query("commit") : { command: undefined };
    if (!raw?.query) await base.query({ text: "commit" });
    if (commit.command === "ROLLBACK") throw new Error("The transaction was rolled back: one of its statements failed.");
  });
  done.catch(fail); // no transaction at all (the pool or BEGIN failed): whoever waits for the client fails
  return {
    client,
    async end(error?: unknown) {
      finish(error);
      try {
        await done;
      } catch (e) {
        if (error === undefined) throw e;
      }
    },
  };
}
