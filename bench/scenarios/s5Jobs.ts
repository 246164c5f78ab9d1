// S5 jobs. (a) jobs/s: the backlog S4 queued (3 jobs per accepted callback,
// cut to the profile's s5Backlog) drained by the service's worker (src/main.ts
// --worker, a process of its own); (b) callback answered -> order PREPARING
// (start_preparation done, seen by LISTEN on order_status:<id>) at a fixed
// callback rate, API and worker running. Floor: graphile-worker running a
// no-op task, with the same concurrency and poll interval: the same backlog
// size drained, and enqueue -> done at the same rate.
import path from "node:path";
import pg from "pg";
import { base, type Ctx, type Row, type ScenarioResult } from "../lib/context.ts";
import { ROOT, readyByIpc, startChild, type Child } from "../lib/proc.ts";
import { makePendingOrders } from "../lib/db.ts";
import { runLoad } from "../lib/load.ts";
import { callbackStream } from "./s4Callbacks.ts";
import { sleep, summarize } from "../lib/stats.ts";
import { cpuMeter } from "../lib/cpu.ts";

const now = () => performance.timeOrigin + performance.now();

/** Polls the queue (jobs of `tasks`) until it is empty; jobs/s from the first completion seen to the last. */
async function drain(root: pg.Client, child: Child, tasks: string[], timeoutMs: number) {
  const count = async () =>
    (await root.query("select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = any($1)", [tasks])).rows[0]
      .n as number;
  const meter = cpuMeter(child.proc.pid);
  let first: { t: number; n: number } | null = null;
  let left = await count();
  for (const [initial, deadline] = [left, Date.now() + timeoutMs]; left > 0 && Date.now() < deadline; await sleep(20)) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited\n${child.logTail()}`);
    left = await count();
    if (!first && left < initial) first = { t: now(), n: left };
  }
  const seconds = first ? (now() - first.t) / 1000 : 0;
  const jobs = first ? first.n - left : 0;
  return { jobs, seconds, jobsPerSec: seconds > 0 ? jobs / seconds : 0, left, cpu: meter() };
}

export async function s5(ctx: Ctx): Promise<ScenarioResult> {
  const o = ctx.opts;
  const root = ctx.root;
  const notes: string[] = [];
  const count = Math.max(5, Math.round(o.s5Rate * o.s5Seconds));
  const concurrency = ctx.serviceEnv.WORKER_CONCURRENCY ?? "4";
  // The backlog: the jobs of the first accepted orders, at most s5Backlog.
  const keep: string[] = (ctx.shared.s4?.serviceAccepted ?? []).slice(0, Math.max(1, Math.floor(o.s5Backlog / 3)));
  await root.query(
    `with kept as (
       select k || ':' || u.id as key from unnest($1::text[]) u(id), unnest(array['start_preparation', 'update_inventory']) k
       union all select 'notification__send_webhook:' || n.id from app_public.notifications n where n.order_id::text = any($1))
     delete from graphile_worker._private_jobs j where j.key is null or j.key not in (select key from kept)`,
    [keep],
  );
  const backlog = (await root.query("select count(*)::int as n from graphile_worker._private_jobs")).rows[0].n as number;
  if (backlog === 0) notes.push("S4 left no jobs: jobs/s of the service not measured");

  // (a) the service's worker drains the backlog.
  ctx.log(`S5: the service's worker drains ${backlog} jobs`);
  const worker = await startChild({ name: "service-worker", script: path.join(ROOT, "src/main.ts"), args: ["--worker"], env: { ...ctx.serviceEnv, WORKER_METRICS_PORT: "0" }, logDir: ctx.logDir });
  let serviceDrain: Awaited<ReturnType<typeof drain>>;
  const serviceLatency: number[] = [];
  let missing = 0;
  try {
    serviceDrain = await drain(root, worker, ["start_preparation", "update_inventory", "notification__send_webhook"], 180_000);
    if (serviceDrain.left) notes.push(`${serviceDrain.left} jobs still queued when the drain timed out`);
    const { rows: prepared } = await root.query("select count(*)::int as n from app_public.orders where id = any($1::uuid[]) and status = 'PREPARING'", [keep]);
    notes.push(`after the drain ${prepared[0].n} of ${keep.length} backlog orders are PREPARING`);

    // (b) callback answered -> PREPARING, at a fixed rate.
    const orders = await makePendingOrders(root, count + 2, "bench s5");
    const listener = new pg.Client({ connectionString: ctx.db.url });
    await listener.connect();
    const preparingAt = new Map<string, number>();
    listener.on("notification", (n) => {
      const p = JSON.parse(n.payload ?? "{}");
      if (p.status === "PREPARING" && !preparingAt.has(p.id)) preparingAt.set(p.id, performance.now());
    });
    await listener.query(orders.map((x) => `listen "order_status:${x.id}";`).join(""));
    const allPrepared = async (accepted: Map<string, number>, timeoutMs: number) => {
      for (const deadline = Date.now() + timeoutMs; [...accepted.keys()].some((id) => !preparingAt.has(id)) && Date.now() < deadline;) await sleep(10);
    };
    // A first callback proves the worker is listening for jobs.
    const warm = callbackStream(ctx.secrets, orders.slice(count));
    await runLoad({ baseUrl: base(ctx.service.port), request: warm.spec, connections: 1, seconds: 5, amount: 2 });
    await allPrepared(warm.accepted, 10_000);
    ctx.log(`S5: ${count} callbacks at ${o.s5Rate}/s, API and worker running`);
    const stream = callbackStream(ctx.secrets, orders.slice(0, count));
    await runLoad({ baseUrl: base(ctx.service.port), request: stream.spec, connections: Math.min(4, o.connections), seconds: o.s5Seconds, rate: o.s5Rate, amount: count });
    await allPrepared(stream.accepted, 30_000);
    for (const [id, answered] of stream.accepted) {
      const p = preparingAt.get(id);
      if (p === undefined) missing++;
      else serviceLatency.push(p - answered);
    }
    notes.push(`${serviceLatency.length} of ${stream.sent.length} callbacks timed; ${missing} accepted orders never reached PREPARING within 30 s`);
    await listener.end();
  } finally {
    await worker.stop();
  }

  // Floor: graphile-worker with a no-op task, same backlog size, then the same rate.
  await root.query("delete from graphile_worker._private_jobs where locked_at is null");
  const floorJobs = Math.max(backlog, 3);
  await root.query("select graphile_worker.add_job('bench_noop', '{}'::json) from generate_series(1, $1::int)", [floorJobs]);
  ctx.log(`S5 floor: a no-op graphile-worker drains ${floorJobs} jobs`);
  const env = { ...ctx.benchEnv, WORKER_CONCURRENCY: concurrency };
  const noop = await startChild({ name: "floor-worker", script: path.join(ROOT, "bench/servers/workerNoop.ts"), env, logDir: ctx.logDir });
  let floorDrain: Awaited<ReturnType<typeof drain>>;
  const floorLatency: number[] = [];
  try {
    const ready = readyByIpc(noop);
    floorDrain = await drain(root, noop, ["bench_noop"], 120_000);
    await ready;
    const done = new Map<number, number>();
    noop.onMessage((m) => m?.type === "done" && done.set(m.t, m.done));
    const pool = new pg.Pool({ connectionString: ctx.db.urls.owner, max: 4 });
    const committed: Array<Promise<number>> = [];
    for (let i = 0, start = performance.now(); i < count; i++) {
      const wait = start + (i * 1000) / o.s5Rate - performance.now();
      if (wait > 0) await sleep(wait);
      committed.push(pool.query("select graphile_worker.add_job('bench_noop', json_build_object('t', $1::int))", [i]).then(now));
    }
    const at = await Promise.all(committed);
    for (const deadline = Date.now() + 15_000; done.size < count && Date.now() < deadline;) await sleep(10);
    at.forEach((t, i) => done.has(i) && floorLatency.push(done.get(i)! - t));
    await pool.end();
  } finally {
    await noop.stop();
  }
  notes.push(
    "latency of the service: from the callback's HTTP answer (its transaction has committed the jobs) to the NOTIFY order_status:<id> with PREPARING that start_preparation's update sends; of the floor: from add_job's commit to the no-op task running",
  );

  const row = (variant: "service" | "floor", label: string, d: typeof floorDrain, what: string, latency: number[], latencyLoad: string, errors: number): Row => {
    const l = summarize(latency);
    return {
      ...{ scenario: "S5", case: "jobs: drain rate; callback answered -> PREPARING", variant, label, opsPerSec: d.jobsPerSec, opsUnit: "jobs/s" },
      ...{ throughputHow: `backlog of ${d.jobs} ${what}`, p50: l.p50, p99: l.p99, latencyLoad, cpu: d.cpu, errors, notes: [], raw: { drain: d, latency: l } },
    };
  };
  const rows = [
    row(
      "service",
      `src/main.ts --worker (concurrency ${concurrency}), the three real tasks`,
      serviceDrain!,
      "jobs (start_preparation, update_inventory, notification__send_webhook)",
      serviceLatency,
      `${o.s5Rate} callbacks/s fixed`,
      missing,
    ),
    row(
      "floor",
      "graphile-worker, no-op task, same concurrency",
      floorDrain!,
      "no-op jobs",
      floorLatency,
      `${o.s5Rate} jobs/s fixed (enqueue committed -> task ran)`,
      Math.max(0, count - floorLatency.length),
    ),
  ];
  return { id: "S5", title: "jobs", rows, notes };
}
