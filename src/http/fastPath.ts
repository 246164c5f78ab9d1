import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { Readable } from "node:stream";
import { execute, hookArgs, isAsyncIterable, stringifyPayload } from "postgraphile/grafast";
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from "postgraphile/graphql";
import { handleErrors, type GrafservBase } from "postgraphile/grafserv";
import { finishErrors } from "../../plugins/ErrorCodesPlugin.ts";
import { documentId, introspects, parsedTextBytes, trustedDocumentsOf } from "../../plugins/TrustedDocumentsPlugin.ts";
import { boundedCache, type BoundedCache, type CacheBounds } from "../../common/boundedCache.ts";
import { isStaff, type Viewer } from "../../common/services.ts";
import { VIEWER } from "./viewer.ts";
import { requestStoreOf, STORE_HEADER } from "../requestStore.ts";
import { logger } from "../logger.ts";
import { fastPathAdHoc, fastPathTrusted, liveCacheEvents } from "../metrics.ts";
import { MAX_BODY_BYTES } from "./bodyLimit.ts";
import { inventoryChange } from "../../common/topics.ts";
import { cacheKey, definedVariables, inventoryShown, publicReadOf, visibilityClassOf, type CachedAnswer, type LiveCache, type PublicReadSpec } from "./liveCache.ts";
import { requestScope } from "../requestScope.ts";

// /graphql's fast path, after the pipeline's checks (src/http/router.ts:
// headers, CORS, body limit, token, rate limit). A POST of one JSON query,
// trusted (by documentId or text) or ad hoc, goes from its body straight to
// Grafast: its parse and validation (every rule: depth, aliases, tokens)
// are worked out once per schema and text, through grafserv's own
// parseAndValidate (the trusted ones pinned by plugins/TrustedDocumentsPlugin.ts),
// and kept here; then hookArgs (the preset's context, the prepareArgs
// middleware) and execute (every execute middleware: cost and
// `extensions.cost`, error codes, metrics) as grafserv runs them, the
// answer masked by grafserv's maskError and given its codes and 503s
// (plugins/ErrorCodesPlugin.ts). What it does not serve goes to grafserv
// unchanged: another method or content type, an Accept it would not answer
// with JSON (src/http/fastPath.ts contentTypeFor), a chunked body, a batch, Apollo's persisted queries, an unknown
// documentId, a text that does not parse or validate, an ad-hoc text the
// policy refuses this caller, a mutation or subscription (their held
// transaction and Idempotency-Key stay grafserv's), introspection, @defer
// and @stream. A body read here is handed on as it was read.
//
// A public read (src/http/liveCache.ts) by an anonymous caller or a customer
// is answered from the live cache when it holds it, after the route's checks
// and the policy, before hookArgs and execute; a request for a key being
// computed waits for that answer; a clean answer (200, no errors) is kept,
// bytes as sent, with what it is made of, unless that changed meanwhile.

/** A document text, parsed and validated against one schema. */
export interface FastDocument {
  readonly schema: GraphQLSchema;
  readonly text: string;
  readonly document: DocumentNode;
  /** A trusted document's text (else ad hoc: the policy is asked per caller). */
  readonly trusted: boolean;
  /** A trusted document's id (metrics and traces name it). */
  readonly documentId?: string | undefined;
  /** What the live cache keys its answers by: the same for every text of one parsed document (TrustedDocuments.cacheKeyOf). */
  readonly cacheDocument: string;
  /** Whether the fast path may run the operation of that name (undefined: the only one): a query, no introspection, no @defer/@stream. */
  servesOperation(operationName: string | undefined): boolean;
  /** Whether that operation reads only what every anonymous caller (or every customer) sees alike (the live cache may keep its answer), and what its answers are made of; null: it does not. */
  publicRead(operationName: string | undefined): PublicReadSpec | null;
}

export interface FastPathOptions {
  serv: GrafservBase;
  /** Ad-hoc texts kept per schema (GRAPHQL_DOCUMENT_CACHE_SIZE and _BYTES); trusted ones are always kept. */
  adHocDocuments: CacheBounds;
  /** Answers to public reads, kept until a change to their tables (src/http/liveCache.ts). */
  liveCache?: LiveCache;
  /** Told the milliseconds of CPU a new ad-hoc document's first run took to plan (and start), for its caller to pay (GRAPHQL_DOCUMENT_WORK_US). */
  onWork?: (ms: number) => void;
}

const GRAPHQL_RESPONSE_JSON = "application/graphql-response+json;charset=utf-8";
const APPLICATION_JSON = "application/json;charset=utf-8";

// grafserv's own Accept matcher (RFC 9110 lists, q-values, wildcards,
// parameters), which its package does not export: the fast path answers with
// exactly the type grafserv's GraphQL handler would pick, from its two JSON
// types in its order (graphql-response+json first since the spec's
// watershed, 2025-01-01). test/graphql/fast-path.negotiation.test.ts holds
// the two to each other.
const grafservRequire = createRequire(path.join(import.meta.dirname, "fastPath.ts"));
const { makeAcceptMatcher } = grafservRequire(path.join(path.dirname(grafservRequire.resolve("grafserv")), "accept.js")) as {
  makeAcceptMatcher(mediaTypes: string[]): (accept: string | undefined) => string | null;
};
const preferredType = makeAcceptMatcher([GRAPHQL_RESPONSE_JSON, APPLICATION_JSON]);

/** The Content-Type grafserv answers a POST with `accept` with; null: not JSON (406, or a header it cannot parse): grafserv's to answer. */
export function contentTypeFor(accept: string | undefined): string | null {
  try {
    return preferredType(accept);
  } catch {
    return null;
  }
}

type AuthedRequest = IncomingMessage & { [VIEWER]?: Viewer | null };

/** The body's fields, when it is one request the fast path can take. */
interface Body {
  query?: unknown;
  documentId?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: { persistedQuery?: unknown } | null;
  onError?: unknown;
}

function isJsonPost(req: IncomingMessage): boolean {
  if (req.method !== "POST" || req.headers["content-length"] === undefined || req.headers["idempotency-key"] !== undefined) return false;
  const type = req.headers["content-type"];
  if (type === undefined) return false;
  const semi = type.indexOf(";");
  return (semi === -1 ? type : type.slice(0, semi)).trim() === "application/json";
}

/** The same request, its body read already: what grafserv is handed when the fast path declines one it has read. */
function replay(req: AuthedRequest, body: Buffer): IncomingMessage {
  const copy = Readable.from([body], { objectMode: false }) as Readable & Record<string | symbol, unknown>;
  for (const key of ["method", "url", "headers", "rawHeaders", "httpVersion", "httpVersionMajor", "httpVersionMinor", "socket", "complete"] as const) copy[key] = req[key];
  copy.connection = req.socket;
  copy[VIEWER] = req[VIEWER];
  return copy as unknown as IncomingMessage;
}

function makeEntry(schema: GraphQLSchema, text: string, document: DocumentNode, cacheDocument: string, trusted: boolean, documentId?: string): FastDocument {
  // Introspection and incremental delivery stay grafserv's (found once per document).
  const plain = !introspects(document) && !/@(defer|stream)\b/.test(text);
  const served = new Map<string | undefined, boolean>();
  const publicReads = new Map<string | undefined, PublicReadSpec | null>();
  return {
    schema,
    text,
    document,
    trusted,
    documentId,
    cacheDocument,
    servesOperation(operationName) {
      let ok = served.get(operationName);
      if (ok === undefined) {
        ok = plain && getOperationAST(document, operationName)?.operation === "query";
        if (served.size < 100) served.set(operationName, ok);
      }
      return ok;
    },
    publicRead(operationName) {
      let spec = publicReads.get(operationName);
      if (spec === undefined) {
        spec = publicReadOf(schema, document, operationName ?? null);
        if (publicReads.size < 100) publicReads.set(operationName, spec);
      }
      return spec;
    },
  };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A public read being computed for the live cache: its key, the cache's generation and the time when it began, and who waits for it. */
interface Caching {
  key: string;
  generation: number;
  startedAt: number;
  spec: PublicReadSpec;
  settle: ((answer: CachedAnswer | null) => void) | null;
}

/** The pipeline's fast-path step (src/http/router.ts): its `next` is grafserv, for what it does not serve. */
export function makeFastPath({ serv, adHocDocuments, liveCache, onWork }: FastPathOptions): (req: IncomingMessage, res: ServerResponse, next: Handler) => void {
  const trustedDocuments = trustedDocumentsOf(serv.getPreset());
  if (!trustedDocuments) throw new Error("The fast path needs the TrustedDocumentsPlugin in the preset.");
  // Per schema (watch mode builds new ones): trusted texts (the manifest's:
  // a fixed set), and ad-hoc texts, both bounded caches (least recently
  // used dropped first). null: the text does not parse or validate
  // (grafserv answers it).
  let cachedSchema: GraphQLSchema | null = null;
  type Documents = BoundedCache<string, FastDocument | false>;
  const bySchema = new WeakMap<GraphQLSchema, { trusted: Documents; adHoc: Documents }>();
  /** The ad-hoc entry of each parsed document: every text of one canonical form (TrustedDocumentsPlugin) shares it. */
  const adHocEntries = new WeakMap<DocumentNode, FastDocument>();
  const bytesOf = (_entry: FastDocument | false, text: string) => parsedTextBytes(text);

  function cacheOf(schema: GraphQLSchema) {
    let cache = bySchema.get(schema);
    if (!cache) {
      cache = {
        trusted: boundedCache("fast_path_trusted", { ...trustedDocuments!.bounds, bytesOf }),
        adHoc: boundedCache("fast_path_ad_hoc", { ...adHocDocuments, bytesOf }),
      };
      bySchema.set(schema, cache);
    }
    return cache;
  }

  /** The entry of a text seen before (undefined: not seen, or dropped since). */
  function known(schema: GraphQLSchema, text: string): FastDocument | null | undefined {
    const cache = cacheOf(schema);
    const entry = cache.trusted.get(text) ?? cache.adHoc.get(text);
    return entry === false ? null : entry;
  }

  /** The entry of a text not seen before, worked out through grafserv's parseAndValidate and kept. */
  async function learn(schema: GraphQLSchema, text: string, trusted: boolean, req: IncomingMessage, res: ServerResponse): Promise<FastDocument | null> {
    const config = await serv.getExecutionConfig({ node: { req, res } });
    if (config.schema !== schema) return null; // the schema changed meanwhile: grafserv serves this one
    const result = config.parseAndValidate(text);
    const { document } = result;
    if (!document) {
      (trusted ? cacheOf(schema).trusted : cacheOf(schema).adHoc).set(text, false);
      return null;
    }
    const cacheDocument = trustedDocuments!.cacheKeyOf(document) ?? documentId(text);
    if (trusted) {
      const entry = makeEntry(schema, text, document, cacheDocument, true, trustedDocuments!.idOf(text));
      cacheOf(schema).trusted.set(text, entry);
      return entry;
    }
    let entry = adHocEntries.get(document);
    if (!entry) adHocEntries.set(document, (entry = makeEntry(schema, text, document, cacheDocument, false)));
    // Kept by the text it was made from; a variant (another text of its form) is not kept by its own.
    if (entry.text === text) cacheOf(schema).adHoc.set(text, entry);
    return entry;
  }

  /** Serves the request, or returns false (nothing written) for grafserv to. */
  async function serve(req: AuthedRequest, res: ServerResponse, raw: Buffer, contentType: string): Promise<boolean> {
    let body: Body;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return false;
    }
    if (body === null || typeof body !== "object" || Array.isArray(body) || body.onError != null || body.extensions?.persistedQuery != null) return false;
    const { operationName, variables } = body;
    if (operationName != null && typeof operationName !== "string") return false;
    if (variables != null && (typeof variables !== "object" || Array.isArray(variables))) return false;
    let text: string | undefined;
    if (body.documentId != null) text = body.query == null && typeof body.documentId === "string" ? trustedDocuments!.textOf(body.documentId) : undefined;
    else if (typeof body.query === "string") text = body.query;
    if (text === undefined) return false;
    const schema = serv.getSchema();
    if ("then" in schema) return false;
    // An ad-hoc text the policy refuses this caller is grafserv's to refuse
    // (and count), and is not kept here.
    const viewer = req[VIEWER] ?? null;
    const allowed = trustedDocuments!.allowsAdHoc(isStaff(viewer));
    let entry = known(schema, text);
    /** A new ad-hoc text: its first run's planning is its caller's to pay. */
    let fresh = false;
    if (entry === undefined) {
      const trusted = trustedDocuments!.isTrusted(text);
      if (!trusted && !allowed) return false;
      entry = await learn(schema, text, trusted, req, res);
      // (A variant of a known form shares its document, planned already.)
      fresh = !trusted && entry?.text === text;
    }
    const name = operationName ?? undefined;
    if (!entry || (!entry.trusted && !allowed) || !entry.servesOperation(name)) return false;
    (entry.trusted ? fastPathTrusted : fastPathAdHoc).inc();
    if (entry.documentId) {
      const scope = requestScope.getStore();
      if (scope) scope.documentId = entry.documentId;
    }

    // The live cache: a public read, for a caller who sees what all of its kind see.
    const visibility = liveCache?.enabled ? visibilityClassOf(viewer) : null;
    const spec = liveCache && visibility ? entry.publicRead(name) : null;
    let cached: Caching | null = null;
    if (liveCache && visibility && spec) {
      // A new schema (watch mode) answers differently: nothing kept before it is served.
      if (schema !== cachedSchema) {
        if (cachedSchema) liveCache.invalidate();
        cachedSchema = schema;
      }
      const key = cacheKey(
        entry.cacheDocument,
        operationName ?? null,
        variables,
        definedVariables(entry.document, operationName ?? null),
        visibility,
        contentType,
        requestStoreOf(req.headers[STORE_HEADER]),
      );
      const held = liveCache.lookup(key);
      // Fresh; or, to an anonymous caller (who wrote nothing), stale while another request recomputes it (LIVE_CACHE_STALE_MS)
      // or while its computation is less than LIVE_CACHE_REFRESH_MS old.
      const staleAllowed = visibility === "cafe_anonymous";
      if (held && (!held.stale || (staleAllowed && (held.recent || liveCache.refreshing(key))))) {
        if (held.stale) liveCacheEvents.stale += 1;
        else liveCacheEvents.hits += 1;
        send(res, held.answer);
        return true;
      }
      // One miss per key: wait for the answer being computed, if any.
      const flight = liveCache.joinFlight(key, staleAllowed);
      if (flight) {
        const shared = await flight;
        if (shared) {
          liveCacheEvents.coalesced += 1;
          send(res, shared);
          return true;
        }
      }
      liveCacheEvents.misses += 1;
      cached = {
        key,
        generation: liveCache.generation,
        startedAt: Date.now(),
        spec,
        settle: flight ? null : liveCache.beginFlight(key, spec.inventory ? [...spec.changes, inventoryChange("*")] : spec.changes),
      };
    }
    try {
      return await compute(req, res, { schema, entry, name, variables, contentType, cached, fresh });
    } finally {
      cached?.settle?.(null); // (already settled with the answer when there was one)
    }
  }

  async function compute(
    req: AuthedRequest,
    res: ServerResponse,
    {
      schema,
      entry,
      name,
      variables,
      contentType,
      cached,
      fresh,
    }: {
      schema: GraphQLSchema;
      entry: FastDocument;
      name: string | undefined;
      variables: unknown;
      contentType: string;
      cached: Caching | null;
      fresh: boolean;
    },
  ): Promise<boolean> {
    const { resolvedPreset, grafastMiddleware, dynamicOptions } = serv;
    const variableValues = (variables ?? undefined) as Record<string, unknown> | undefined;
    const args = {
      schema,
      document: entry.document,
      rootValue: null,
      contextValue: Object.create(null) as Record<string, unknown>,
      variableValues,
      operationName: name,
      resolvedPreset,
      requestContext: { node: { req, res } },
      middleware: grafastMiddleware,
    };
    const legacy = contentType === APPLICATION_JSON;
    let payload: ExecutionResult;
    let statusCode: number;
    try {
      await hookArgs(args);
      // Grafast plans an operation it has no plan for synchronously, before its first await.
      const started = fresh && onWork ? performance.now() : 0;
      const running = execute(args);
      if (started) onWork!(performance.now() - started);
      const result = await running;
      if (isAsyncIterable(result)) throw new Error("An incremental result on the fast path.");
      payload = dynamicOptions.maskPayload(result);
      statusCode = legacy || !payload.errors ? 200 : payload.data === undefined ? 400 : 200;
    } catch (e) {
      logger.error({ err: e }, "GraphQL request failed");
      payload = { errors: [dynamicOptions.maskError(new GraphQLError((e as Error).message))] } as ExecutionResult;
      statusCode = (e as { statusCode?: number }).statusCode ?? (legacy ? 200 : 500);
    }
    const headers: Record<string, string> = { "content-type": contentType };
    if (payload.errors) {
      handleErrors(payload);
      const finished = finishErrors(payload as Parameters<typeof finishErrors>[0], statusCode, "POST");
      statusCode = finished.statusCode;
      if (finished.retryAfter) headers["retry-after"] = finished.retryAfter;
    }
    if (dynamicOptions.watch) headers["x-graphql-event-stream"] = dynamicOptions.eventStreamPath;
    // Written as a string: no Buffer copy of a large answer.
    const out = stringifyPayload(payload as never, dynamicOptions.outputDataAsString);
    headers["content-length"] = String(Buffer.byteLength(out, "utf8"));
    res.writeHead(statusCode, headers);
    res.end(out);
    if (cached) {
      const answer: CachedAnswer = { statusCode, headers, body: Buffer.from(out, "utf8"), operationName: requestScope.getStore()?.operationName ?? name };
      cached.settle?.(answer); // those waiting for this key get it, errors included
      cached.settle = null;
      if (statusCode === 200 && !payload.errors) liveCache!.store(cached.key, cached.generation, answer, madeOf(entry, name, cached.spec, payload.data), cached.startedAt);
    }
    return true;
  }

  /** The tokens an answer is made of: its spec's, and the inventory of each coffee it shows. */
  function madeOf(entry: FastDocument, name: string | undefined, spec: PublicReadSpec, data: unknown): string[] {
    if (!spec.inventory) return [...spec.changes];
    const shown = inventoryShown(entry.document, name ?? null, typeof data === "string" ? JSON.parse(data) : data);
    return [...spec.changes, ...(shown ? shown.map(inventoryChange) : [inventoryChange("*")])];
  }

  return (req, res, next) => {
    const contentType = contentTypeFor(req.headers.accept);
    if (contentType === null || !isJsonPost(req)) return next(req, res);
    // Awaited (not continued in the stream's callbacks) so the request's
    // scope (its id, for every log line) carries on.
    void readBody(req).then(
      async (raw) => {
        try {
          if (!(await serve(req, res, raw, contentType))) next(replay(req, raw), res);
        } catch (e) {
          logger.error({ err: e }, "GraphQL fast path failed");
          if (!res.headersSent) next(replay(req, raw), res);
        }
      },
      () => req.destroy(),
    );
  };
}

/** Writes an answer the live cache holds (or a computation of its key gave). */
function send(res: ServerResponse, answer: CachedAnswer): void {
  const scope = requestScope.getStore();
  if (scope) scope.operationName = answer.operationName;
  res.writeHead(answer.statusCode, answer.headers);
  res.end(answer.body);
}

/** The body (its length declared and checked by the route; Node holds the body to it). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    req.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > MAX_BODY_BYTES) reject(new Error("body over its limit"));
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
