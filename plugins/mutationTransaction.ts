import { GraphQLError, Kind, type DocumentNode, type OperationDefinitionNode } from "postgraphile/graphql";
import type { PgClient, WithPgClient } from "postgraphile/@dataplan/pg";
import { heldTransaction, type HeldTransaction } from "./heldTransaction.ts";

// One transaction for a mutation and the reading of its payload.
//
// Stock PostGraphile runs a mutation's SQL function in one transaction and
// then reads the payload the client selected (createOrder's `items`, their
// coffees) in another: BEGIN, set_config, statement, COMMIT twice, and
// between them the order is committed but not yet answered. An operation
// with exactly one root mutation field runs every statement in one
// transaction instead, committed before the answer is sent; the payload is
// read in the same snapshot as the change. A statement that fails aborts
// the whole transaction: it is rolled back, and an answer that still
// carries the mutation's data is replaced by the error (nothing was saved,
// and the answer says so). Operations with several root mutation fields
// keep one transaction per field (one failing must not undo the others).

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

/** `withPgClient` whose every call (same pgSettings) shares one transaction, until `finish`. */
export function oneTransaction(real: WithPgClient) {
  let held: { settings: string; tx: HeldTransaction; failed: unknown } | null = null;
  let finished = false;
  const withPgClient = (async <T>(pgSettings: PgSettings, callback: (client: PgClient) => T | Promise<T>): Promise<T> => {
    const settings = JSON.stringify(pgSettings);
    if (finished || (held && held.settings !== settings)) return real(pgSettings, callback);
    held ??= { settings, tx: heldTransaction(real, pgSettings), failed: undefined };
    const current = held;
    try {
      return await callback(await current.tx.client);
    } catch (error) {
      current.failed ??= error;
      throw error;
    }
  }) as WithPgClient;
  return {
    withPgClient,
    /** The statement error that will roll the transaction back, if any. */
    failed: (): unknown => held?.failed,
    /** After a ROLLBACK TO SAVEPOINT: the transaction is healthy again and may commit. */
    forgive(): void {
      if (held) held.failed = undefined;
    },
    /** Makes the end a rollback (what ran must not be saved). */
    abort(error: unknown): void {
      if (held) held.failed ??= error;
    },
    /** Commits, or rolls back after a failed statement: the error that undid the transaction, if any. */
    async finish(): Promise<unknown> {
      finished = true;
      if (!held) return undefined;
      try {
        await held.tx.end(held.failed);
      } catch (error) {
        return error; // the commit failed
      }
      return held.failed;
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

/** What an inner middleware (plugins/idempotency.ts) may do with a single-field mutation's transaction. */
export interface MutationTransaction {
  failed(): unknown;
  forgive(): void;
  abort(error: unknown): void;
}

/** Grafast middleware: a single-field mutation runs in one transaction, committed before it is answered. */
export const oneTransactionPerMutation = {
  execute(next: () => any, { args }: { args: { document: DocumentNode; operationName?: string | null; contextValue?: unknown } }) {
    const field = singleMutationField(args.document, args.operationName);
    const ctx = args.contextValue as { withPgClient?: WithPgClient; afterCommit?: Array<() => unknown>; mutationTransaction?: MutationTransaction } | undefined;
    if (field === null || !ctx?.withPgClient) return next();
    const tx = oneTransaction(ctx.withPgClient);
    ctx.withPgClient = tx.withPgClient;
    ctx.mutationTransaction = { failed: tx.failed, forgive: tx.forgive, abort: tx.abort };
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
