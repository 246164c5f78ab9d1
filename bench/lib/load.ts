// Load generation, in the bench process. Peak throughput: autocannon, closed
// loop (each connection sends its next request when the last one is
// answered). Latency at a fixed rate: an open-loop generator, request i handed
// to the HTTP agent (at most N keep-alive connections) at t0 + i/rate and timed
// from then; autocannon's `overallRate` is a per-second budget per connection,
// fired back to back at the start of each second (bursts at full
// concurrency), so it is not used for that. Latencies are raw samples
// (autocannon's histogram has 1 ms steps). A response counts only when
// `check` accepts it (GraphQL answers 200 with "errors" too).
import http from "node:http";
import autocannon from "autocannon";
import { summarize, sleep, type Summary } from "./stats.ts";

export interface RequestSpec {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Called before each request: may return a new body/headers/path. */
  setup?: (ctx: Record<string, any>) => { body?: string; headers?: Record<string, string>; path?: string } | void;
  /** Whether an answer is good (default: 2xx without a GraphQL "errors" member). */
  check?: (status: number, body: string, ctx: Record<string, any>) => boolean;
}

export interface LoadResult {
  mode: "closed-loop" | "fixed-rate";
  rate?: number;
  seconds: number;
  good: number;
  bad: number;
  errors: number;
  timeouts: number;
  /** Good answers per second. */
  opsPerSec: number;
  latency: Summary;
  badSample?: string;
  /** Fixed-rate runs: how late the timer sent requests (ms). */
  generatorLagMs?: Summary;
  /** The latencies themselves (ms), with `keepSamples`: runs side by side are summarized together (mergeLoads). */
  samples?: number[];
}

export interface RunOptions {
  baseUrl: string;
  request: RequestSpec;
  connections: number;
  seconds: number;
  /** Open loop at this rate; closed loop without. */
  rate?: number;
  /** Stop after this many requests. */
  amount?: number;
  keepSamples?: boolean;
}

const defaultCheck = (status: number, body: string) => status >= 200 && status < 300 && !body.includes('"errors"');

export async function runLoad(o: RunOptions): Promise<LoadResult> {
  const check = o.request.check ?? defaultCheck;
  const samples: number[] = [];
  const lag: number[] = [];
  const r = { good: 0, bad: 0, errors: 0, timeouts: 0, badSample: undefined as string | undefined };
  const answered = (status: number, body: string, ctx: Record<string, any>) => {
    if (check(status, body, ctx)) r.good++;
    else {
      r.bad++;
      r.badSample ??= `${status} ${body.slice(0, 300)}`;
    }
  };
  const headers = { "content-type": "application/json", ...o.request.headers };
  const start = performance.now();
  if (o.rate) {
    const url = new URL(o.baseUrl);
    const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
    const total = o.amount ?? Math.max(1, Math.round(o.rate * o.seconds));
    const one = (due: number) =>
      new Promise<void>((resolve) => {
        const sentAt = performance.now();
        lag.push(sentAt - due);
        const ctx = {};
        const s = o.request.setup?.(ctx) ?? {};
        const body = s.body ?? o.request.body ?? "";
        const h = { ...headers, ...s.headers, "content-length": String(Buffer.byteLength(body)) };
        const req = http.request({ host: url.hostname, port: url.port, method: o.request.method ?? "POST", path: s.path ?? o.request.path, headers: h, agent, timeout: 10_000 }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            samples.push(performance.now() - sentAt);
            answered(res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"), ctx);
            resolve();
          });
        });
        req.on("timeout", () => (r.timeouts++, req.destroy(new Error("timeout"))));
        req.on("error", () => (r.errors++, resolve()));
        req.end(body);
      });
    const pending: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / o.rate;
      if (due > performance.now()) await sleep(due - performance.now());
      pending.push(one(due));
    }
    await Promise.all(pending);
    agent.destroy();
  } else {
    const setup = o.request.setup;
    const instance: any = autocannon({
      url: o.baseUrl,
      connections: o.connections,
      duration: o.seconds,
      ...(o.amount ? { amount: o.amount } : {}),
      sampleInt: 100, // autocannon notices the end of `duration` at its next sample tick
      timeout: 10,
      requests: [
        {
          method: (o.request.method ?? "POST") as "POST",
          path: o.request.path,
          headers,
          body: o.request.body,
          ...(setup && {
            setupRequest: (req: any, ctx: any) => {
              const s = setup(ctx) ?? {};
              return { ...req, ...s, headers: { ...headers, ...s.headers } };
            },
          }),
          onResponse: (status: number, body: string, ctx: any) => answered(status, body ?? "", ctx ?? {}),
        } as any,
      ],
    });
    instance.on("response", (_c: unknown, _s: number, _b: number, responseTime: number) => samples.push(responseTime));
    const result = await instance;
    r.errors = result.errors;
    r.timeouts = result.timeouts;
  }
  const seconds = (performance.now() - start) / 1000;
  return {
    mode: o.rate ? "fixed-rate" : "closed-loop",
    rate: o.rate && Math.round(o.rate),
    seconds,
    ...r,
    opsPerSec: r.good / seconds,
    latency: summarize(samples),
    ...(o.rate ? { generatorLagMs: summarize(lag) } : {}),
    ...(o.keepSamples ? { samples } : {}),
  };
}

/** Runs made side by side (kept with `keepSamples`, e.g. one per process) as one: counts and rates added, latencies summarized together. */
export function mergeLoads(runs: LoadResult[]): LoadResult {
  const sum = (k: "good" | "bad" | "errors" | "timeouts" | "opsPerSec") => runs.reduce((a, r) => a + r[k], 0);
  const lags = runs.filter((r) => r.generatorLagMs);
  return {
    mode: runs[0]!.mode,
    ...(runs[0]!.rate !== undefined ? { rate: runs.reduce((a, r) => a + (r.rate ?? 0), 0) } : {}),
    seconds: Math.max(...runs.map((r) => r.seconds)),
    ...{ good: sum("good"), bad: sum("bad"), errors: sum("errors"), timeouts: sum("timeouts"), opsPerSec: sum("opsPerSec") },
    latency: summarize(runs.flatMap((r) => r.samples ?? [])),
    badSample: runs.find((r) => r.badSample)?.badSample,
    ...(lags.length ? { generatorLagMs: { ...lags[0]!.generatorLagMs!, p99: Math.max(...lags.map((r) => r.generatorLagMs!.p99)) } } : {}),
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
