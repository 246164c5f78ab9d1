import { getOperationAST, type DocumentNode } from "postgraphile/graphql";
import { servicesOf } from "../common/services.ts";

/** The name of a document's only operation (none when it has several), found once per parsed document. */
const onlyNames = new WeakMap<DocumentNode, string | undefined>();
function onlyOperationName(document: DocumentNode): string | undefined {
  if (onlyNames.has(document)) return onlyNames.get(document);
  const name = getOperationAST(document, undefined)?.name?.value;
  onlyNames.set(document, name);
  return name;
}

/**
 * Names the GraphQL operation a request runs (the one asked for, else the
 * document's only one) in the request's scope (the preset's
 * `schema.cafe.requestScope`), for its access log line.
 */
export const OperationNamePlugin: GraphileConfig.Plugin = {
  name: "OperationNamePlugin",
  version: "1.0.0",
  grafast: {
    middleware: {
      prepareArgs(next, event) {
        const scope = servicesOf((event.args as { resolvedPreset?: GraphileConfig.ResolvedPreset }).resolvedPreset)?.requestScope();
        if (scope) {
          const { operationName, document } = event.args;
          scope.operationName = operationName ?? onlyOperationName(document);
        }
        return next();
      },
    },
  },
};
