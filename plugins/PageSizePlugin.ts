import { constant, lambda, SafeError, type FieldArgs, type Step } from "postgraphile/grafast";

/**
 * Every list and connection read from Postgres returns a bounded page, with
 * or without `first`: the SQL gets a LIMIT whatever the client sends, and the
 * query cost (plugins/QueryCostPlugin/) prices exactly that many rows.
 *
 * - default: rows when the client gives no `first` (nor `last`, nor a
 *   function's own `limit`); max: what `first`/`last`/`limit` are cut to.
 * - both come from config (DEFAULT_LIST_SIZE, MAX_LIST_SIZE); a DBA gives a
 *   table or function its own with a smart comment `@pageSize <default> [<max>]`
 *   (e.g. the kiosk menu shows every coffee on sale: `@pageSize 100`).
 * - a negative `first`, `last`, `offset` or `limit` is BAD_USER_INPUT.
 *
 * The field's sizes are kept in its `extensions.pageSize`, where the cost
 * estimator reads them: one source for what runs and what is priced.
 */
export interface PageSize {
  default: number;
  max: number;
}

/** The page size this plugin gave a field (a hand-written one reads it in its plan: one source for what runs and what is priced). */
export function pageSizeOf(info: { field: { name: string; extensions?: unknown } }): PageSize {
  const pageSize = (info.field.extensions as { pageSize?: PageSize } | undefined)?.pageSize;
  if (!pageSize) throw new Error(`${info.field.name} has no page size: name it in makePageSizePlugin's hand-written fields`);
  return pageSize;
}

/** A paging argument as given: null/undefined (absent), or a non-negative integer. */
export function pageArgument(name: string, value: unknown): number | null {
  if (value == null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new SafeError(`\`${name}\` must be a whole number of at least 0.`, { code: "BAD_USER_INPUT" });
  }
  return value;
}

/** `@pageSize 100` or `@pageSize 50 500` (default, max); the max is never below the default. */
export function pageSizeFromTag(tag: unknown, fallback: PageSize): PageSize {
  if (typeof tag !== "string" && typeof tag !== "number") return fallback;
  const [d, m] = String(tag)
    .trim()
    .split(/\s+/)
    .map((v) => Number.parseInt(v, 10));
  if (!Number.isInteger(d) || d! < 0) throw new Error(`@pageSize ${tag}: expected "<default> [<max>]"`);
  const max = Number.isInteger(m) ? m! : Math.max(d!, fallback.max);
  if (max < d!) throw new Error(`@pageSize ${tag}: the max is below the default`);
  return { default: d!, max };
}

interface PgScope {
  isPgFieldConnection?: boolean;
  isPgFieldSimpleCollection?: boolean;
  pgFieldResource?: { isUnique?: boolean; codec?: unknown; extensions?: { tags?: Record<string, unknown> } };
  fieldName?: string;
  argName?: string;
}

/** The fields graphile-build-pg gives first/offset (PgFirstLastBeforeAfterArgsPlugin's test). */
const isPagedPgField = (scope: PgScope) => Boolean((scope.isPgFieldConnection || scope.isPgFieldSimpleCollection) && scope.pgFieldResource && !scope.pgFieldResource.isUnique);

const PAGING_ARGS = new Set(["first", "last", "offset"]);

const has = (info: { field: { args: readonly { name: string }[] } }, name: string) => info.field.args.some((a) => a.name === name);

export function makePageSizePlugin(fallback: PageSize, handWritten: Record<string, PageSize> = {}): GraphileConfig.Plugin {
  return {
    name: "PageSizePlugin",
    version: "1.0.0",
    after: ["PgFirstLastBeforeAfterArgsPlugin"],
    schema: {
      hooks: {
        GraphQLObjectType_fields_field(field, _build, context) {
          const scope = context.scope as PgScope;
          const key = `${context.Self.name}.${scope.fieldName}`;
          if (handWritten[key]) {
            return { ...field, extensions: { ...field.extensions, pageSize: handWritten[key] } };
          }
          if (!isPagedPgField(scope) || !field.plan) return field;
          const pageSize = pageSizeFromTag(scope.pgFieldResource!.extensions?.tags?.pageSize, fallback);
          const originalPlan = field.plan;
          return {
            ...field,
            extensions: { ...field.extensions, pageSize },
            plan($parent: Step, fieldArgs: FieldArgs, info: any) {
              const $result = (originalPlan as any).call(this, $parent, fieldArgs, info);
              if ($result == null) return $result;
              const raw = (name: string) => (has(info, name) ? fieldArgs.getRaw(name) : undefined);
              const $args = {
                first: raw("first") ?? constant(null),
                last: raw("last") ?? constant(null),
                before: raw("before") ?? constant(null),
                limit: raw("limit") ?? constant(null),
              };
              // Forwards (no `last`, no `before`): `first`, else the
              // function's `limit`, else the default; never above the max.
              $result.setFirst(
                lambda($args as any, ({ first, last, before, limit }: any) => {
                  const f = pageArgument("first", first);
                  const l = pageArgument("last", last);
                  const n = pageArgument("limit", limit);
                  if (f != null) return Math.min(f, pageSize.max);
                  if (l != null || before != null) return null;
                  return Math.min(n ?? pageSize.default, pageSize.max);
                }),
              );
              if (has(info, "last")) {
                // Backwards: `last`, else (with only `before`) the default.
                $result.setLast(
                  lambda($args as any, ({ first, last, before }: any) => {
                    const l = pageArgument("last", last);
                    if (l != null) return Math.min(l, pageSize.max);
                    return first == null && before != null ? pageSize.default : null;
                  }),
                );
              }
              if (has(info, "offset")) {
                $result.setOffset(lambda(fieldArgs.getRaw("offset"), (o: unknown) => pageArgument("offset", o)));
              }
              return $result;
            },
          };
        },
        GraphQLObjectType_fields_field_args_arg(arg, _build, context) {
          // first/last/offset are applied by the plan above instead.
          const scope = context.scope as PgScope;
          if (!isPagedPgField(scope) || !PAGING_ARGS.has(scope.argName!)) return arg;
          return { ...arg, applyPlan: undefined, extensions: { ...arg.extensions, grafast: { ...arg.extensions?.grafast, applyPlan: undefined } } };
        },
      },
    },
  };
}
