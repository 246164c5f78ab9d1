import { removeLeftovers } from "./tempDirs.ts";

// Jest's globalTeardown: stops the PgBouncer and the embedded server
// globalSetup.ts started (if it did), and fails the run if it left a folder
// of its own in the temporary directory (removing it).
export default async function globalTeardown(): Promise<void> {
  await (globalThis as any).__cafeTestPgBouncer?.stop();
  await (globalThis as any).__cafeTestDatabase?.stop();
  const left = removeLeftovers();
  if (left.length) throw new Error(`the run left ${left.length} folder(s) in the temporary directory (now removed): ${left.join(", ")}: a process still writing into it when its test file finished?`);
}
