import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import http from "node:http";
import path from "node:path";
import pg from "pg";
import { operationsOf, testDatabaseUrl, type TestService } from "./harness.ts";

// Helpers for the subscription and payment-callback suites: polling, the
// server's LISTEN side, fresh coffees with their own stocked ingredient (so
// stock checks are exact whatever other suites do), and a provider that
// signs its callbacks exactly as README "Payment callbacks" says.

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value (returned) or the time runs out (throws with `what`). */
export async function waitUntil<T>(what: string, check: () => Promise<T> | T, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}

/**
 * Waits until the API process LISTENs to every topic (the subscriber has
 * registered it and its LISTEN statement has run), so a change made now
 * cannot slip past a subscription that is still being set up.
 */
export async function listening(t: TestService, topics: string[], timeoutMs = 5000): Promise<void> {
  const subscriber = t.service.api!.subscriber;
  await waitUntil(`LISTEN on ${topics.join(", ")}`, () => topics.every((topic) => subscriber.listeningTopics.includes(topic)), timeoutMs, 10);
  // Statements on the LISTEN connection run one after another on this chain.
  await (subscriber as unknown as { chain?: Promise<unknown> }).chain;
  await sleep(30);
}

/** The LISTEN channels of the server's own LISTEN connection (pg_listening_channels() is per session). */
export async function listenChannels(t: TestService): Promise<string[] | null> {
  const client = (t.service.api!.subscriber as unknown as { client?: { query(text: string): Promise<{ rows: Array<{ c: string }> }> } | null }).client;
  if (!client) return null;
  const { rows } = await client.query("select pg_listening_channels() as c");
  return rows.map((r) => r.c).sort();
}

/** Every error a subscription produced: in `next` payloads or as the `error` message. */
export function errorsOf(sub: { results: Array<{ errors?: any[] }>; error: unknown }): any[] {
  const fromNext = sub.results.flatMap((r) => r.errors ?? []);
  const e = sub.error as any;
  const fromError = Array.isArray(e) ? e : e ? [e] : [];
  return [...fromNext, ...fromError];
}

let coffeeSerial = 0;

export interface StockedCoffee {
  id: string;
  name: string;
  price: string;
  ingredientId: string;
  /** Recipe: this much of the ingredient per cup. */
  perCup: number;
}

/** A coffee on sale with a recipe of one ingredient of its own, stocked with `stock`. Arranged as the owner. */
export async function stockedCoffee(t: TestService, label: string, price: string, perCup: number, stock = 1_000_000): Promise<StockedCoffee> {
  coffeeSerial += 1;
  const tag = `${label} ${process.pid}-${Date.now().toString(36)}-${coffeeSerial}`;
  const client = await t.db.connect();
  try {
    await client.query("begin");
    const roaster = (await client.query("select id from app_public.roasters order by name limit 1")).rows[0].id;
    const ingredientId = (await client.query("insert into app_public.ingredients (name) values ($1) returning id", [`Beans for ${tag}`])).rows[0].id;
    await client.query("insert into app_public.stock_items (ingredient_id, current_stock, alert_level, unit) values ($1, $2, 0, 'g')", [ingredientId, stock]);
    const id = (
      await client.query("insert into app_public.coffees (name, price, roaster_id) values ($1, $2, $3) returning id", [`Coffee ${tag}`, price, roaster])
    ).rows[0].id;
    await client.query("insert into app_public.recipe_lines (coffee_id, ingredient_id, quantity) values ($1, $2, $3)", [id, ingredientId, perCup]);
    await client.query("commit");
    return { id, name: `Coffee ${tag}`, price, ingredientId, perCup };
  } catch (e) {
    await client.query("rollback");
    throw e;
  } finally {
    client.release();
  }
}

/** Places an order with the mobile app's PlaceOrder as the token's user; returns its id and total (text, 2 decimals). */
export async function placeOrder(t: TestService, token: string, items: Array<{ coffeeId: string; quantity: number }>): Promise<{ id: string; total: string }> {
  const r = await t.gql(operationsOf("mobile"), { operationName: "PlaceOrder", variables: { input: { items } }, token });
  const order = r.body.data?.createOrder;
  if (!order || order.status !== "PENDING") throw new Error(`createOrder failed: ${JSON.stringify(r.body.errors)}`);
  return { id: order.id, total: Number(order.total).toFixed(2) };
}

export interface Delivery {
  status: number;
  text: string;
  body: any;
  headers: Headers;
}

export interface SendOptions {
  /** The bearer token; null sends no Authorization header. Default: the webhook token. */
  token?: string | null;
  /** A whole Authorization header value (overrides token). */
  authorization?: string;
  /** The secret to sign with; default the service's SIGNING_SECRET. */
  secret?: string;
  /** An X-Signature value as is; null sends none. Default: a valid signature of the bytes sent. */
  signature?: string | null;
  /** Sign these bytes instead of the ones sent. */
  signBytes?: Buffer | string;
  contentType?: string | null;
  headers?: Record<string, string>;
}

export function hmacHex(secret: string, bytes: Buffer | string): string {
  return createHmac("sha256", secret).update(bytes).digest("hex");
}

/** Where callbacks go: a service's URL and the secrets it was configured with. */
export interface CallbackTarget {
  url: string;
  config: { WEBHOOK_TOKEN: string; SIGNING_SECRET: string };
}

/** POSTs a callback as the provider would: the exact bytes sent are the bytes signed. */
export async function sendCallback(t: CallbackTarget, body: unknown, options: SendOptions = {}): Promise<Delivery> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === "string" ? body : JSON.stringify(body), "utf8");
  const headers: Record<string, string> = { ...options.headers };
  const contentType = options.contentType === undefined ? "application/json" : options.contentType;
  if (contentType !== null) headers["content-type"] = contentType;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else {
    const token = options.token === undefined ? t.config.WEBHOOK_TOKEN : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
  }
  if (options.signature !== null) {
    headers["x-signature"] = options.signature ?? `sha256=${hmacHex(options.secret ?? t.config.SIGNING_SECRET, options.signBytes ?? bytes)}`;
  }
  const res = await fetch(`${t.url}/orders/payment-callback`, { method: "POST", headers, body: new Uint8Array(bytes) });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed, headers: res.headers };
}

/** Sends a body in chunks with no Content-Length (chunked transfer), signed over all of it. */
export function sendChunked(t: CallbackTarget, chunks: Buffer[], options: { secret?: string } = {}): Promise<Delivery> {
  const whole = Buffer.concat(chunks);
  const url = new URL(`${t.url}/orders/payment-callback`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${t.config.WEBHOOK_TOKEN}`,
          "x-signature": `sha256=${hmacHex(options.secret ?? t.config.SIGNING_SECRET, whole)}`,
          "transfer-encoding": "chunked",
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d) => parts.push(d));
        res.on("end", () => {
          const text = Buffer.concat(parts).toString("utf8");
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, body, headers: new Headers(res.headers as Record<string, string>) });
        });
      },
    );
    // The server may answer (413) and close before every chunk is written:
    // a write error then is expected; only no answer at all is a failure.
    let answered = false;
    req.on("response", () => (answered = true));
    req.on("error", (err) => setTimeout(() => answered || reject(err), 1000));
    let i = 0;
    const writeNext = () => {
      if (i >= chunks.length) return void req.end();
      const ok = req.write(chunks[i++]);
      if (ok) setImmediate(writeNext);
      else req.once("drain", writeNext);
    };
    writeNext();
  });
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

const ROOT = path.resolve(__dirname, "../..");

export interface SpawnedApi {
  url: string;
  wsUrl: string;
  pid: number;
  /** The last lines it logged (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Runs the API as a separate OS process (`src/main.ts --api`, as
 * `npm run start:api` does) on the test database, and waits until it listens.
 */
export function spawnApi(env: Record<string, string> = {}): Promise<SpawnedApi> {
  const child = spawn(process.execPath, ["src/main.ts", "--api"], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "test",
      DATABASE_URL: testDatabaseUrl(),
      HOST: "127.0.0.1",
      PORT: "0",
      DEMO_DATA: "false",
      RUN_WORKER: "false",
      GRAPHQL_RATE_LIMIT: "0",
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) lines.push(line);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the spawned API did not start in 60 s:\n${lines.slice(-20).join("\n")}`));
    }, 60_000);
    child.stderr.on("data", keep);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the spawned API exited (${code}):\n${lines.slice(-20).join("\n")}`));
    });
    child.stdout.on("data", (chunk: Buffer) => {
      keep(chunk);
      for (const line of chunk.toString("utf8").split("\n")) {
        let entry: { msg?: string; port?: number } | undefined;
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if (entry?.msg === "API listening" && entry.port) {
          clearTimeout(timer);
          const port = entry.port;
          resolve({
            url: `http://127.0.0.1:${port}`,
            wsUrl: `ws://127.0.0.1:${port}/graphql`,
            pid: child.pid!,
            log: () => lines.slice(-40).join("\n"),
            async stop() {
              if (child.exitCode === null && child.signalCode === null) {
                child.kill("SIGTERM");
                const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
                await exited;
                clearTimeout(killer);
              }
            },
          });
        }
      }
    });
  });
}

/**
 * Waits until some backend on the test database has LISTENed to `topic` as
 * its latest statement: how a test knows that another process's
 * subscription is live. Needs a superuser to see other roles' statements.
 */
export async function waitForListen(topic: string, options: { excludePids?: number[]; timeoutMs?: number } = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await waitUntil(
      `a LISTEN on ${topic}`,
      async () =>
        (
          await client.query(
            "select 1 from pg_stat_activity where datname = current_database() and state = 'idle' and query = $1 and pid <> all($2::int[])",
            [`listen ${pg.escapeIdentifier(topic)}`, options.excludePids ?? []],
          )
        ).rowCount! > 0,
      timeoutMs,
      20,
    );
  } finally {
    await client.end();
  }
}

/** The backend pid of an in-process API's LISTEN connection. */
export function listenerPid(t: TestService): number | null {
  return (t.service.api!.subscriber as unknown as { client?: { processID?: number } | null }).client?.processID ?? null;
}

/** Open streams per topic on an in-process API's subscriber (each subscription holds one). */
export function openStreams(t: TestService): number {
  const topics = (t.service.api!.subscriber as unknown as { topics: Map<string, Set<unknown>> }).topics;
  let n = 0;
  for (const set of topics.values()) n += set.size;
  return n;
}

/** A GraphQL POST to any API's URL. */
export async function gqlAt(url: string, query: string, options: { variables?: Record<string, unknown>; token?: string; operationName?: string } = {}) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    body: JSON.stringify({ query, variables: options.variables, operationName: options.operationName }),
  });
  return { status: res.status, body: (await res.json()) as { data?: any; errors?: any[] } };
}
