/**
 * `@complexity(value: Int!)` on field definitions. The value comes from a
 * smart comment in Postgres (`@complexity 10` on a table, column or
 * function), so a DBA prices a field without touching TypeScript; fields
 * without one cost 1. The query cost check (plugins/QueryCostPlugin/) reads the
 * directive from the schema, and the printed SDL shows it.
 *
 * A to-one relation field carries `extensions.joined`: PostGraphile reads
 * it in its parent's SQL (a join), so it is priced as part of that row.
 *
 * Each table's object type also carries the table's name
 * (`extensions.pgTable`, e.g. "app_public.order_items"): what a
 * `totalCount` scans is priced by that table's size (plugins/QueryCostPlugin/).
 * So does each table's filter input type (`OrderFilter`): a filter's
 * relations are priced by the rows they walk. A computed column (a
 * function of the row) carries `extensions.computed`: filtering by it calls
 * the function once per row the filter looks at.
 */
export const ComplexityDirectivePlugin: GraphileConfig.Plugin = {
  name: "ComplexityDirectivePlugin",
  version: "1.0.0",
  schema: {
    hooks: {
      GraphQLObjectType(config, _build, context) {
        const codec = (context.scope as { pgCodec?: { attributes?: unknown; extensions?: { pg?: { schemaName?: string; name?: string } } } }).pgCodec;
        const pg = codec?.attributes ? codec.extensions?.pg : undefined;
        if (!pg?.schemaName || !pg.name) return config;
        return { ...config, extensions: { ...config.extensions, pgTable: `${pg.schemaName}.${pg.name}` } };
      },
      GraphQLInputObjectType(config, _build, context) {
        const { pgCodec: codec, isPgConnectionFilter } = context.scope as {
          pgCodec?: { attributes?: unknown; extensions?: { pg?: { schemaName?: string; name?: string } } };
          isPgConnectionFilter?: boolean;
        };
        const pg = isPgConnectionFilter && codec?.attributes ? codec.extensions?.pg : undefined;
        if (!pg?.schemaName || !pg.name) return config;
        return { ...config, extensions: { ...config.extensions, pgTable: `${pg.schemaName}.${pg.name}` } };
      },
      GraphQLObjectType_fields_field(field, _build, context) {
        const { scope } = context as typeof context & {
          scope: {
            pgFieldResource?: { extensions?: { tags?: Record<string, unknown> }; parameters?: unknown };
            pgFieldAttribute?: { extensions?: { tags?: Record<string, unknown> } };
            isPgSingleRelationField?: boolean;
            fieldBehaviorScope?: string;
          };
        };
        // A to-one relation (an order's customer, a line's coffee) is a join
        // in its parent's SQL: no query of its own, one row per parent row.
        if (scope.isPgSingleRelationField) field = { ...field, extensions: { ...field.extensions, joined: true } };
        // A function of the row (a computed column): a filter by it calls it per row.
        // (A function returning one value or row has no resource in its scope, only its behavior scope.)
        if (scope.pgFieldResource?.parameters || scope.fieldBehaviorScope === "typeField:single") field = { ...field, extensions: { ...field.extensions, computed: true } };
        const tag = scope.pgFieldResource?.extensions?.tags?.complexity ?? scope.pgFieldAttribute?.extensions?.tags?.complexity;
        const value = typeof tag === "string" || typeof tag === "number" ? Number.parseInt(String(tag), 10) : NaN;
        if (!Number.isInteger(value) || value < 0) return field;
        return {
          ...field,
          extensions: { ...field.extensions, directives: { ...(field.extensions as any)?.directives, complexity: { value } } },
        };
      },
    },
  },
};
