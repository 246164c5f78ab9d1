// Jest's globalTeardown: stops the PgBouncer and the embedded server globalSetup.ts started (if it did).
export default async function globalTeardown(): Promise<void> {
  await (globalThis as any).__cafeTestPgBouncer?.stop();
  await (globalThis as any).__cafeTestDatabase?.stop();
}
