// What every scenario gets (options, the database, the processes under test,
// tokens) and the shape of what it returns.
import { readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import type { Options } from "./options.ts";
import type { BenchDatabase } from "./db.ts";
import { ask, type Child } from "./proc.ts";
import type { CpuShare } from "./cpu.ts";

export type Variant = "service" | "floor" | "peer" | "extra";

/** One line of the table: a variant of a case, its throughput and its latency at a stated load. */
export interface Row {
  scenario: string;
  case: string;
  variant: Variant;
  /** Who answers (e.g. "cafe-api", "node:http + pg"). */
  label: string;
  opsPerSec: number | null;
  opsUnit: string;
  throughputHow: string;
  p50: number | null;
  p99: number | null;
  latencyLoad: string;
  ratioOps?: number | null;
  ratioP50?: number | null;
  sql?: { statements: number; roundTrips: number; transactions: number } | null;
  /** CPU during the closed-loop run (bench/lib/cpu.ts). */
  cpu?: CpuShare;
  errors?: number;
  notes?: string[];
  raw?: Record<string, unknown>;
}

export interface ScenarioResult {
  id: string;
  title: string;
  rows: Row[];
  notes: string[];
  error?: string;
  seconds?: number;
  [extra: string]: unknown;
}

export interface Secrets {
  JWT_SECRET: string;
  WEBHOOK_TOKEN: string;
  SIGNING_SECRET: string;
  /** The service's STRIPE_WEBHOOK_SECRET (S4's Stripe row). */
  STRIPE_WEBHOOK_SECRET: string;
}

export interface Ctx {
  opts: Options;
  db: BenchDatabase;
  /** Superuser connection to the bench database (arranging and checking rows). */
  root: pg.Client;
  secrets: Secrets;
  /** Environment of the service's processes, and of the floors and the peer. */
  serviceEnv: Record<string, string>;
  benchEnv: Record<string, string>;
  logDir: string;
  service: Child;
  stock: Child;
  floorSql: Child;
  floorHttp: Child;
  tokens: { barista: string; alice: string; admin: string; customers: Array<{ id: string; token: string }> };
  coffeeIds: string[];
  /** Shared between scenarios (e.g. S4 -> S5). */
  shared: Record<string, any>;
  log(msg: string): void;
}

export const DEMO = {
  alice: "00000000-0000-4000-8000-00000000a11c",
  bob: "00000000-0000-4000-8000-000000000b0b",
  barista: "00000000-0000-4000-8000-0000000ba415",
  admin: "00000000-0000-4000-8000-0000000ad314",
} as const;

/** Apollo Client 4's default Accept (its HttpLink): S8's variant and S9's kiosks send it. */
export const APOLLO_ACCEPT = "application/graphql-response+json,application/json;q=0.9";

export const base = (port: number) => `http://127.0.0.1:${port}`;

export const gqlBody = (query: string, operationName?: string, variables?: Record<string, unknown>) => JSON.stringify({ query, operationName, variables });

export async function postJson(baseUrl: string, path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(baseUrl + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, text, json };
}

/**
 * Waits until a service answers GraphQL (`{ __typename }`): its /healthz
 * answers before its schema is built, and a request that meets the build on
 * a busy machine may wait seconds or have its connection reset.
 */
export async function readyForGraphql(baseUrl: string, timeoutMs = 180_000): Promise<void> {
  let last = "";
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    try {
      const r = await postJson(baseUrl, "/graphql", gqlBody("{ __typename }"));
      if (r.status === 200 && !r.json?.errors) return;
      last = `${r.status} ${r.text.slice(0, 200)}`;
    } catch (e) {
      last = String((e as Error & { cause?: Error }).cause?.message ?? e);
    }
  }
  throw new Error(`${baseUrl} did not answer GraphQL in ${timeoutMs} ms: ${last}`);
}

let manifest: Record<string, string> | undefined;

/** A POST body that runs a trusted document (contract/trusted-documents.json) by its id. */
export function trustedBody(operation: string, variables?: Record<string, unknown>): string {
  manifest ??= JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../contract/trusted-documents.json"), "utf8")) as Record<string, string>;
  // print()'s multi-line form (Codegen's one-line form is there too), the
  // newest: an edited operation's earlier ids stay in the manifest before it.
  // Apollo Client's form (`__typename` added, npm run documents) is left to Apollo.
  const named = Object.entries(manifest).filter(([, text]) => text.includes("\n") && new RegExp(`^(query|mutation|subscription) ${operation}\\b`).test(text));
  const plain = named.filter(([, text]) => !text.includes("__typename"));
  const found = plain.length ? plain : named;
  if (!found.length) throw new Error(`no trusted document named ${operation}`);
  return JSON.stringify({ documentId: found.at(-1)![0], variables });
}

/** Merges `patch` into the SQL spec of the floor server (bench/servers/floorSql.ts) and waits until it has it. */
export function sendFloorSpec(ctx: Ctx, patch: Record<string, unknown>): Promise<void> {
  ctx.shared.floorSpec = { ...ctx.shared.floorSpec, ...patch };
  return ask(ctx.floorSql, { type: "spec", spec: ctx.shared.floorSpec }, "spec-ok");
}
