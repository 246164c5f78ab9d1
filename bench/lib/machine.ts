// Facts about the machine and the software under test, stored with every run.
import os from "node:os";
import { readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { ROOT } from "./proc.ts";

const versionOf = (pkg: string) => {
  try {
    return JSON.parse(readFileSync(path.join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version as string;
  } catch {
    return "?";
  }
};

export async function machineFacts(root: pg.Client, server: string) {
  const { rows } = await root.query(
    `select version() as version, current_setting('server_version') as server_version,
            current_setting('shared_buffers') as shared_buffers, current_setting('max_connections') as max_connections,
            current_setting('synchronous_commit') as synchronous_commit, current_setting('fsync') as fsync,
            current_setting('work_mem') as work_mem, current_setting('jit') as jit,
            current_setting('random_page_cost') as random_page_cost, current_setting('effective_cache_size') as effective_cache_size,
            current_setting('plan_cache_mode') as plan_cache_mode`,
  );
  const cpus = os.cpus();
  let gitCommit = "?";
  try {
    const head = readFileSync(path.join(ROOT, ".git/HEAD"), "utf8").trim();
    gitCommit = head.startsWith("ref: ") ? readFileSync(path.join(ROOT, ".git", head.slice(5)), "utf8").trim() : head;
  } catch {
    // not a git checkout
  }
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? "?",
    memoryGb: Math.round(os.totalmem() / 1e9),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: rows[0].server_version,
    postgresFull: rows[0].version,
    postgresServer: server,
    postgresSettings: {
      shared_buffers: rows[0].shared_buffers,
      max_connections: rows[0].max_connections,
      synchronous_commit: rows[0].synchronous_commit,
      fsync: rows[0].fsync,
      work_mem: rows[0].work_mem,
      jit: rows[0].jit,
      random_page_cost: rows[0].random_page_cost,
      effective_cache_size: rows[0].effective_cache_size,
      plan_cache_mode: rows[0].plan_cache_mode,
    },
    packages: Object.fromEntries(
      ["postgraphile", "grafast", "grafserv", "graphile-worker", "pg", "graphql-ws", "ws", "autocannon"].map((p) => [p, versionOf(p)]),
    ),
    gitCommit,
    loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}
