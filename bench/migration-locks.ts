// How long the migrations after the baseline hold locks on app_public.orders,
// on a baseline database holding many orders (on 200,000 orders
// 000002-stores.sql runs within a minute and the longest lock on orders is
// at most 1 s).
//
//   node scripts/node.mjs bench/migration-locks.ts [--orders 200000] [--url postgres://postgres@127.0.0.1:5432/cafe_migration_locks] [--from <database>]
//
// --from: copy a baseline database made before (createdb's template) instead
// of filling a new one (a minute for 200,000 orders).
// Without --url: the machine's PostgreSQL on 127.0.0.1:5432 when it answers,
// else the bench's embedded one. Builds the baseline database
// (test/support/baseline.ts), then applies the migrations while
// - a sampler reads pg_locks every 2 ms: for each transaction of the
//   migration that locks orders, from its first sample to its last, split
//   into those holding a lock that blocks writes (SHARE or stronger) and
//   those that do not (SHARE UPDATE EXCLUSIVE: a VALIDATE);
// - a reader and a writer (a SELECT of one order, an UPDATE of another's
//   notes) run one after another all along, each timed: what the café's
//   traffic waited.
// Prints the figures (docs/scaling.md quotes them), every transaction that
// locked orders in the order they ran, and the machine's load average: on a
// shared machine the scans' times follow the CPU they get.
import os from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { baselineDatabase, migrateToCurrent } from "../test/support/baseline.ts";
import { loadConfig } from "../src/config.ts";
import { resolveDatabaseUrls } from "../src/db/database.ts";
import { openBenchDatabase } from "./lib/db.ts";

/** The lock modes that conflict with ROW EXCLUSIVE (an UPDATE's). */
const BLOCKS_WRITES = new Set(["ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"]);

const { values } = parseArgs({ options: { orders: { type: "string", default: "200000" }, url: { type: "string" }, from: { type: "string" } } });
const orders = Number(values.orders);

const bench = await openBenchDatabase(values.url, "cafe_migration_locks");
try {
  let started = Date.now();
  const urls = values.from ? await copyOf(bench.url, values.from) : await baselineDatabase(bench.url, orders);
  console.log(`baseline database with ${orders} orders ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const watcher = new pg.Client({ connectionString: bench.url });
  const reader = new pg.Client({ connectionString: bench.url });
  const writer = new pg.Client({ connectionString: bench.url });
  await Promise.all([watcher.connect(), reader.connect(), writer.connect()]);
  const counts = await watcher.query("select (select count(*) from app_public.orders) as orders, (select count(*) from app_public.order_events) as events");
  console.log(`orders ${counts.rows[0].orders}, order events ${counts.rows[0].events}`);
  const some = (await watcher.query("select id from app_public.orders order by id limit 2")).rows.map((r) => r.id);

  let running = true;
  const held: Sample[] = [];
  const waits = { read: [] as number[], write: [] as number[] };
  const sample = (async () => {
    while (running) {
      const { rows } = await watcher.query(
        `select l.virtualtransaction as tx, string_agg(distinct l.mode, ', ' order by l.mode) as modes from pg_locks l
          join pg_stat_activity a on a.pid = l.pid
         where l.relation = 'app_public.orders'::regclass and l.granted and a.application_name = 'cafe-migration-locks'
         group by l.virtualtransaction`,
      );
      const at = performance.now();
      for (const r of rows) held.push({ at, tx: r.tx, modes: r.modes });
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const traffic = (async () => {
    while (running) {
      let t0 = performance.now();
      await reader.query("select status from app_public.orders where id = $1", [some[0]]);
      waits.read.push(performance.now() - t0);
      t0 = performance.now();
      await writer.query("update app_public.orders set notes = notes where id = $1", [some[1]]);
      waits.write.push(performance.now() - t0);
    }
  })();

  process.env.PGAPPNAME = "cafe-migration-locks";
  const migrating = { ...urls, owner: withAppName(urls.owner) };
  const loadBefore = os.loadavg()[0]!;
  started = performance.now();
  await migrateToCurrent(migrating);
  const took = performance.now() - started;
  running = false;
  await Promise.all([sample, traffic]);
  await Promise.all([watcher.end(), reader.end(), writer.end()]);

  const max = (xs: number[]) => Math.max(0, ...xs);
  console.log(`migrations applied in ${(took / 1000).toFixed(2)} s`);
  // Each transaction's locks on orders, from its first sample to its last.
  const txs = [...new Set(held.map((h) => h.tx))].map((tx) => span(held.filter((h) => h.tx === tx)));
  const longest = (xs: Array<{ ms: number; modes: string[] }>) => xs.reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, modes: [] as string[] });
  const blocking = longest(txs.filter((x) => x.modes.some((m) => BLOCKS_WRITES.has(m))));
  const other = longest(txs.filter((x) => !x.modes.some((m) => BLOCKS_WRITES.has(m))));
  console.log(`${txs.length} transactions of the migration locked orders (sampled every ~2 ms), in order:`);
  for (const x of txs) console.log(`  ${x.ms.toFixed(0).padStart(6)} ms  ${x.modes.some((m) => BLOCKS_WRITES.has(m)) ? "blocks writes " : "blocks neither"}  ${x.modes.join(", ")}`);
  console.log(`longest holding a lock that blocks the café's writes (SHARE or stronger): ${blocking.ms.toFixed(0)} ms (${blocking.modes.join(", ")})`);
  console.log(`longest holding only locks that block neither reads nor writes: ${other.ms.toFixed(0)} ms (${other.modes.join(", ") || "none"})`);
  console.log(`machine load (1-minute average, ${os.cpus().length} CPUs) at the start and the end: ${loadBefore.toFixed(1)} / ${os.loadavg()[0]!.toFixed(1)}`);
  console.log(
    `the café's traffic during it: slowest read of an order ${max(waits.read).toFixed(0)} ms (${waits.read.length} reads), slowest update of an order ${max(waits.write).toFixed(0)} ms (${waits.write.length} updates)`,
  );
} finally {
  await bench.stopServer();
}

/** From the first sample to the last (the migration's phases follow each other), with the modes seen. */
interface Sample {
  at: number;
  tx: string;
  modes: string;
}

function span(samples: Sample[]): { ms: number; modes: string[] } {
  if (!samples.length) return { ms: 0, modes: [] };
  return { ms: samples[samples.length - 1]!.at - samples[0]!.at, modes: [...new Set(samples.flatMap((h) => h.modes.split(", ")))].sort() };
}

/** A copy of database `template` (at the baseline) as the bench database. */
async function copyOf(url: string, template: string) {
  const root = new URL(url);
  const name = root.pathname.slice(1);
  root.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: root.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${pg.escapeIdentifier(name)}`);
    await admin.query(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(template)}`);
  } finally {
    await admin.end();
  }
  return resolveDatabaseUrls(loadConfig({ NODE_ENV: "development" }), url);
}

function withAppName(url: string): string {
  const u = new URL(url);
  u.searchParams.set("application_name", "cafe-migration-locks");
  return u.toString();
}
