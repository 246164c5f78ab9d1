// Facts about the machine and the software under test, stored with every run.
import { execFileSync } from "node:child_process";
import os from "node:os";
import { readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { ROOT } from "./proc.ts";

const SETTINGS = ["shared_buffers", "max_connections", "synchronous_commit", "fsync", "work_mem", "jit", "random_page_cost", "effective_cache_size", "plan_cache_mode"];
const PACKAGES = ["postgraphile", "grafast", "grafserv", "graphile-worker", "pg", "graphql-ws", "ws", "autocannon"];

export async function machineFacts(root: pg.Client, server: string) {
  const { rows } = await root.query("select name, current_setting(name) as value from pg_settings where name = any($1)", [SETTINGS]);
  const version = (pkg: string) => JSON.parse(readFileSync(path.join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version as string;
  let gitCommit = "?";
  try {
    gitCommit = execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    // not a git checkout
  }
  return {
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "?",
    memoryGb: Math.round(os.totalmem() / 1e9),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: (await root.query("show server_version")).rows[0].server_version as string,
    postgresServer: server,
    postgresSettings: Object.fromEntries(rows.map((r) => [r.name, r.value])) as Record<string, string>,
    packages: Object.fromEntries(PACKAGES.map((p) => [p, version(p)])),
    gitCommit,
    loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}
