import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { GraphQLError, print, type DocumentNode } from "postgraphile/graphql";
import type { WithPgClient } from "postgraphile/@dataplan/pg";
import { operationOf, singleMutationField, type MutationTransaction } from "../common/mutationTransaction.ts";
import { MutationsPlugin } from "./MutationsPlugin.ts";
import { ERROR_CATALOGUE, ERROR_STATUS } from "../common/errorCatalogue.ts";

/**
 * Idempotent mutations: a client names an attempt with a key (HTTP: the
 * `Idempotency-Key` header; graphql-ws: the subscribe message's
 * `extensions.idempotencyKey`), and a retry of the same attempt gets the
 * first answer instead of a second effect (`Idempotent-Replayed: true`,
 * and `extensions.idempotentReplayed: true` in the answer).
 *
 * Runs inside common/mutationTransaction.ts's transaction, which commits a
 * mutation before its payload is read (no request holds stock locks while
 * it reads a payload). The key is claimed there before the mutation
 * (app_hidden.idempotency_claim: INSERT ... ON CONFLICT, so a concurrent
 * claimer waits on the unique index until this transaction ends) and marked
 * `committed` just before the COMMIT: claim and effects are saved together
 * or not at all, so a crash after the effects never lets a retry run them
 * again. The answer, built after the commit, is then written in a second
 * short statement (`done`); a retry that finds the key `committed` waits for
 * it (idempotency_wait_seconds), then is IDEMPOTENCY_KEY_IN_PROGRESS. An
 * answer that failed for the server's own reasons (SERVER_FAULTS) before
 * anything committed is rolled back whole, claim included, so a retry runs.
 *
 * A key is stored only when its mutation committed an effect: a refusal
 * (an answer with errors) deletes its claim in its transaction (what else
 * it recorded, e.g. a failed sign-in attempt, stays), and so does a
 * mutation that changed no row (a logout with an unknown token): a retry
 * simply runs again, as harmless as the first. Keys per owner are bounded
 * per window (idempotency_keys_per_owner; IDEMPOTENCY_KEY_LIMIT).
 * Who owns a key (account or source) and how long it is kept are Postgres's
 * rules.
 *
 * Queries and subscriptions ignore a well-formed key: they change nothing,
 * so a retry is already safe, and storing their answers would only cost rows.
 */

/** Where HTTP keeps a request's idempotency state (for the response header). */
export const IDEMPOTENCY = Symbol("idempotency");

export interface IdempotencyState {
  transport: "http" | "ws";
  /** HTTP: the header's value. graphql-ws: read from the message's extensions at execution. */
  key: unknown;
  /** Set when the answer is a replay. */
  replayed: boolean;
  /** Set when the key refused the request (its HTTP status, from the catalogue). */
  refused?: "IDEMPOTENCY_KEY_REUSED" | "IDEMPOTENCY_KEY_IN_PROGRESS" | "IDEMPOTENCY_KEY_LIMIT";
}

/** The request's state: an HTTP request's is kept on it, for the response header. */
export function idempotencyState(req: IncomingMessage | undefined): IdempotencyState {
  if (!req) return { transport: "ws", key: undefined, replayed: false };
  const state: IdempotencyState = { transport: "http", key: req.headers["idempotency-key"], replayed: false };
  (req as IncomingMessage & { [IDEMPOTENCY]?: IdempotencyState })[IDEMPOTENCY] = state;
  return state;
}

/** How often a request waiting for a same-key request's answer looks for it. */
const POLL_MS = 50;

export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * Codes of answers that failed for the server's own reasons: never stored,
 * the retry runs. Every code the catalogue serves with a 5xx status (down,
 * busy), and those that say "not now" without one.
 */
export const SERVER_FAULTS: ReadonlySet<string> = new Set([
  ...Object.entries(ERROR_CATALOGUE as Record<string, { status: number | null }>)
    .filter(([, e]) => (e.status ?? 0) >= 500)
    .map(([code]) => code),
  "INTERNAL_SERVER_ERROR",
  "QUERY_TIMEOUT",
  "RATE_LIMITED",
]);

/** JSON with object keys sorted, so equal variables hash alike whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The request's identity: the document (its text; a documentId was already replaced by its text), operation name and variables. */
export function requestHash(document: DocumentNode, operationName: string | null | undefined, variables: unknown): string {
  const text = document.loc?.source.body ?? print(document);
  return createHash("sha256")
    .update(canonicalJson({ document: createHash("sha256").update(text, "utf8").digest("hex"), operationName: operationName ?? null, variables: variables ?? {} }))
    .digest("hex");
}

const refusal = (code: string, message: string) => ({ errors: [new GraphQLError(message, { extensions: { code } })] });

interface StoredError {
  message: string;
  locations?: unknown;
  path?: ReadonlyArray<string | number>;
  extensions?: Record<string, unknown>;
}

/** A stored answer, as an execution result again (its errors as GraphQLErrors with their locations). */
function revive(stored: { data?: unknown; errors?: StoredError[] }) {
  const result: { data?: unknown; errors?: GraphQLError[]; extensions: Record<string, unknown> } = { extensions: { idempotentReplayed: true } };
  if ("data" in stored) result.data = stored.data;
  if (stored.errors) {
    result.errors = stored.errors.map((e) => {
      const error = new GraphQLError(e.message, { path: e.path, extensions: e.extensions });
      if (e.locations) Object.defineProperty(error, "locations", { value: e.locations, enumerable: true });
      return error;
    });
  }
  return result;
}

interface Context {
  withPgClient?: WithPgClient;
  pgSettings?: Record<string, string | undefined> | null;
  clientIp?: string;
  idempotency?: IdempotencyState;
  mutationTransaction?: MutationTransaction;
}

export interface IdempotencyOptions {
  /** The server's maskError: applied (once) before an answer is stored, so what is stored is what clients read. */
  maskError(error: GraphQLError): GraphQLError;
}

export function makeIdempotencyPlugin({ maskError }: IdempotencyOptions): GraphileConfig.Plugin {
  async function run(next: () => any, ctx: Context, key: string, hash: string): Promise<any> {
    const tx = ctx.mutationTransaction!;
    const pgSettings = ctx.pgSettings ?? null;
    const source = ctx.clientIp ?? "unknown";
    let claim: { outcome: string; response: any; wait_ms: string } | undefined;
    try {
      // In the held transaction, before the mutation (not counted as it).
      claim = (
        await tx.inHeld(pgSettings, async (client) => {
          const { rows } = await client.query<{ outcome: string; response: any; wait_ms: string }>({
            text: "select outcome, response, wait_ms from app_hidden.idempotency_claim($1, $2, $3)",
            values: [key, source, hash],
          });
          // A refusal rolls back to here, keeping the claim to store it with.
          if (rows[0]!.outcome === "run") await client.query({ text: "savepoint idempotent_effects" });
          return rows[0]!;
        })
      )?.value;
    } catch (error) {
      // Too many new keys (CT012): the whole answer is that refusal (its status says so).
      if ((error as { code?: string }).code === "CT012") ctx.idempotency!.refused = "IDEMPOTENCY_KEY_LIMIT";
      return { errors: [new GraphQLError((error as Error).message, { originalError: error as Error })] };
    }
    if (!claim) return { errors: [new GraphQLError("The mutation's transaction is not open.")] };
    if (claim.outcome === "pending") {
      // The first request's effects are committed, its answer is being built
      // (or was lost). Wait for it without holding a connection: end this
      // (empty) transaction, then poll in short statements, since the first
      // request needs a connection to read its payload and write its answer.
      const started = Date.now();
      const deadline = started + Number(claim.wait_ms);
      try {
        await tx.finish();
        while (claim.outcome === "pending" && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(1, deadline - Date.now()))));
          const { rows } = await ctx.withPgClient!(pgSettings, (client) =>
            client.query<{ outcome: string; response: any }>({ text: "select outcome, response from app_hidden.idempotency_answer($1, $2, $3)", values: [key, source, hash] }),
          );
          claim = { ...claim, ...rows[0]! };
        }
      } catch (error) {
        return { errors: [new GraphQLError((error as Error).message, { originalError: error as Error })] };
      }
      if (claim.outcome === "pending") claim.outcome = "in_progress";
    }
    switch (claim.outcome) {
      case "replay":
        ctx.idempotency!.replayed = true;
        return revive(typeof claim.response === "string" ? JSON.parse(claim.response) : claim.response);
      case "reused":
        ctx.idempotency!.refused = "IDEMPOTENCY_KEY_REUSED";
        return refusal("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used for a different request; use a new key for a new request.");
      case "in_progress":
        ctx.idempotency!.refused = "IDEMPOTENCY_KEY_IN_PROGRESS";
        return refusal("IDEMPOTENCY_KEY_IN_PROGRESS", "A request with this Idempotency-Key is still running; retry shortly with the same key.");
    }
    // The key is marked committed in the transaction of the effects, just
    // before its COMMIT (which comes when the payload is first read, so the
    // stock locks are released before it): claim, effects and "committed"
    // are saved together or not at all.
    let storedInTransaction = false;
    /** False when the mutation changed nothing: its claim was deleted, there is no answer to store. */
    let kept = true;
    tx.beforeCommit(async (client, mutationResult) => {
      if (storedInTransaction) return;
      const rows = (mutationResult as { rows?: unknown } | undefined)?.rows;
      const { rows: marked } = await client.query<{ kept: boolean }>({
        text: "select app_hidden.idempotency_committed($1, $2, $3::json) as kept",
        values: [key, source, rows === undefined ? null : JSON.stringify(rows)],
      });
      kept = marked[0]?.kept !== false;
    });
    const result = await next();
    if (result == null || typeof result !== "object" || Symbol.asyncIterator in result) {
      tx.abort(new Error("An idempotent mutation must answer once."));
      return result;
    }
    const errors: GraphQLError[] | undefined = result.errors?.map(maskError);
    const answered = errors ? { ...result, errors } : result;
    const stored: Record<string, unknown> = {};
    if ("data" in result) stored.data = result.data;
    if (errors) stored.errors = errors.map((e) => e.toJSON());
    const fault = errors?.find((e) => !e.extensions?.code || SERVER_FAULTS.has(String(e.extensions.code)));
    if (!tx.ended()) {
      // Nothing was committed yet (the mutation was refused, or its payload
      // needed no read after it): the answer goes in the same transaction.
      if (fault) {
        // Not stored: undo the effects and the claim, so the retry runs.
        tx.abort(fault);
        return answered;
      }
      try {
        await tx.inHeld(pgSettings, async (client) => {
          if (tx.failed() !== undefined) {
            // The mutation's statement failed: nothing of it stays.
            await client.query({ text: "rollback to savepoint idempotent_effects" });
            tx.forgive();
          }
          // A refusal stores nothing (its claim goes; a retry is refused
          // again, or runs if things changed); an answer is stored only when
          // the mutation changed something (idempotency_store decides).
          if (errors) await client.query({ text: "select app_hidden.idempotency_forget($1, $2)", values: [key, source] });
          else await client.query({ text: "select app_hidden.idempotency_store($1, $2, $3::json)", values: [key, source, JSON.stringify(stored)] });
          storedInTransaction = true;
        });
      } catch {
        // The transaction rolls back (inHeld noted the failure); mutationTransaction says so.
      }
      return answered;
    }
    // The effects (and the key, `committed`) were committed before the
    // payload was read: the fair-share rule forbids holding the stock locks while a
    // payload is read, so the answer cannot share their transaction. It is
    // written now, in a second short statement. Even an answer with a server
    // fault (a payload read that failed after the commit) is stored: the
    // effects stand and cannot run again, and the answer's data says what
    // was done. If this write is lost (a crash, a failure), the key stays
    // `committed`: a retry waits, then is IDEMPOTENCY_KEY_IN_PROGRESS, never
    // a second run.
    if ((await tx.finish()) !== undefined) return answered; // the COMMIT failed: the claim went with the effects, the retry runs
    if (!kept) return answered; // it changed nothing: no key was kept
    try {
      await ctx.withPgClient!(pgSettings, (client) => client.query({ text: "select app_hidden.idempotency_store($1, $2, $3::json)", values: [key, source, JSON.stringify(stored)] }));
    } catch {
      // The key stays `committed` (see above).
    }
    return answered;
  }

  return {
    name: "IdempotencyPlugin",
    version: "1.0.0",
    // Inside the mutation's transaction (MutationsPlugin's middleware opens
    // it), outside ErrorCodesPlugin's (the stored answer has its final codes).
    after: [MutationsPlugin.name],
    before: ["ErrorCodesPlugin"],
    grafast: {
      middleware: {
        execute(next, event) {
          const args = event.args as typeof event.args & { extensions?: Record<string, unknown> | null };
          const ctx = args.contextValue as Context | undefined;
          const state = ctx?.idempotency;
          if (!state) return next();
          const key = state.transport === "ws" ? args.extensions?.idempotencyKey : state.key;
          if (key === undefined) return next();
          if (typeof key !== "string" || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
            return refusal("BAD_USER_INPUT", "An Idempotency-Key is 1 to 255 printable ASCII characters.");
          }
          const document = args.document as DocumentNode;
          const operationName = args.operationName as string | null | undefined;
          if (operationOf(document, operationName)?.operation !== "mutation") return next(); // a query changes nothing: the key is ignored
          if (singleMutationField(document, operationName) === null || !ctx!.mutationTransaction || !ctx!.withPgClient) {
            return refusal("BAD_USER_INPUT", "An Idempotency-Key goes with a mutation of exactly one root field.");
          }
          return run(next, ctx!, key, requestHash(document, operationName, args.variableValues)) as any;
        },
      },
    },
    grafserv: {
      middleware: {
        async processRequest(next, event) {
          const result = await next();
          const req = event.requestDigest.requestContext.node?.req as (IncomingMessage & { [IDEMPOTENCY]?: IdempotencyState }) | undefined;
          const state = req?.[IDEMPOTENCY];
          if (result && state?.replayed) result.headers["idempotent-replayed"] = "true";
          // The whole answer is the key's refusal: its status says so (a replay keeps the first answer's).
          if (result && state?.refused) result.statusCode = ERROR_STATUS[state.refused];
          return result;
        },
      },
    },
  };
}
