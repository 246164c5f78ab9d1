// Preloaded (node --import) into every process the bench starts.
// 1. When the bench goes away (its IPC channel closes), the process stops
//    itself with SIGTERM, so no server outlives an interrupted run.
// 2. When BENCH_SQL_CAPTURE names a file, SIGUSR2 switches capture on and off (a marker line is written
// each time); while on, every pg.Client#query is appended to the file as one
// JSON line {t, client, text, values, name?}. While off, the patched method only
// checks a boolean, so leaving the hook in a measured process costs nothing
// measurable. Used by bench/run.ts to see the SQL of one request at a time.
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";

if (process.connected) {
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"));
}

const file = process.env.BENCH_SQL_CAPTURE;
if (file) {
  const require = createRequire(process.cwd() + "/");
  const pg = require("pg");
  const proto = pg.Client.prototype;
  const original = proto.query;
  let enabled = false;
  let nextId = 1;
  const ids = new WeakMap<object, number>();
  process.on("SIGUSR2", () => {
    enabled = !enabled;
    appendFileSync(file, JSON.stringify({ marker: enabled ? "on" : "off", t: Date.now() }) + "\n");
  });
  proto.query = function patchedQuery(this: object, config: unknown, values?: unknown) {
    if (enabled) {
      try {
        let id = ids.get(this);
        if (!id) ids.set(this, (id = nextId++));
        const text = typeof config === "string" ? config : (config as { text?: string } | null)?.text;
        const vals = Array.isArray(values) ? values : (config as { values?: unknown[] } | null)?.values;
        const name = typeof config === "object" && config ? (config as { name?: string }).name : undefined;
        if (typeof text === "string") appendFileSync(file, JSON.stringify({ t: Date.now(), client: id, text, values: vals ?? [], ...(name ? { name } : {}) }) + "\n");
      } catch {
        // capture must never break the process under test
      }
    }
    // eslint-disable-next-line prefer-rest-params -- passes the call on exactly as it came
    return original.apply(this, arguments as never);
  };
}
