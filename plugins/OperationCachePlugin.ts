import type { OperationPlan } from "postgraphile/grafast";
import type { DocumentNode, OperationDefinitionNode } from "postgraphile/graphql";
import { boundedCache, type BoundedCache, type CacheBounds } from "../common/boundedCache.ts";
import { trustedDocumentsOf } from "./TrustedDocumentsPlugin.ts";

/**
 * Grafast keeps, per schema, the plans of each operation it has run
 * (`schema.extensions.grafast`, keyed by the parsed operation, up to 8 plans
 * per operation for the variables' and context's forms), in an LRU bounded
 * in entries only (500 by default). A plan's size follows the document's
 * shape, not its length: 2 KB of aliased `orders` with a wide fragment plans
 * to about 15 MB, and ten of them took a 256 MB heap.
 *
 * This plugin gives grafast two LRUs in its place, each bounded in entries
 * and in the estimated bytes of the plans it keeps (common/boundedCache.ts,
 * in /metrics): the trusted documents' operations (cache
 * "trusted_operation_plans": a set fixed by the manifest) and every other
 * (cache "operation_plans"), so ad-hoc documents, however many and heavy,
 * never push out the plans the apps run. A plan over its cache's budget is
 * used once and not kept. The caller that asked for a new plan pays for its
 * bytes (`onPlanBytes`, in requests: src/server.ts), whatever the transport:
 * grafast plans in this middleware for grafserv, the fast path and
 * graphql-ws alike.
 */
export interface OperationCacheOptions {
  /** Ad-hoc operations kept (entries) and their plans' estimated bytes. */
  plans: CacheBounds;
  /** The trusted documents' operations kept (entries) and their plans' estimated bytes. */
  trustedPlans: CacheBounds;
  /** Parsed query texts grafast keeps for `grafast()` calls (entries). */
  queries: number;
  /** Told the estimated bytes of each new plan, for its caller to pay. */
  onPlanBytes?(bytes: number): void;
  /** Told, once each, what this grafast lacks that the plugin counts on (the bounds then fall back: see below). */
  onWarning?(message: string): void;
}

/**
 * What one step of a plan holds, in bytes, with its share of the layer and
 * output plans around it: the heavy document of test/http/plan-memory.test.ts
 * plans to 5,684 steps and grows the heap by 15-18 MB (about 3 KB a step),
 * rounded up.
 */
export const PLAN_BYTES_PER_STEP = 4096;
/** A plan whose steps cannot be counted (a grafast without `stepTracker.stepCount`) is estimated as one of 64 steps. */
export const UNCOUNTED_PLAN_BYTES = 64 * PLAN_BYTES_PER_STEP;

interface PlanCounts {
  stepTracker?: { stepCount?: unknown };
}
/** The steps of a plan, if this grafast counts them where we read them. */
function stepsOf(plan: OperationPlan): number | undefined {
  const steps = (plan as unknown as PlanCounts).stepTracker?.stepCount;
  return typeof steps === "number" && Number.isFinite(steps) ? steps : undefined;
}
/** The estimated bytes of one plan (or 1 KB for a planning error kept in its place). */
const bytesOfPlan = new WeakMap<object, number>();
export function planBytes(plan: OperationPlan | undefined): number {
  if (!plan) return 1024;
  let bytes = bytesOfPlan.get(plan);
  if (bytes === undefined) {
    const steps = stepsOf(plan);
    bytes = steps === undefined ? UNCOUNTED_PLAN_BYTES : steps * PLAN_BYTES_PER_STEP;
    bytesOfPlan.set(plan, bytes);
  }
  return bytes;
}

/** Grafast's entry for one operation: its plans, newest first. */
interface OperationEntry {
  possibleOperationPlans: PlanLink | null;
}
interface PlanLink {
  value: { operationPlan?: OperationPlan };
  next: PlanLink | null;
}
function entryBytes(entry: OperationEntry): number {
  let bytes = 512;
  for (let link = entry.possibleOperationPlans; link; link = link.next) bytes += planBytes(link.value.operationPlan);
  return bytes;
}

/** The symbol grafast keeps its plans under in `schema.extensions.grafast` (grafast exports its type, not the symbol). */
function planCacheSymbol(extensions: object): symbol | undefined {
  return Object.getOwnPropertySymbols(extensions).find((s) => s.description === "cacheByOperation");
}

type PlanCache = BoundedCache<OperationDefinitionNode, OperationEntry>;

export function makeOperationCachePlugin({ plans, trustedPlans, queries, onPlanBytes, onWarning }: OperationCacheOptions): GraphileConfig.Plugin {
  const warned = new Set<string>();
  const warnOnce = (message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    onWarning?.(message);
  };
  /** Our caches of each schema's plans (watch mode builds several schemas). */
  const cachesOf = new WeakMap<object, { trusted: PlanCache; adHoc: PlanCache }>();
  /** The operations of trusted documents (the middleware learns them before grafast looks them up). */
  const trustedOperations = new WeakSet<OperationDefinitionNode>();
  /** Plans whose bytes their caller has paid for. */
  const paid = new WeakSet<OperationPlan>();
  const cacheOf = (operation: OperationDefinitionNode, caches: { trusted: PlanCache; adHoc: PlanCache }) => (trustedOperations.has(operation) ? caches.trusted : caches.adHoc);
  /**
   * Grafast makes its cache of plans when it keeps its first plan, under a
   * symbol it does not export: from then on it finds ours there instead.
   */
  function cachesFor(extensions: Record<symbol, unknown>, operation: OperationDefinitionNode): { trusted: PlanCache; adHoc: PlanCache } | undefined {
    const caches = cachesOf.get(extensions);
    if (caches) return caches;
    const symbol = planCacheSymbol(extensions);
    if (!symbol) {
      // (Called once grafast has kept a plan, so its cache is there.) Its own LRU
      // stays, bounded in entries only (operationsCacheMaxLength: the schema hook below).
      warnOnce(
        `grafast keeps its plans under no symbol named "cacheByOperation": its plan cache stays bounded in entries only (${trustedPlans.maxEntries + plans.maxEntries}), not in bytes (plugins/OperationCachePlugin.ts)`,
      );
      return undefined;
    }
    const theirs = extensions[symbol] as { get(key: OperationDefinitionNode): OperationEntry | undefined };
    const made = {
      trusted: boundedCache<OperationDefinitionNode, OperationEntry>("trusted_operation_plans", { ...trustedPlans, bytesOf: entryBytes }),
      adHoc: boundedCache<OperationDefinitionNode, OperationEntry>("operation_plans", { ...plans, bytesOf: entryBytes }),
    };
    const first = theirs.get(operation);
    if (first) cacheOf(operation, made).set(operation, first);
    extensions[symbol] = {
      get: (key: OperationDefinitionNode) => cacheOf(key, made).get(key),
      set: (key: OperationDefinitionNode, entry: OperationEntry) => void cacheOf(key, made).set(key, entry),
    };
    cachesOf.set(extensions, made);
    return made;
  }
  return {
    name: "OperationCachePlugin",
    description: "Bounds grafast's per-schema caches of operation plans (in bytes) and parsed query texts",
    version: "2.0.0",
    schema: {
      hooks: {
        GraphQLSchema(config) {
          const extensions = config.extensions as { grafast?: Record<string, unknown> } | undefined;
          return {
            ...config,
            extensions: {
              ...config.extensions,
              // operationsCacheMaxLength: grafast's own bound, in force only if its cache could not be replaced (cachesFor).
              grafast: {
                ...extensions?.grafast,
                operationsCacheMaxLength: trustedPlans.maxEntries + plans.maxEntries,
                queryCacheMaxLength: queries,
                operationOperationPlansCacheMaxLength: 8,
              },
            },
          };
        },
      },
    },
    grafast: {
      middleware: {
        establishOperationPlan(next, event) {
          const { resolvedPreset, document } = event.args as { resolvedPreset?: GraphileConfig.ResolvedPreset; document: DocumentNode };
          const trusted = resolvedPreset && trustedDocumentsOf(resolvedPreset);
          if (trusted?.isPinned(document)) trustedOperations.add(event.operation);
          const plan = next();
          if (paid.has(plan)) return plan;
          paid.add(plan);
          // A new plan: grafast kept it (a new operation) or added it to its
          // operation's entry (a new form), whose size is counted again.
          const caches = cachesFor(event.schema.extensions.grafast as Record<symbol, unknown>, event.operation);
          const cache = caches && cacheOf(event.operation, caches);
          const entry = cache?.peek(event.operation);
          if (cache && entry) cache.set(event.operation, entry);
          if (plan && stepsOf(plan) === undefined)
            warnOnce(`grafast's plans have no stepTracker.stepCount: each new plan is estimated at ${UNCOUNTED_PLAN_BYTES} bytes (plugins/OperationCachePlugin.ts)`);
          onPlanBytes?.(planBytes(plan));
          return plan;
        },
      },
    },
  };
}
