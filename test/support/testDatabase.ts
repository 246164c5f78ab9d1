// Kept only for bench/lib/db.ts, which imports liftOpenOrderCaps from here:
// the test database's helpers live in db.ts (delete this file once bench
// imports db.ts).
export { liftOpenOrderCaps } from "./db.ts";
