import { createHash } from "node:crypto";
import { SafeError } from "postgraphile/grafast";
import { BREAK, parse, Source, stripIgnoredCharacters, validate, visit, type ASTNode, type DocumentNode, type GraphQLError, type GraphQLSchema } from "postgraphile/graphql";
import type { ProcessGraphQLRequestBodyEvent } from "postgraphile/grafserv";
import { ERROR_STATUS } from "../common/errorCatalogue.ts";
import { boundedCache, type CacheBounds } from "../common/boundedCache.ts";
import { policyAllows, type AdHocPolicy } from "../common/services.ts";

/**
 * Trusted documents (contract/trusted-documents.json, made by `npm run
 * documents`): the fixed set of operations the five clients and the
 * sign-in screens send, by id ("sha256:<hex of the text>", the prefixed
 * document identifier of GraphQL over HTTP's persisted-documents appendix).
 *
 * - `documentId` instead of `query` (POST body, GET parameter) runs that
 *   document; an unknown id is PERSISTED_DOCUMENT_NOT_FOUND.
 * - A `query` whose text is exactly one of the manifest's texts counts as
 *   trusted (graphql-ws requires a `query` string, so that is how sockets
 *   send them). The manifest holds each operation in its forms, made once by
 *   `npm run documents`: graphql's print(), GraphQL Codegen's, and Apollo
 *   Client's (print() after its cache's addTypenameToDocument). Any other
 *   text, however close (whitespace, a comment, a `__typename` more), is ad
 *   hoc: the check is one lookup of the exact text, with no parsing, and
 *   nothing a caller sends is kept.
 * - Apollo's persisted-query protocol (`extensions.persistedQuery`, version
 *   1, `sha256Hash` = the hex of an id): a hash alone runs that document (its
 *   `__typename`-added form is in the manifest, so Apollo Client's first
 *   request by hash is answered), an unknown one is PERSISTED_QUERY_NOT_FOUND
 *   (message PersistedQueryNotFound, so Apollo's link sends the text again
 *   with the hash). Hash and text are a document like any other: no text is
 *   ever registered, so under `staff` and `none` a text that is not trusted
 *   is refused as below.
 * - Any other document is "ad hoc": allowed by the policy (`any`: everyone,
 *   `staff`: baristas and admins, `none`: nobody), else
 *   TRUSTED_DOCUMENT_REQUIRED. No trusted document introspects (neither
 *   `npm run documents` nor this plugin accepts one), so where the policy
 *   refuses ad-hoc documents, it refuses introspection too.
 *
 * Both refusals happen while the request body is read, before parsing, and
 * so before any SQL. Trusted documents are parsed and validated (with every
 * validation rule, the depth, alias and token limits included) once per
 * schema, and always get the same DocumentNode back: grafast's plan cache
 * and the cost cache of plugins/QueryCostPlugin/, both keyed by that node, keep
 * their entries for them whatever ad-hoc traffic does. Ad-hoc texts' parse
 * and validation results are kept in a bounded cache (`adHocDocuments`:
 * entries and bytes, least recently used dropped first; grafserv's own
 * cache, bounded in entries only, is turned off by the preset).
 *
 * Texts that differ only in what GraphQL ignores (whitespace, commas, `#
 * comments`) are one document: a text seen for the first time is first
 * reduced to its canonical form (graphql's stripIgnoredCharacters: a lexer
 * pass, no parse), and when a valid document of that form is known (a
 * trusted one, or an ad-hoc one still cached) it gets that DocumentNode
 * back, so grafast's plan, the cost and the live cache's answer
 * (`cacheKeyOf`) are shared, and an endless flood of such variants costs a
 * lexer pass each, not a parse, a validation and a plan; nothing is kept
 * by a variant's own text, so such a flood keeps nothing either. A variant is still
 * ad hoc for the policy: trust is the exact text. (Locations in an error of
 * a shared document's execution are those of the text first parsed.)
 */

/** The prefixed document identifier of a document's exact text. */
export function documentId(text: string): string {
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

/** Whether a document (or part of one) asks for `__schema` or `__type`. Trusted documents may not. */
export function introspects(node: ASTNode): boolean {
  let found = false;
  visit(node, {
    Field(field) {
      if (field.name.value === "__schema" || field.name.value === "__type") {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

export interface TrustedDocumentsOptions {
  /** id -> document text; every id is checked against its text at start-up. */
  documents: Readonly<Record<string, string>>;
  adHocQueries: AdHocPolicy;
  /** Whether the caller (an HTTP request's, or a socket's) is staff. Must not throw. */
  callerIsStaff(event: ProcessGraphQLRequestBodyEvent): boolean;
  /**
   * Told of each refusal (for metrics), with where it came from: a refusal on
   * a socket then goes through grafserv's maskError like any other error, one
   * over HTTP does not.
   */
  onRefusal?(code: string, transport: "http" | "ws"): void;
  /** The bounds of the cache of ad-hoc texts' parse and validation results (per schema). */
  adHocDocuments: CacheBounds;
  /** The most characters a text may have (MAX_QUERY_LENGTH): a longer one never gets a known form's document, its own validation refuses it. */
  maxLength: number;
  /** Told the id of each trusted document a request runs (by its id or its text), for metrics and traces. */
  onTrusted?(id: string): void;
  /** Told the milliseconds of CPU each text not seen before took to parse and validate (the caller pays for them: GRAPHQL_DOCUMENT_WORK_US). */
  onWork?(ms: number): void;
}

/** What a parsed and validated text costs in memory, roughly: its AST with locations, ~47 bytes a character measured, rounded up. */
export const parsedTextBytes = (text: string) => 64 * text.length + 200;

/** The id an Apollo `sha256Hash` names (bare hex, or already prefixed), or null when it is not a SHA-256 hex. */
export function idOfApolloHash(hash: unknown): string | null {
  if (typeof hash !== "string") return null;
  const hex = hash.startsWith("sha256:") ? hash.slice(7) : hash;
  return /^[0-9a-f]{64}$/i.test(hex) ? `sha256:${hex.toLowerCase()}` : null;
}

/** What the trusted documents tell a caller outside grafserv (src/http/fastPath.ts): the same lookups the plugin makes. */
export interface TrustedDocuments {
  /** The text of a trusted document's id (undefined: no such id). */
  textOf(id: string): string | undefined;
  /** Whether a text counts as trusted: exactly one of the manifest's texts. */
  isTrusted(text: string): boolean;
  /** The id of a trusted text (as isTrusted finds it), else undefined. */
  idOf(text: string): string | undefined;
  /** How many texts the manifest has, and what they take parsed: the most a cache of trusted texts ever holds. */
  readonly bounds: CacheBounds;
  /** Whether a caller may send a text that is not trusted. */
  allowsAdHoc(staff: boolean): boolean;
  /** What the live cache keys a parsed document's answers by: the id of the trusted text, or the hash of the canonical form, it was parsed from (undefined: not parsed here). */
  cacheKeyOf(document: DocumentNode): string | undefined;
  /** Whether a parsed document is one of the manifest's, as pinned here (not an ad-hoc text of the same form). */
  isPinned(document: DocumentNode): boolean;
}

const TRUSTED_DOCUMENTS = Symbol("trustedDocuments");

/** The trusted documents of a resolved preset (undefined when it has no TrustedDocumentsPlugin). */
export function trustedDocumentsOf(resolvedPreset: GraphileConfig.ResolvedPreset): TrustedDocuments | undefined {
  const plugin = resolvedPreset.plugins?.find((p) => p.name === "TrustedDocumentsPlugin") as { [TRUSTED_DOCUMENTS]?: TrustedDocuments } | undefined;
  return plugin?.[TRUSTED_DOCUMENTS];
}

type ParseAndValidateResult = { document: DocumentNode; errors?: undefined } | { document?: undefined; errors: readonly GraphQLError[] };
type ParseAndValidate = (query: string) => ParseAndValidateResult;

export function makeTrustedDocumentsPlugin(options: TrustedDocumentsOptions): GraphileConfig.Plugin {
  const { adHocQueries: policy, callerIsStaff, onRefusal, onTrusted, onWork } = options;
  // A Map, not the object: an id such as "__proto__" must find nothing.
  const byId = new Map<string, string>();
  for (const [id, text] of Object.entries(options.documents)) {
    if (documentId(text) !== id) throw new Error(`Trusted document ${id} does not match its text: run \`npm run documents\`.`);
    // Refusing ad-hoc documents must refuse introspection too.
    if (introspects(parse(text))) throw new Error(`Trusted document ${id} introspects the schema; introspection stays ad hoc.`);
    byId.set(id, text);
  }
  const trustedTexts: ReadonlySet<string> = new Set(byId.values());
  const idOfText = new Map([...byId].map(([id, text]) => [text, id]));
  /** The id of a text that is exactly one of the manifest's, else undefined. */
  const trustedId = (query: string) => idOfText.get(query);
  const isTrusted = (query: string) => trustedTexts.has(query);
  /** Each parsed document's cache key (lookups.cacheKeyOf). */
  const cacheKeys = new WeakMap<DocumentNode, string>();
  /** The manifest's documents, parsed (per schema). */
  const pinned = new WeakSet<DocumentNode>();

  function refuse(event: ProcessGraphQLRequestBodyEvent, code: "PERSISTED_DOCUMENT_NOT_FOUND" | "PERSISTED_QUERY_NOT_FOUND" | "TRUSTED_DOCUMENT_REQUIRED" | "BAD_USER_INPUT", message: string): never {
    onRefusal?.(code, event.request ? "http" : "ws");
    throw new SafeError(message, { code, statusCode: ERROR_STATUS[code] });
  }

  const lookups: TrustedDocuments = {
    textOf: (id) => byId.get(id),
    isTrusted,
    idOf: trustedId,
    allowsAdHoc: (staff) => policyAllows(policy, staff),
    bounds: { maxEntries: trustedTexts.size, maxBytes: [...trustedTexts].reduce((sum, text) => sum + parsedTextBytes(text), 0) },
    cacheKeyOf: (document) => cacheKeys.get(document),
    isPinned: (document) => pinned.has(document),
  };
  const plugin: GraphileConfig.Plugin & { [TRUSTED_DOCUMENTS]: TrustedDocuments } = {
    [TRUSTED_DOCUMENTS]: lookups,
    name: "TrustedDocumentsPlugin",
    version: "1.0.0",
    grafserv: {
      middleware: {
        processGraphQLRequestBody(next, event) {
          const { body } = event;
          const persistedQuery = (body.extensions as { persistedQuery?: unknown } | undefined)?.persistedQuery;
          if (persistedQuery != null) {
            // Apollo's automatic persisted queries.
            const { version, sha256Hash } = persistedQuery as { version?: unknown; sha256Hash?: unknown };
            const id = idOfApolloHash(sha256Hash);
            if (version !== 1 || !id) refuse(event, "BAD_USER_INPUT", "extensions.persistedQuery needs version 1 and a sha256Hash of 64 hex digits.");
            if (body.documentId != null) refuse(event, "BAD_USER_INPUT", "Send either `documentId` or `extensions.persistedQuery`, not both.");
            if (body.query == null) {
              const text = byId.get(id);
              // Apollo's link matches this message (or the code) and sends the text.
              if (text === undefined) refuse(event, "PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound");
              body.query = text;
              onTrusted?.(id);
              return next();
            }
            if (typeof body.query !== "string" || documentId(body.query) !== id) refuse(event, "BAD_USER_INPUT", "extensions.persistedQuery.sha256Hash is not the SHA-256 of `query`.");
            // The text is checked below like any other, and not remembered.
          }
          if (body.documentId != null) {
            if (body.query != null) refuse(event, "BAD_USER_INPUT", "Send either `documentId` or `query`, not both.");
            const text = typeof body.documentId === "string" ? byId.get(body.documentId) : undefined;
            if (text === undefined) refuse(event, "PERSISTED_DOCUMENT_NOT_FOUND", "No trusted document has this documentId.");
            body.query = text;
            onTrusted?.(body.documentId as string);
          } else if (typeof body.query === "string" && (onTrusted || policy !== "any")) {
            const id = trustedId(body.query);
            if (id !== undefined) onTrusted?.(id);
            else if (policy !== "any" && !policyAllows(policy, callerIsStaff(event))) {
              refuse(
                event,
                "TRUSTED_DOCUMENT_REQUIRED",
                policy === "none"
                  ? "This server runs trusted documents only: send a documentId (or the exact text) of contract/trusted-documents.json."
                  : "Only staff may send documents that are not trusted: send a documentId (or the exact text) of contract/trusted-documents.json.",
              );
            }
          }
          return next();
        },
        setPreset(next, event) {
          // Hand grafserv the trusted documents' parse-and-validate results,
          // worked out once per schema; other texts go to grafserv's own
          // cached function. `validationRules` is read at first use, when
          // every plugin has added its rules.
          const rules = event.validationRules;
          const original = event.getExecutionConfig;
          let forFunction: ParseAndValidate | undefined;
          let wrapped: ParseAndValidate | undefined;
          const pin = (schema: GraphQLSchema, fallback: ParseAndValidate): ParseAndValidate => {
            if (forFunction === fallback && wrapped) return wrapped;
            const results = new Map<string, ParseAndValidateResult>();
            // Valid trusted documents by canonical form (a fixed set).
            const trustedForms = new Map<string, ParseAndValidateResult>();
            for (const text of trustedTexts) {
              let document: DocumentNode;
              try {
                // Same source name as grafserv's, so error locations read alike.
                document = parse(new Source(text, "GraphQL HTTP Request"));
              } catch (e) {
                results.set(text, { errors: [e as GraphQLError] });
                continue;
              }
              const errors = validate(schema, document, rules);
              const result = errors.length ? { errors } : { document };
              results.set(text, result);
              if (!errors.length) {
                cacheKeys.set(document, idOfText.get(text)!);
                pinned.add(document);
                const form = stripIgnoredCharacters(text);
                if (!trustedForms.has(form)) trustedForms.set(form, result);
              }
            }
            // Ad-hoc texts, and the canonical forms of valid ones: bounded in
            // entries and bytes (grafserv's own cache is off). A form's entry
            // holds the same parsed document as its text's, counted in both.
            const adHoc = boundedCache<string, ParseAndValidateResult>("ad_hoc_documents", { ...options.adHocDocuments, bytesOf: (_result, text) => parsedTextBytes(text) });
            const adHocForms = boundedCache<string, ParseAndValidateResult>("ad_hoc_forms", { ...options.adHocDocuments, bytesOf: (_result, form) => parsedTextBytes(form) });
            forFunction = fallback;
            wrapped = (query) => {
              const known = results.get(query) ?? adHoc.get(query);
              if (known) return known;
              // A text over the length limit is not even lexed for its form: its own validation refuses it.
              let form: string | null = null;
              if (query.length <= options.maxLength) {
                try {
                  form = stripIgnoredCharacters(query);
                } catch {
                  form = null; // it does not lex: the parse below says why
                }
              }
              // A variant of a known form is not kept by its own text: a
              // flood of variants keeps nothing (each costs its lexer pass).
              const ofForm = form === null ? undefined : (trustedForms.get(form) ?? adHocForms.get(form));
              if (ofForm) return ofForm;
              const started = performance.now();
              const result = fallback(query);
              onWork?.(performance.now() - started);
              if (result.document && form !== null) {
                cacheKeys.set(result.document, documentId(form));
                adHocForms.set(form, result);
              }
              adHoc.set(query, result);
              return result;
            };
            return wrapped;
          };
          const withPinned = <C extends { schema: GraphQLSchema; parseAndValidate: ParseAndValidate }>(config: C): C => {
            // A fresh object per call (its contextValue is the request's own).
            config.parseAndValidate = pin(config.schema, config.parseAndValidate);
            return config;
          };
          event.getExecutionConfig = function (ctx) {
            const config = original.call(this, ctx);
            return "then" in config ? config.then(withPinned) : withPinned(config);
          };
          return next();
        },
      },
    },
  };
  return plugin;
}
