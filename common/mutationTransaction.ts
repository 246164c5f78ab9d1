import { GraphQLError, Kind, type DocumentNode, type OperationDefinitionNode } from "postgraphile/graphql";
import type { PgClient, WithPgClient } from "postgraphile/@dataplan/pg";
import { heldTransaction, type HeldTransaction } from "./heldTransaction.ts";

// One transaction for a mutation, committed before its payload is read.
//
// Stock PostGraphile runs a mutation's SQL function in one transaction
// (BEGIN, set_config, statement, COMMIT) and then reads the payload the
// client selected (createOrder's `items`, their coffees) in others. An
// operation with exactly one root mutation field runs its mutation in a
// transaction held here (BEGIN and the settings in one round trip), and
// commits it as soon as the mutation's statement is done: before any of the
// payload is read, so the locks the mutation took (an order's stock rows)
// are never held while a client's selection, however heavy, is read.
// Another customer ordering the same coffee waits for the order, never for
// someone's payload. The payload is then read in its own transactions (same
// role and settings), after the commit: it shows the committed order.
//
// A statement of the mutation that fails (even one whose error was caught)
// rolls the mutation back; an answer that still carries the mutation's
// data is then replaced by the error (nothing was saved, and the answer
// says so). A payload read that fails after the commit is an error on that
// field only: the mutation stands, and its data (the order's id) says so.
// Operations with several root mutation fields keep one transaction per
// field (one failing must not undo the others).
//
// An inner middleware (plugins/IdempotencyPlugin.ts) may run statements of its own
// in the held transaction before the mutation (`inHeld`: an Idempotency-Key's
// claim), have one run just before its COMMIT (`beforeCommit`: the key marked
// committed with the effects), and, while it is still open, roll back to a
// savepoint (`forgive`) or make it end in a rollback (`abort`).

type PgSettings = Record<string, string | undefined> | null;

/** The operation of `document` that a request runs (by name, or the only one). */
export function operationOf(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | undefined {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operationName ? ops.find((o) => o.name?.value === operationName) : ops.length === 1 ? ops[0] : undefined;
}

/** The answer's key of the one root field of a mutation that has exactly one, else null. */
export function singleMutationField(document: DocumentNode, operationName: string | null | undefined): string | null {
  const op = operationOf(document, operationName);
  const only = op?.operation === "mutation" && op.selectionSet.selections.length === 1 ? op.selectionSet.selections[0] : undefined;
  return only?.kind === Kind.FIELD ? (only.alias ?? only.name).value : null;
}

/**
 * `withPgClient` whose first call (the mutation: one statement, or a
 * callback's own transaction) runs in a held transaction, committed when
 * the next call comes (the payload) or at `finish`, whichever is first;
 * later calls run as `real` does, after the commit.
 */
interface Held {
  settings: string;
  tx: HeldTransaction;
  failed: unknown;
  mutationDone: boolean;
  /** What the mutation's callback returned (its rows), for `beforeCommit`. */
  mutationResult: unknown;
  ended: Promise<unknown> | null;
}

/** Runs on the held transaction's client just before its COMMIT (not before a rollback); a failure rolls it back. */
export type BeforeCommit = (client: PgClient, mutationResult: unknown) => Promise<unknown>;

export function oneTransaction(real: WithPgClient) {
  let held: Held | null = null;
  let finished = false;
  const beforeCommit: BeforeCommit[] = [];
  /**
   * Commits (or rolls back after a failed statement), once: the error that
   * undid the mutation, if any. `then` (the first payload read) runs after
   * the commit on the same connection (see HeldTransaction.end).
   */
  const end = (h: Held, then?: (client: PgClient) => Promise<unknown>): Promise<unknown> =>
    (h.ended ??= (async () => {
      if (h.failed === undefined && beforeCommit.length > 0) {
        try {
          const client = await h.tx.client;
          for (const hook of beforeCommit) await hook(client, h.mutationResult);
        } catch (error) {
          h.failed ??= error;
        }
      }
      return h.tx.end(h.failed, then).then(
        () => h.failed,
        (error) => error, // the commit failed
      );
    })());
  const open = (pgSettings: PgSettings, settings: string): Held =>
    (held ??= { settings, tx: heldTransaction(real, pgSettings), failed: undefined, mutationDone: false, mutationResult: undefined, ended: null });
  const withPgClient = (async <T>(pgSettings: PgSettings, callback: (client: PgClient) => T | Promise<T>): Promise<T> => {
    const settings = JSON.stringify(pgSettings);
    if (finished || (held && held.settings !== settings)) return real(pgSettings, callback);
    if (held?.mutationDone) {
      // The payload: the mutation commits first, releasing its locks. The
      // first read runs right after, in its own transaction on the same
      // connection (its BEGIN goes with the COMMIT); others take their own.
      if (held.ended === null) {
        let value!: Promise<T>;
        const read = (client: PgClient) => (value = (async () => callback(client))());
        const undone = await end(held, read);
        if (undone !== undefined) throw undone;
        if (value) return value;
      } else {
        const undone = await end(held);
        if (undone !== undefined) throw undone;
      }
      return real(pgSettings, callback);
    }
    const current = open(pgSettings, settings);
    try {
      const value = await callback(await current.tx.client);
      current.mutationResult = value;
      return value;
    } catch (error) {
      current.failed ??= error;
      throw error;
    } finally {
      current.mutationDone = true;
    }
  }) as WithPgClient;
  /** Runs `callback` in the held transaction (opening it) without counting as the mutation; `undefined` once it ended. */
  async function inHeld<T>(pgSettings: PgSettings, callback: (client: PgClient) => Promise<T>): Promise<{ value: T } | undefined> {
    const settings = JSON.stringify(pgSettings);
    if (finished || held?.ended || (held && held.settings !== settings)) return undefined;
    const current = open(pgSettings, settings);
    try {
      return { value: await callback(await current.tx.client) };
    } catch (error) {
      current.failed ??= error;
      throw error;
    }
  }
  return {
    withPgClient,
    inHeld,
    /** Adds a statement to run just before the COMMIT (see BeforeCommit). */
    beforeCommit(hook: BeforeCommit): void {
      beforeCommit.push(hook);
    },
    /** Whether the held transaction ended (committed or rolled back): false before the mutation or while nothing was read after it. */
    ended: (): boolean => held?.ended != null,
    /** The statement error that will roll the transaction back, if any. */
    failed: (): unknown => held?.failed,
    /** After a ROLLBACK TO SAVEPOINT: the transaction is healthy again and may commit. */
    forgive(): void {
      if (held && !held.ended) held.failed = undefined;
    },
    /** Makes the end a rollback (what ran must not be saved), if it has not ended yet. */
    abort(error: unknown): void {
      if (held && !held.ended) held.failed ??= error;
    },
    /** Commits, unless done already, or rolls back after a failed statement: the error that undid the mutation, if any. */
    async finish(): Promise<unknown> {
      finished = true;
      if (!held) return undefined;
      return end(held);
    },
  };
}

/** The answer after the transaction ended: unchanged, or the error when data the client sees was not saved. */
export function answerAfter(result: any, undone: unknown, field: string): any {
  if (undone === undefined || result == null || typeof result !== "object") return result;
  if (result.data == null || result.data[field] == null) return result; // the mutation itself failed: its own error says so
  const error = undone instanceof GraphQLError ? undone : new GraphQLError((undone as Error)?.message ?? String(undone), { originalError: undone as Error, path: [field] });
  return { ...result, data: null, errors: [...(result.errors ?? []), error] };
}

/** What an inner middleware (plugins/IdempotencyPlugin.ts) may do with a single-field mutation's transaction. */
export type MutationTransaction = Pick<ReturnType<typeof oneTransaction>, "inHeld" | "beforeCommit" | "ended" | "failed" | "forgive" | "abort" | "finish">;

/** Grafast middleware: a single-field mutation runs in one transaction, committed before its payload is read and before it is answered. */
export const oneTransactionPerMutation = {
  execute(next: () => any, { args }: { args: { document: DocumentNode; operationName?: string | null; contextValue?: unknown } }) {
    const field = singleMutationField(args.document, args.operationName);
    const ctx = args.contextValue as { withPgClient?: WithPgClient; afterCommit?: Array<() => unknown>; onCommit?: () => void | Promise<void>; mutationTransaction?: MutationTransaction } | undefined;
    if (field === null || !ctx?.withPgClient) return next();
    const tx = oneTransaction(ctx.withPgClient);
    // Outside the held transaction: the pool itself (plugins/OneConnectionPlugin.ts
    // leaves it here unserialised: a statement waiting for the held
    // transaction's turn would wait for ever).
    (ctx as { withPgClientOutside?: WithPgClient }).withPgClientOutside ??= ctx.withPgClient;
    ctx.withPgClient = tx.withPgClient;
    ctx.mutationTransaction = tx;
    // What must follow the commit before the answer (e.g. waiting until this
    // process refuses the tokens a logout revoked: their NOTIFY is sent at COMMIT).
    const afterCommit: Array<() => unknown> = (ctx.afterCommit = []);
    return Promise.resolve()
      .then(next)
      .then(
        async (result) => {
          const undone = await tx.finish();
          if (undone === undefined) {
            await ctx.onCommit?.();
            for (const then of afterCommit) await then();
          }
          return answerAfter(result, undone, field);
        },
        async (error) => {
          await tx.finish();
          throw error;
        },
      );
  },
};
