// GraphQL Codegen (`npm run codegen`): typed documents for each of the five
// clients in generated/<client>/, from the client's operations
// (contract/operations/<client>.graphql) and the project's own documents
// (documents/<client>.graphql, and those every client needs: the others in
// documents/). The client preset's persisted documents give each operation
// its id ("sha256:<hex>"): generated/<client>/persisted-documents.json, and
// `__meta__.hash` on each document. `npm run documents` puts those ids and
// texts into contract/trusted-documents.json, the manifest the server trusts.
import type { CodegenConfig } from "@graphql-codegen/cli";
// The preset itself, not its name: Codegen would look a name up from its cwd
// (a copy of the sources elsewhere has no node_modules).
import { preset as client } from "@graphql-codegen/client-preset";

export const CLIENTS = ["kiosk", "mobile", "pos", "barista", "admin"] as const;

/** The Codegen config, writing under `out` (relative to the project root, which is Codegen's cwd). */
export function codegenConfig(out = "generated"): CodegenConfig {
  return {
    // The served schema (`npm run schema:snapshot`): it has the fields documents/ use beyond the contract.
    schema: "data/schema.graphql",
    ignoreNoDocuments: false,
    generates: Object.fromEntries(
      CLIENTS.map((name) => [
        `${out}/${name}/`,
        {
          preset: client,
          documents: [`contract/operations/${name}.graphql`, "documents/*.graphql", ...CLIENTS.filter((c) => c !== name).map((c) => `!documents/${c}.graphql`)],
          presetConfig: { persistedDocuments: { hashAlgorithm: "sha256" }, fragmentMasking: false },
          // Plain Node runs them (`node scripts/node.mjs`, type stripping): types imported as types, files by their .ts names.
          config: { useTypeImports: true, importExtension: ".ts" },
        },
      ]),
    ),
  };
}

export default codegenConfig();
