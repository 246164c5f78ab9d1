// The trusted operations as written (contract/operations/*.graphql, the
// clients'; documents/*.graphql, the project's own), each printed by
// graphql's print() with the fragments it uses: the sources' checks (a name
// each, no introspection, fragments from the same file) and the texts that
// scripts/documents.ts (npm run documents) and the small tools
// (npm run subscribe) work from. Nothing here needs a devDependency.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Kind, parse, print, visit, type DefinitionNode, type FragmentDefinitionNode, type OperationDefinitionNode } from "postgraphile/graphql";
import { documentId, introspects } from "../plugins/TrustedDocumentsPlugin.ts";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const SOURCES = ["contract/operations", "documents"];

export interface TrustedDocument {
  /** e.g. contract/operations/kiosk.graphql */
  file: string;
  operation: string;
  text: string;
  id: string;
}

function fragmentsUsed(node: DefinitionNode): string[] {
  const names: string[] = [];
  visit(node, {
    FragmentSpread(spread) {
      names.push(spread.name.value);
    },
  });
  return names;
}

/** The operation a document text holds. */
export function operationOf(text: string): string {
  const op = parse(text).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return op?.name?.value ?? "(anonymous)";
}

/** Every operation printed by graphql's print() with its fragments, in file order then operation order; checks the sources. */
export function printedDocuments(root = ROOT): TrustedDocument[] {
  const out: TrustedDocument[] = [];
  const names = new Map<string, string>();
  for (const dir of SOURCES) {
    for (const name of readdirSync(path.join(root, dir))
      .filter((f) => f.endsWith(".graphql"))
      .sort()) {
      const file = `${dir}/${name}`;
      const ast = parse(readFileSync(path.join(root, file), "utf8"));
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const d of ast.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
      for (const op of ast.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)) {
        const operation = op.name?.value;
        if (!operation) throw new Error(`${file}: every trusted operation needs a name`);
        if (names.has(operation)) throw new Error(`${file}: operation ${operation} is also in ${names.get(operation)}`);
        names.set(operation, file);
        // The fragments it spreads, and theirs, in order of first use.
        const used: FragmentDefinitionNode[] = [];
        const queue = fragmentsUsed(op);
        for (let i = 0; i < queue.length; i++) {
          const f = fragments.get(queue[i]!);
          if (!f) throw new Error(`${file}: ${operation} uses fragment ${queue[i]}, which is not in that file`);
          if (used.includes(f)) continue;
          used.push(f);
          queue.push(...fragmentsUsed(f));
        }
        const document = { kind: Kind.DOCUMENT, definitions: [op, ...used] } as const;
        if (introspects(document)) throw new Error(`${file}: ${operation} introspects the schema; a trusted document may not (introspection stays ad hoc)`);
        const text = print(document);
        out.push({ file, operation, text, id: documentId(text) });
      }
    }
  }
  return out;
}
