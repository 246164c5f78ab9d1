import { getOperationAST, Kind, type DocumentNode, type SelectionSetNode, type ValueNode } from "postgraphile/graphql";

/**
 * The nearest enclosing `storeId` argument is the store of the fields under
 * it (docs/api.md, the chain): when every root field of the operation names
 * the same store (`menuItems(storeId: B) { inventory }`), that store is handed
 * to Postgres as `cafe.store_argument`, which app_hidden.store_or_default()
 * takes before the X-Store-Id header (migration 000020-store-argument.sql).
 * A field with its own `storeId` still answers for that one. An operation
 * whose root fields name different stores, or not all of them one, is left
 * to the header (or the default store).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function storeArgumentOf(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined): string | undefined {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return undefined;
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  const values = new Set<string>();
  let bare = false;
  const valueOf = (node: ValueNode): unknown => (node.kind === Kind.VARIABLE ? variables?.[node.name.value] : node.kind === Kind.STRING ? node.value : undefined);
  const walk = (set: SelectionSetNode, seen: Set<string>) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value === "__typename") continue;
        const arg = sel.arguments?.find((a) => a.name.value === "storeId");
        const value = arg ? valueOf(arg.value) : undefined;
        // Only a well-formed id is handed on: the field itself refuses any other (BAD_USER_INPUT), and a NUL byte cannot go into a setting.
        if (typeof value === "string" && UUID.test(value)) values.add(value.toLowerCase());
        else bare = true;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet, seen);
      else if (!seen.has(sel.name.value)) {
        const fragment = fragments.get(sel.name.value);
        if (fragment) walk(fragment, new Set([...seen, sel.name.value]));
      }
    }
  };
  walk(operation.selectionSet, new Set());
  return !bare && values.size === 1 ? [...values][0] : undefined;
}

export const RequestStorePlugin: GraphileConfig.Plugin = {
  name: "RequestStorePlugin",
  version: "1.0.0",
  grafast: {
    middleware: {
      prepareArgs(next, event) {
        const apply = <T>(args: T): T => {
          const { document, operationName, variableValues, contextValue } = event.args;
          const pgSettings = (contextValue as { pgSettings?: Record<string, string> } | undefined)?.pgSettings;
          const store = pgSettings ? storeArgumentOf(document, operationName, variableValues as Record<string, unknown> | null | undefined) : undefined;
          if (pgSettings && store !== undefined) pgSettings["cafe.store_argument"] = store;
          return args;
        };
        const done = next();
        return done && typeof (done as PromiseLike<unknown>).then === "function" ? (done as PromiseLike<typeof done>).then(apply) : apply(done);
      },
    },
  },
};
