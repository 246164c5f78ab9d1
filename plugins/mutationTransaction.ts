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

type PgSettings = Record<string, string | undefined> | null;

function operationOf(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | undefined {
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
  ended: Promise<unknown> | null;
}

export function oneTransaction(real: WithPgClient) {
  let held: Held | null = null;
  let finished = false;
  /** Commits (or rolls back after a failed statement), once: the error that undid the mutation, if any. */
  const end = (h: Held): Promise<unknown> =>
    (h.ended ??= h.tx.end(h.failed).then(
      () => h.failed,
      (error) => error, // the commit failed
    ));
  const withPgClient = (async <T>(pgSettings: PgSettings, callback: (client: PgClient) => T | Promise<T>): Promise<T> => {
    const settings = JSON.stringify(pgSettings);
    if (finished || (held && held.settings !== settings)) return real(pgSettings, callback);
    if (held?.mutationDone) {
      // The payload: the mutation commits first, releasing its locks.
      const undone = await end(held);
      if (undone !== undefined) throw undone;
      return real(pgSettings, callback);
    }
    held ??= { settings, tx: heldTransaction(real, pgSettings), failed: undefined, mutationDone: false, ended: null };
    const current = held;
    try {
      return await callback(await current.tx.client);
    } catch (error) {
      current.failed ??= error;
      throw error;
    } finally {
      current.mutationDone = true;
    }
  }) as WithPgClient;
  return {
    withPgClient,
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
  const error =
    undone instanceof GraphQLError
      ? undone
      : new GraphQLError((undone as Error)?.message ?? String(undone), { originalError: undone as Error, path: [field] });
  return { ...result, data: null, errors: [...(result.errors ?? []), error] };
}

/** Grafast middleware: a single-field mutation runs in one transaction, committed before its payload is read and before it is answered. */
export const oneTransactionPerMutation = {
  execute(next: () => any, { args }: { args: { document: DocumentNode; operationName?: string | null; contextValue?: unknown } }) {
    const field = singleMutationField(args.document, args.operationName);
    const ctx = args.contextValue as { withPgClient?: WithPgClient; afterCommit?: Array<() => unknown> } | undefined;
    if (field === null || !ctx?.withPgClient) return next();
    const tx = oneTransaction(ctx.withPgClient);
    ctx.withPgClient = tx.withPgClient;
    // What must follow the commit before the answer (e.g. waiting until this
    // process refuses the tokens a logout revoked: their NOTIFY is sent at COMMIT).
    const afterCommit: Array<() => unknown> = (ctx.afterCommit = []);
    return Promise.resolve()
      .then(next)
      .then(
        async (result) => {
          const undone = await tx.finish();
          if (undone === undefined) for (const then of afterCommit) await then();
          return answerAfter(result, undone, field);
        },
        async (error) => {
          await tx.finish();
          throw error;
        },
      );
  },
};
