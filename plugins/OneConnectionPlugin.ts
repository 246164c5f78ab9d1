import type { WithPgClient } from "postgraphile/@dataplan/pg";
import { isPromiseLike } from "postgraphile/grafast";
import { operationOf } from "../common/mutationTransaction.ts";

/**
 * One pool connection per request, at a time. Grafast runs the steps of a
 * request side by side, and each step's `withPgClient` takes a connection of
 * its own: thirty aliased root fields held thirty connections at once, the
 * whole pool, and everyone else (the barista's queue included) waited or was
 * refused SERVICE_BUSY. Here a query's or a mutation's `withPgClient` (the
 * pool's, from PostGraphile's context, before anything else wraps it: the
 * mutation's held transaction of common/mutationTransaction.ts goes through
 * it too) runs its callbacks one after another: a request waits for its own
 * earlier statements, never takes a second connection, and between two of
 * its statements the connection goes back to the pool, so a long request
 * takes its turns with the others rather than ahead of them.
 *
 * A subscription is left alone: each delivery's re-read is shared between
 * subscribers (common/sharedReads.ts), one statement per delivery.
 */
export function oneAtATime(real: WithPgClient): WithPgClient {
  let tail: Promise<unknown> = Promise.resolve();
  return (<T>(pgSettings: Record<string, string | undefined> | null, callback: (client: Parameters<Parameters<WithPgClient>[1]>[0]) => T | Promise<T>): Promise<T> => {
    const turn = tail.then(() => real(pgSettings, callback));
    tail = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }) as WithPgClient;
}

/** The contexts whose withPgClient is wrapped already. */
const serialised = new WeakSet<object>();

function serialise(args: Grafast.ExecutionArgs): Grafast.ExecutionArgs {
  const ctx = args.contextValue as { withPgClient?: WithPgClient } | undefined;
  if (!ctx?.withPgClient || serialised.has(ctx)) return args;
  if (operationOf(args.document, args.operationName)?.operation === "subscription") return args;
  serialised.add(ctx);
  // A mutation's short transactions outside its held one (the password-check
  // gate's, common/mutationTransaction.ts) take the pool directly: queued
  // behind the held transaction, which waits for them, they would never run.
  (ctx as { withPgClientOutside?: WithPgClient }).withPgClientOutside = ctx.withPgClient;
  ctx.withPgClient = oneAtATime(ctx.withPgClient);
  return args;
}

export const OneConnectionPlugin: GraphileConfig.Plugin = {
  name: "OneConnectionPlugin",
  description: "A query or mutation holds at most one pool connection at a time, whatever its aliases",
  version: "1.0.0",
  after: ["PgContextPlugin"],
  grafast: {
    middleware: {
      prepareArgs(next, event) {
        // PostGraphile's context (PgContextPlugin, before this) has set the
        // pool's withPgClient; wrap it before anything inside wraps it again.
        serialise(event.args);
        const result = next();
        return isPromiseLike(result) ? result.then(serialise) : serialise(result);
      },
    },
  },
};
