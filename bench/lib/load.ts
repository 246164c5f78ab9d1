// Load generation, in the bench process (every server under test is another
// process). Peak throughput: autocannon, closed loop (N connections, each
// sends its next request when the last one is answered). Latency at a fixed
// rate: by default a paced open-loop generator (request i is due at
// t0 + i/rate, sent on a keep-alive connection, at most N; latency counts from
// the due time, so a server that falls behind is not flattered), because
// autocannon's `overallRate` is a per-second budget per connection: each
// connection fires its share back to back at the start of every second, so
// its "fixed rate" latency is the latency of a burst at full concurrency.
// `--rate-generator autocannon` uses overallRate anyway. Latencies are kept as
// raw samples at full precision (autocannon's histogram has 1 ms steps). A
// response counts as good only when `check` accepts it (GraphQL answers 200
// with "errors" too).
import http from "node:http";
import autocannon from "autocannon";
import { summarize, sleep, type Summary } from "./stats.ts";

export interface RequestSpec {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Called before each request: may return a new body/headers. `ctx` is autocannon's per-connection context. */
  setup?: (ctx: Record<string, any>) => { body?: string; headers?: Record<string, string>; path?: string } | void;
  /** Whether an answer is good (default: 2xx without a GraphQL "errors" member). */
  check?: (status: number, body: string, ctx: Record<string, any>) => boolean;
}

export interface LoadResult {
  mode: "closed-loop" | "fixed-rate";
  connections: number;
  /** Requested rate (fixed-rate runs). */
  rate?: number;
  seconds: number;
  sent: number;
  good: number;
  bad: number;
  errors: number;
  timeouts: number;
  /** Good answers per second. */
  opsPerSec: number;
  latency: Summary;
  badSample?: string;
  /** Paced runs: how late the timer sent requests (ms). */
  generatorLagMs?: Summary;
}

export interface RunOptions {
  baseUrl: string;
  request: RequestSpec;
  connections: number;
  seconds: number;
  rate?: number;
  /** Stop after this many requests (when given, the run ends at whichever comes first). */
  amount?: number;
}

const defaultCheck = (status: number, body: string) => status >= 200 && status < 300 && !body.includes('"errors"');

export type RateGenerator = "paced" | "autocannon";
let rateGenerator: RateGenerator = "paced";
export function useRateGenerator(g: RateGenerator): void {
  rateGenerator = g;
}

export async function runLoad(o: RunOptions): Promise<LoadResult> {
  if (o.rate && rateGenerator === "paced") return runPaced(o as RunOptions & { rate: number });
  return runAutocannon(o);
}

/**
 * Open loop at a fixed rate: request i is due at t0 + i/rate (sent by a timer,
 * so up to a millisecond or two late: `lag`). Latency counts from the moment
 * the request is handed to the HTTP agent, so waiting for one of the N
 * connections counts, the timer's own lateness does not.
 */
async function runPaced(o: RunOptions & { rate: number }): Promise<LoadResult> {
  const check = o.request.check ?? defaultCheck;
  const url = new URL(o.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  const total = o.amount ?? Math.max(1, Math.round(o.rate * o.seconds));
  const interval = 1000 / o.rate;
  const samples: number[] = [];
  let good = 0;
  let bad = 0;
  let errors = 0;
  let timeouts = 0;
  let badSample: string | undefined;
  const lag: number[] = [];
  const one = (due: number) =>
    new Promise<void>((resolve) => {
      const sentAt = performance.now();
      lag.push(sentAt - due);
      const ctx: Record<string, any> = {};
      const r = o.request.setup?.(ctx) ?? {};
      const body = r.body ?? o.request.body ?? "";
      const headers = {
        "content-type": "application/json",
        ...(o.request.headers ?? {}),
        ...(r.headers ?? {}),
        "content-length": String(Buffer.byteLength(body)),
      };
      const req = http.request(
        { host: url.hostname, port: url.port, method: o.request.method ?? "POST", path: r.path ?? o.request.path, headers, agent, timeout: 10_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            samples.push(performance.now() - sentAt);
            if (check(res.statusCode ?? 0, text, ctx)) good++;
            else {
              bad++;
              badSample ??= `${res.statusCode} ${text.slice(0, 300)}`;
            }
            resolve();
          });
        },
      );
      req.on("timeout", () => {
        timeouts++;
        req.destroy(new Error("timeout"));
      });
      req.on("error", () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  const pending: Promise<void>[] = [];
  const start = performance.now();
  let i = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        pending.push(one(start + i * interval));
        i++;
      }
      if (i >= total) return resolve();
      setTimeout(tick, Math.max(0, Math.min(interval, start + i * interval - performance.now())));
    };
    tick();
  });
  await Promise.all(pending);
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  return {
    mode: "fixed-rate",
    connections: o.connections,
    rate: Math.round(o.rate),
    seconds,
    sent: total,
    good,
    bad,
    errors,
    timeouts,
    opsPerSec: good / seconds,
    latency: summarize(samples),
    badSample,
    generatorLagMs: summarize(lag),
  };
}

async function runAutocannon(o: RunOptions): Promise<LoadResult> {
  const check = o.request.check ?? defaultCheck;
  const samples: number[] = [];
  let good = 0;
  let bad = 0;
  let badSample: string | undefined;
  const headers = { "content-type": "application/json", ...(o.request.headers ?? {}) };
  const started = process.hrtime.bigint();
  const instance: any = autocannon({
    url: o.baseUrl,
    connections: o.connections,
    duration: o.seconds,
    // autocannon notices the end of `duration` at its next sample tick (1 s by default).
    sampleInt: 100,
    ...(o.amount ? { amount: o.amount } : {}),
    ...(o.rate ? { overallRate: Math.max(1, Math.round(o.rate)) } : {}),
    timeout: 10,
    pipelining: 1,
    requests: [
      {
        method: (o.request.method ?? "POST") as "POST",
        path: o.request.path,
        headers,
        body: o.request.body,
        ...(o.request.setup
          ? {
              setupRequest: (req: any, ctx: any) => {
                const r = o.request.setup!(ctx);
                if (!r) return req;
                return {
                  ...req,
                  ...(r.path ? { path: r.path } : {}),
                  ...(r.body !== undefined ? { body: r.body } : {}),
                  headers: { ...headers, ...(r.headers ?? {}) },
                };
              },
            }
          : {}),
        onResponse: (status: number, body: string, ctx: any) => {
          if (check(status, body ?? "", ctx ?? {})) good++;
          else {
            bad++;
            badSample ??= `${status} ${String(body).slice(0, 300)}`;
          }
        },
      } as any,
    ],
  } as any);
  instance.on("response", (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    samples.push(responseTime);
  });
  const result: any = await instance;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const elapsed = seconds;
  return {
    mode: o.rate ? "fixed-rate" : "closed-loop",
    connections: o.connections,
    rate: o.rate ? Math.round(o.rate) : undefined,
    seconds: elapsed,
    sent: good + bad,
    good,
    bad,
    errors: result.errors ?? 0,
    timeouts: result.timeouts ?? 0,
    opsPerSec: good / elapsed,
    latency: summarize(samples),
    badSample,
  };
}

/** A short unrecorded run first, then the measured one (`onStart` just before it). */
export async function measure(o: RunOptions & { warmupSeconds: number; onStart?: () => void }): Promise<LoadResult> {
  if (o.warmupSeconds > 0) {
    await runLoad({ ...o, seconds: o.warmupSeconds, amount: undefined });
    await sleep(100);
  }
  o.onStart?.();
  return runLoad(o);
}

/** Closed loop for peak throughput, then a fixed rate for latency. */
export interface PeakAndLatency {
  peak: LoadResult;
  latency: LoadResult;
}
