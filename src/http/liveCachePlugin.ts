import { normalizeRequest } from "postgraphile/grafserv";
import { parse, type GraphQLSchema } from "postgraphile/graphql";
import type { Viewer } from "../../plugins/services.ts";
import { liveCacheEvents } from "../metrics.ts";
import { requestScope } from "./requestScope.ts";
import { cacheKey, documentKey, isPublicRead, visibilityClassOf, type LiveCache } from "./liveCache.ts";

// Where the live cache (src/http/liveCache.ts) meets /graphql: grafserv's
// processRequest middleware, after src/http/graphqlRoute.ts's checks (rate
// limit, token, headers) and the access log, before the document is parsed
// or run. A POST of a public read by an anonymous caller or a customer is
// answered from memory when the cache holds it; otherwise grafserv answers
// and a clean answer (200, no `errors`) is kept, bytes as sent.

/** Verdicts per document text, so a document is parsed once: bounded, emptied when full. */
const MAX_VERDICTS = 1000;

interface GraphQLBody {
  query?: unknown;
  documentId?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: unknown;
}

export function makeLiveCachePlugin(cache: LiveCache, viewerSymbol: symbol, trustedDocuments: Readonly<Record<string, string>>): GraphileConfig.Plugin {
  const verdicts = new Map<string, { schema: GraphQLSchema; publicRead: boolean; operationName: string | undefined }>();
  let servedSchema: GraphQLSchema | null = null;
  const verdict = (schema: GraphQLSchema, key: string, text: string, operationName: string | null) => {
    const known = verdicts.get(key);
    if (known && known.schema === schema) return known;
    let publicRead = false;
    let name: string | undefined;
    try {
      const document = parse(text);
      publicRead = isPublicRead(schema, document, operationName);
      name = operationName ?? document.definitions.find((d) => d.kind === "OperationDefinition")?.name?.value;
    } catch {
      // not GraphQL: grafserv says why
    }
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    const v = { schema, publicRead, operationName: name };
    verdicts.set(key, v);
    return v;
  };
  return {
    name: "LiveCachePlugin",
    description: "Answers public reads from the live cache (src/http/liveCache.ts).",
    version: "1.0.0",
    grafserv: {
      middleware: {
        async processRequest(next, event) {
          const digest = event.requestDigest;
          if (!cache.enabled || digest.method !== "POST") return next();
          const req = digest.requestContext.node?.req as ({ [k: symbol]: Viewer | null | undefined } & object) | undefined;
          const visibility = req ? visibilityClassOf(req[viewerSymbol] ?? null) : null;
          const request = normalizeRequest(digest); // memoizes the body for grafserv
          if (!visibility || !String(request.getHeader("content-type") ?? "").startsWith("application/json")) return next();
          let body: GraphQLBody;
          try {
            const raw = await request.getBody();
            if (raw.type !== "buffer") return next();
            body = JSON.parse(raw.buffer.toString("utf8"));
          } catch {
            return next();
          }
          if (!body || typeof body !== "object" || body.extensions !== undefined) return next();
          const text = typeof body.documentId === "string" ? trustedDocuments[body.documentId] : body.query;
          if (typeof text !== "string" || (body.documentId !== undefined && body.query !== undefined)) return next();
          const operationName = typeof body.operationName === "string" ? body.operationName : null;
          const document = typeof body.documentId === "string" ? body.documentId : documentKey(text);
          const key = cacheKey(document, operationName, body.variables, visibility, String(request.getHeader("accept") ?? ""));
          // A new schema (watch mode) answers differently: nothing kept before it is served.
          const schema = await event.instance.getSchema();
          if (schema !== servedSchema) {
            if (servedSchema) cache.invalidate();
            servedSchema = schema;
          }
          const hit = cache.lookup(key);
          if (hit) {
            liveCacheEvents.hits += 1;
            const scope = requestScope.getStore();
            if (scope) scope.operationName = hit.operationName;
            return { type: "buffer", statusCode: hit.statusCode, headers: { ...hit.headers }, buffer: hit.body };
          }
          const generation = cache.generation;
          const { publicRead, operationName: name } = verdict(schema, `${document}\n${operationName ?? ""}`, text, operationName);
          const result = await next();
          if (!publicRead) return result;
          liveCacheEvents.misses += 1;
          if (result?.type === "buffer" && result.statusCode === 200 && !result.buffer.includes('"errors":')) {
            cache.store(key, generation, { statusCode: 200, headers: { ...(result.headers as Record<string, string>) }, body: result.buffer, operationName: name });
          }
          return result;
        },
      },
    },
  };
}
