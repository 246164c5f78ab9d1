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

/** A root field's `storeId`: its value node, or null when it names none. */
type StoreArgument = ValueNode | null;

/**
 * The root fields' `storeId` arguments of an operation (fragments spread out),
 * read once per parsed document and operation: every request of a known
 * document would otherwise walk its tree again.
 */
const argumentsByDocument = new WeakMap<DocumentNode, Map<string, readonly StoreArgument[] | null>>();
function storeArgumentsOf(document: DocumentNode, operationName: string | null | undefined): readonly StoreArgument[] | null {
  let byName = argumentsByDocument.get(document);
  if (!byName) argumentsByDocument.set(document, (byName = new Map()));
  const key = operationName ?? "";
  if (byName.has(key)) return byName.get(key)!;
  const operation = getOperationAST(document, operationName ?? undefined);
  let found: StoreArgument[] | null = null;
  if (operation) {
    found = [];
    const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
    const walk = (set: SelectionSetNode, seen: Set<string>) => {
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) {
          if (sel.name.value === "__typename") continue;
          found!.push(sel.arguments?.find((a) => a.name.value === "storeId")?.value ?? null);
        } else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet, seen);
        else if (!seen.has(sel.name.value)) {
          const fragment = fragments.get(sel.name.value);
          if (fragment) walk(fragment, new Set([...seen, sel.name.value]));
        }
      }
    };
    walk(operation.selectionSet, new Set());
  }
  byName.set(key, found);
  return found;
}

function storeArgumentOf(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined): string | undefined {
  const found = storeArgumentsOf(document, operationName);
  if (!found) return undefined;
  const values = new Set<string>();
  for (const node of found) {
    const value = node?.kind === Kind.VARIABLE ? variables?.[node.name.value] : node?.kind === Kind.STRING ? node.value : undefined;
    // Only a well-formed id is handed on: the field itself refuses any other (BAD_USER_INPUT), and a NUL byte cannot go into a setting.
    if (typeof value === "string" && UUID.test(value)) values.add(value.toLowerCase());
    else return undefined;
  }
  return values.size === 1 ? [...values][0] : undefined;
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
