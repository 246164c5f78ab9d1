// `npm run documents`: brings contract/trusted-documents.json, the trusted
// documents (plugins/TrustedDocumentsPlugin.ts), up to date with the clients'
// operations (contract/operations/*.graphql) and the project's own
// (documents/*.graphql). A development tool: it runs GraphQL Codegen
// (codegen.ts), a devDependency; the server only reads the committed file.
//
// Each operation is trusted in two texts, each under "sha256:<hex of it>":
// - the one GraphQL Codegen's client preset emits (persisted documents), so
//   the ids of generated/<client>/ are accepted as they are;
// - graphql's print() of the operation and the fragments it uses (in order
//   of first use), which is what Apollo's PersistedQueryLink hashes, and the
//   form every id had before Codegen;
// - Apollo Client's: that print() after its cache's own transform
//   (addTypenameToDocument from @apollo/client, a devDependency), the text
//   and hash an app with an InMemoryCache sends, so its first request by
//   hash alone is answered.
// The server trusts exactly these texts and no variant of them.
//
// The manifest is append-only: an id once published stays (so app versions
// in the field keep working after an operation is edited) until it is
// retired on the record, `npm run documents -- --retire <id> --reason "..."`,
// which writes documents/retired.json. A run that would lose an id of the
// committed manifest (git HEAD) that is not retired fails, naming it.
// test/graphql/trusted-documents.test.ts fails when the committed file is stale.
import "../src/envDefaults.ts";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { addTypenameToDocument } from "@apollo/client/utilities";
import { generate } from "@graphql-codegen/cli";
import { parse, print } from "graphql";
import { codegenConfig } from "../codegen.ts";
import { documentId } from "../plugins/TrustedDocumentsPlugin.ts";
import { operationOf, printedDocuments, type TrustedDocument } from "./operations.ts";

export { operationOf, printedDocuments, type TrustedDocument };

export const ROOT = path.resolve(import.meta.dirname, "..");
export const MANIFEST = "contract/trusted-documents.json";
export const RETIRED = "documents/retired.json";

/** documents/retired.json: id -> when, why, and which operation it was. */
export type Retired = Record<string, { operation: string; retiredAt: string; reason: string }>;

/** What GraphQL Codegen (codegen.ts) emits for the five clients: each persisted-documents.json entry, once. */
export async function codegenDocuments(root = ROOT): Promise<TrustedDocument[]> {
  const outputs: Array<{ filename: string; content: string }> = await generate({ ...codegenConfig(), cwd: root, silent: true }, false);
  const found = new Map<string, TrustedDocument>();
  for (const { filename, content } of outputs.filter((o) => o.filename.endsWith("persisted-documents.json")).sort((a, b) => a.filename.localeCompare(b.filename))) {
    for (const [id, text] of Object.entries(JSON.parse(content) as Record<string, string>)) {
      if (documentId(text) !== id) throw new Error(`Codegen's id ${id} is not the SHA-256 of its text: check codegen.ts's hashAlgorithm`);
      if (!found.has(id)) found.set(id, { file: path.relative(root, path.resolve(root, filename)), operation: operationOf(text), text, id });
    }
  }
  return [...found.values()];
}

/** Each print() form as Apollo Client sends it: `__typename` added by Apollo's own transform, printed again. */
export function apolloDocuments(printed: TrustedDocument[]): TrustedDocument[] {
  return printed.map((d) => {
    const text = print(addTypenameToDocument(parse(d.text)));
    return { ...d, text, id: documentId(text) };
  });
}

/** Every document the sources make now: print() forms, Apollo Client's, then Codegen's (each text once). */
export async function currentDocuments(root = ROOT): Promise<TrustedDocument[]> {
  const printed = printedDocuments(root);
  const found = new Map<string, TrustedDocument>();
  for (const d of [...printed, ...apolloDocuments(printed), ...(await codegenDocuments(root))]) if (!found.has(d.id)) found.set(d.id, d);
  return [...found.values()];
}

const readJson = <T>(file: string, fallback: T): T => (existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : fallback);

/** The manifest as committed in git HEAD, where `root` is a git work tree that has one. */
function committedManifest(root: string): Record<string, string> | null {
  try {
    const top = execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    if (realpathSync(top) !== realpathSync(root)) return null;
    return JSON.parse(execFileSync("git", ["show", `HEAD:${MANIFEST}`], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  } catch {
    return null;
  }
}

export class DocumentsError extends Error {}

export interface Update {
  manifest: Record<string, string>;
  retired: Retired;
  added: TrustedDocument[];
  /** Ids kept that the sources no longer make (an edited or removed operation), still served. */
  kept: Array<{ id: string; operation: string }>;
}

/**
 * The next manifest: the present one (less what is retired), then what the
 * sources make that it lacks. Throws a DocumentsError (naming the ids) for
 * an id that would be dropped without being retired, or a bad --retire.
 */
export async function updateManifest(root = ROOT, retire?: { id: string; reason: string; now?: Date }): Promise<Update> {
  const present: Record<string, string> = readJson(path.join(root, MANIFEST), {});
  const retired: Retired = { ...readJson<Retired>(path.join(root, RETIRED), {}) };
  const current = await currentDocuments(root);
  const currentIds = new Set(current.map((d) => d.id));
  if (retire) {
    if (!retire.reason?.trim()) throw new DocumentsError('--retire needs --reason "...": why the id may stop working (it is kept on the record)');
    if (!(retire.id in present)) throw new DocumentsError(`${retire.id} is not in ${MANIFEST}`);
    if (currentIds.has(retire.id)) throw new DocumentsError(`${retire.id} (${operationOf(present[retire.id]!)}) is what the sources make now: edit or remove the operation first`);
    retired[retire.id] = { operation: operationOf(present[retire.id]!), retiredAt: (retire.now ?? new Date()).toISOString(), reason: retire.reason.trim() };
  }
  const back = current.filter((d) => d.id in retired);
  if (back.length) throw new DocumentsError(`Retired ids made again by the sources (remove them from ${RETIRED} to serve them again): ${back.map((d) => `${d.id} (${d.operation})`).join(", ")}`);

  const manifest: Record<string, string> = {};
  for (const [id, text] of Object.entries(present)) {
    if (id in retired) continue;
    if (documentId(text) !== id) throw new DocumentsError(`${MANIFEST}: ${id} is not the SHA-256 of its text`);
    manifest[id] = text;
  }
  const added = current.filter((d) => !(d.id in manifest));
  for (const d of added) manifest[d.id] = d.text;

  // An id in the committed manifest must still be there, or be retired.
  const dropped = Object.keys(committedManifest(root) ?? {}).filter((id) => !(id in manifest) && !(id in retired));
  if (dropped.length)
    throw new DocumentsError(
      `These published ids would be dropped without being retired: ${dropped.join(", ")}. Restore ${MANIFEST} from git, then retire them with --retire <id> --reason "..." if they must go.`,
    );

  const kept = Object.keys(manifest)
    .filter((id) => !currentIds.has(id))
    .map((id) => ({ id, operation: operationOf(manifest[id]!) }));
  return { manifest, retired, added, kept };
}

export const manifestJson = (manifest: Record<string, string>) => `${JSON.stringify(manifest, null, 2)}\n`;

/** Runs `npm run documents [-- --retire <id> --reason "..."]` in `root`; returns the exit code. */
export async function main(argv: string[], root = ROOT, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { retire: { type: "string" }, reason: { type: "string" } } });
  let update: Update;
  try {
    update = await updateManifest(root, values.retire ? { id: values.retire, reason: values.reason ?? "" } : undefined);
  } catch (e) {
    if (!(e instanceof DocumentsError)) throw e;
    out(`npm run documents: ${e.message}`);
    return 1;
  }
  writeFileSync(path.join(root, MANIFEST), manifestJson(update.manifest));
  if (values.retire) writeFileSync(path.join(root, RETIRED), `${JSON.stringify(update.retired, null, 2)}\n`);
  for (const d of update.added) out(`added    ${d.id}  ${d.operation}  (${d.file})`);
  if (values.retire) out(`retired  ${values.retire}  (${RETIRED})`);
  if (update.kept.length)
    out(
      `${update.kept.length} earlier ids kept and served (edited or removed operations: ${[...new Set(update.kept.map((k) => k.operation))].join(", ")}); retire one with --retire <id> --reason "..."`,
    );
  out(`${Object.keys(update.manifest).length} trusted documents in ${MANIFEST}`);
  return 0;
}

if (process.argv[1] && realpathSync(process.argv[1]) === import.meta.filename) {
  // Not a top-level await: the tests load this file as CommonJS.
  main(process.argv.slice(2)).then((code) => (process.exitCode = code));
}
