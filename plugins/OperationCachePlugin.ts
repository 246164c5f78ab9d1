/**
 * Grafast keeps, per schema, a plan for each operation it has run and a
 * parsed document for each query text (`schema.extensions.grafast`), each
 * an LRU bounded in entries only (500 by default). A plan of a menu-sized
 * document takes hundreds of KB, so 500 ad-hoc variants of one can hold
 * hundreds of MB. This plugin sets both bounds: enough for every trusted
 * document's forms and the ad-hoc documents kept parsed, and no more.
 */
export function makeOperationCachePlugin({ operations, queries }: { operations: number; queries: number }): GraphileConfig.Plugin {
  return {
    name: "OperationCachePlugin",
    description: "Bounds grafast's per-schema caches of operation plans and parsed query texts",
    version: "1.0.0",
    schema: {
      hooks: {
        GraphQLSchema(config) {
          const extensions = config.extensions as { grafast?: Record<string, unknown> } | undefined;
          return {
            ...config,
            extensions: {
              ...config.extensions,
              grafast: { ...extensions?.grafast, operationsCacheMaxLength: operations, queryCacheMaxLength: queries, operationOperationPlansCacheMaxLength: 8 },
            },
          };
        },
      },
    },
  };
}
