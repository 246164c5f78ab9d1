import type { WithPgClient } from "postgraphile/@dataplan/pg";
import { isPromiseLike } from "postgraphile/grafast";
import { operationOf } from "../common/mutationTransaction.ts";

/** Who pays for a statement: its key, and whether it is a source inside TRUSTED_NETWORKS (never true of an account). */
export type Payer = { key: string; trusted: boolean };

/**
 * Each payer's share of the pool: at most `share` connections held at once
 * by one payer's requests (each request holds one at a time, see below);
 * an anonymous source inside TRUSTED_NETWORKS (the café's Wi-Fi and kiosks,
 * many customers behind one address) at most `trustedShare`.
 * A payer's statement beyond its share waits in that payer's own queue,
 * holding no connection, for at most `waitMs`, then fails busy
 * (SERVICE_BUSY): ten slow filters of one barista hold `share` connections,
 * and a customer's read finds the rest free.
 */
export class PayerShares {
  private readonly payers = new Map<string, { held: number; waiting: (() => void)[] }>();
  readonly share: number;
  readonly trustedShare: number;
  private readonly waitMs: number;
  private readonly busy: () => Error;
  /** `busy`: the error of a statement that waited `waitMs` in vain (the pool's own wait timeout's, so it answers SERVICE_BUSY). */
  constructor(options: { share: number; trustedShare: number; waitMs: number; busy: () => Error }) {
    this.share = options.share;
    this.trustedShare = Math.max(options.share, options.trustedShare);
    this.waitMs = options.waitMs;
    this.busy = options.busy;
  }

  /** Runs `work` once `payer` holds fewer than its share. */
  async run<T>(payer: Payer, work: () => Promise<T>): Promise<T> {
    let entry = this.payers.get(payer.key);
    if (!entry) this.payers.set(payer.key, (entry = { held: 0, waiting: [] }));
    if (entry.held >= (payer.trusted ? this.trustedShare : this.share)) {
      const queue = entry.waiting;
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          queue.splice(queue.indexOf(go), 1);
          reject(this.busy());
        }, this.waitMs);
        queue.push(go);
      });
      // (A place was handed over: `held` still counts it.)
    } else {
      entry.held++;
    }
    try {
      return await work();
    } finally {
      const next = entry.waiting.shift();
      if (next) next();
      else if (--entry.held === 0) this.payers.delete(payer.key);
    }
  }
}

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
 * takes its turns with the others rather than ahead of them. And a payer's
 * requests together hold at most its share (PayerShares).
 *
 * A subscription is left alone: each delivery's re-read is shared between
 * subscribers (common/sharedReads.ts), one statement per delivery.
 */
export function oneAtATime(real: WithPgClient, share?: { shares: PayerShares; payer: () => Payer | null }): WithPgClient {
  let tail: Promise<unknown> = Promise.resolve();
  return (<T>(pgSettings: Record<string, string | undefined> | null, callback: (client: Parameters<Parameters<WithPgClient>[1]>[0]) => T | Promise<T>): Promise<T> => {
    const turn = tail.then(() => {
      const payer = share?.payer();
      return share && payer ? share.shares.run(payer, () => real(pgSettings, callback)) : real(pgSettings, callback);
    });
    tail = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }) as WithPgClient;
}

/** The contexts whose withPgClient is wrapped already. */
const serialised = new WeakSet<object>();

type PayerContext = { viewer?: { userId?: string } | null; clientIp?: string; clientTrusted?: boolean };

/**
 * Who pays for a request's statements: its account (never a larger share),
 * else its source, trusted inside TRUSTED_NETWORKS (null: neither is known,
 * no share applies).
 */
function payerOf(ctx: PayerContext): Payer | null {
  if (ctx.viewer?.userId) return { key: `account:${ctx.viewer.userId}`, trusted: false };
  return ctx.clientIp && ctx.clientIp !== "unknown" ? { key: `source:${ctx.clientIp}`, trusted: ctx.clientTrusted === true } : null;
}

function serialise(args: Grafast.ExecutionArgs, shares: PayerShares | null): Grafast.ExecutionArgs {
  const ctx = args.contextValue as (PayerContext & { withPgClient?: WithPgClient }) | undefined;
  if (!ctx?.withPgClient || serialised.has(ctx)) return args;
  if (operationOf(args.document, args.operationName)?.operation === "subscription") return args;
  serialised.add(ctx);
  // A mutation's short transactions outside its held one (the password-check
  // gate's, common/mutationTransaction.ts) take the pool directly: queued
  // behind the held transaction, which waits for them, they would never run.
  (ctx as { withPgClientOutside?: WithPgClient }).withPgClientOutside = ctx.withPgClient;
  // (Who pays is known once the whole context is built: asked at each statement.)
  ctx.withPgClient = oneAtATime(ctx.withPgClient, shares ? { shares, payer: () => payerOf(ctx) } : undefined);
  return args;
}

/**
 * `share`: connections one payer may hold at once (PayerShares);
 * `trustedShare`: an anonymous source's inside TRUSTED_NETWORKS; `waitMs`:
 * how long its statement waits for one, then fails with `busy()`.
 */
export function makeOneConnectionPlugin(options: ConstructorParameters<typeof PayerShares>[0]): GraphileConfig.Plugin {
  const shares = new PayerShares(options);
  const wrap = (args: Grafast.ExecutionArgs) => serialise(args, shares);
  return {
    name: "OneConnectionPlugin",
    description: "A query or mutation holds at most one pool connection at a time, whatever its aliases, and a payer at most its share of the pool",
    version: "1.0.0",
    after: ["PgContextPlugin"],
    grafast: {
      middleware: {
        prepareArgs(next, event) {
          // PostGraphile's context (PgContextPlugin, before this) has set the
          // pool's withPgClient; wrap it before anything inside wraps it again.
          wrap(event.args);
          const result = next();
          return isPromiseLike(result) ? result.then(wrap) : wrap(result);
        },
      },
    },
  };
}
