// S5 jobs. (a) jobs/s: the backlog S4 queued (3 jobs per accepted callback,
// cut to --s5-backlog) drained by the service's worker (src/main.ts
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
import { callbackStream } from "../lib/callbacks.ts";
import { sleep, summarize } from "../lib/stats.ts";
import { cpuMeter, type CpuShare } from "../lib/cpu.ts";

const now = () => performance.timeOrigin + performance.now();

const SERVICE_TASKS = ["start_preparation", "update_inventory", "notification__send_webhook"];

/** Polls the queue (jobs of `tasks`) until it is empty; jobs/s from the first completion seen to the last. */
async function drain(
  root: pg.Client,
  child: Child,
  tasks: string[],
  timeoutMs: number,
): Promise<{ jobs: number; seconds: number; jobsPerSec: number; left: number }> {
  const count = async () =>
    (
      await root.query(
        "select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = any($1)",
        [tasks],
      )
    ).rows[0].n as number;
  const initial = await count();
  const deadline = Date.now() + timeoutMs;
  let first: { t: number; n: number } | null = null;
  let last = initial;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited\n${child.logTail()}`);
    const n = await count();
    const t = now();
    if (!first && n < initial) first = { t, n };
    last = n;
    if (n === 0) break;
    await sleep(20);
  }
  const end = now();
  if (!first) return { jobs: 0, seconds: 0, jobsPerSec: 0, left: last };
  const jobs = first.n - last;
  const seconds = (end - first.t) / 1000;
  return { jobs, seconds, jobsPerSec: seconds > 0 ? jobs / seconds : 0, left: last };
}

export async function s5(ctx: Ctx): Promise<ScenarioResult> {
  const o = ctx.opts;
  const root = ctx.root;
  const notes: string[] = [];
  const accepted: string[] = ctx.shared.s4?.serviceAccepted ?? [];
  // The backlog: the jobs of the first accepted orders, at most --s5-backlog.
  const keep = accepted.slice(0, Math.max(1, Math.floor(o.s5Backlog / 3)));
  await root.query(
    `delete from graphile_worker._private_jobs j where not exists (
       select 1 from unnest($1::text[]) u(order_id) where j.key in ('start_preparation:' || u.order_id, 'update_inventory:' || u.order_id)
          or j.key in (select 'notification__send_webhook:' || n.id from app_public.notifications n where n.order_id::text = u.order_id))`,
    [keep],
  );
  const backlog = (await root.query("select count(*)::int as n from graphile_worker._private_jobs")).rows[0].n as number;
  if (backlog === 0) notes.push("S4 left no jobs: jobs/s of the service not measured");

  // (a) the service's worker drains the backlog.
  ctx.log(`S5: the service's worker drains ${backlog} jobs`);
  const worker = await startChild({
    name: "service-worker",
    script: path.join(ROOT, "src/main.ts"),
    args: ["--worker"],
    env: ctx.serviceEnv,
    logDir: ctx.logDir,
  });
  let serviceDrain: Awaited<ReturnType<typeof drain>>;
  let serviceCpu: CpuShare | undefined;
  let floorCpu: CpuShare | undefined;
  const serviceLatency: number[] = [];
  let missing = 0;
  let sentS5 = 0;
  try {
    const meter = cpuMeter(worker.proc.pid);
    serviceDrain = await drain(root, worker, SERVICE_TASKS, 180_000);
    serviceCpu = meter();
    if (serviceDrain.left) notes.push(`${serviceDrain.left} jobs still queued when the drain timed out`);
    const { rows: prepared } = await root.query("select count(*)::int as n from app_public.orders where id = any($1::uuid[]) and status = 'PREPARING'", [keep]);
    notes.push(`after the drain ${prepared[0].n} of ${keep.length} backlog orders are PREPARING`);

    // (b) callback answered -> PREPARING, at a fixed rate.
    const count = Math.max(5, Math.round(o.s5Rate * o.s5Seconds));
    const orders = await makePendingOrders(root, count + 2, "bench s5");
    const listener = new pg.Client({ connectionString: ctx.db.url });
    await listener.connect();
    const preparingAt = new Map<string, number>();
    listener.on("notification", (n) => {
      try {
        const p = JSON.parse(n.payload ?? "{}");
        if (p.status === "PREPARING" && !preparingAt.has(p.id)) preparingAt.set(p.id, performance.now());
      } catch {
        // ignore
      }
    });
    await listener.query(orders.map((x) => `listen "order_status:${x.id}";`).join(""));
    // A first callback proves the worker is listening for jobs.
    const warm = callbackStream(ctx.secrets, orders.slice(count));
    await runLoad({ baseUrl: base(ctx.service.port), request: warm.spec, connections: 1, seconds: 5, amount: 2 });
    const t0 = Date.now();
    while ([...warm.accepted.keys()].some((id) => !preparingAt.has(id)) && Date.now() - t0 < 10_000) await sleep(10);
    ctx.log(`S5: ${count} callbacks at ${o.s5Rate}/s, API and worker running`);
    const stream = callbackStream(ctx.secrets, orders.slice(0, count));
    await runLoad({
      baseUrl: base(ctx.service.port),
      request: stream.spec,
      connections: Math.min(4, o.connections),
      seconds: o.s5Seconds + 30,
      rate: o.s5Rate,
      amount: count,
    });
    sentS5 = stream.sent.length;
    const deadline = Date.now() + 30_000;
    while ([...stream.accepted.keys()].some((id) => !preparingAt.has(id)) && Date.now() < deadline) await sleep(20);
    for (const [id, answered] of stream.accepted) {
      const p = preparingAt.get(id);
      if (p === undefined) missing++;
      else serviceLatency.push(p - answered);
    }
    await listener.end();
  } finally {
    await worker.stop();
  }

  // Floor: graphile-worker with a no-op task, same backlog size, then the same rate.
  await root.query("delete from graphile_worker._private_jobs where locked_at is null");
  const floorJobs = Math.max(backlog, 3);
  await root.query("select graphile_worker.add_job('bench_noop', '{}'::json) from generate_series(1, $1::int)", [floorJobs]);
  ctx.log(`S5 floor: a no-op graphile-worker drains ${floorJobs} jobs`);
  const noop = await startChild({
    name: "floor-worker",
    script: path.join(ROOT, "bench/servers/workerNoop.ts"),
    env: { ...ctx.benchEnv, WORKER_CONCURRENCY: ctx.serviceEnv.WORKER_CONCURRENCY ?? "4" },
    logDir: ctx.logDir,
  });
  let floorDrain: Awaited<ReturnType<typeof drain>>;
  const floorLatency: number[] = [];
  try {
    const ready = readyByIpc(noop);
    const meter = cpuMeter(noop.proc.pid);
    floorDrain = await drain(root, noop, ["bench_noop"], 120_000);
    floorCpu = meter();
    await ready;
    const committed = new Map<number, number>();
    const done = new Map<number, number>();
    noop.onMessage((m) => {
      if (m?.type === "done") done.set(m.t, m.done);
    });
    const pool = new pg.Pool({ connectionString: ctx.db.urls.owner, max: 4 });
    const count = Math.max(5, Math.round(o.s5Rate * o.s5Seconds));
    const interval = 1000 / o.s5Rate;
    const start = performance.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = start + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      inflight.push(
        pool.query("select graphile_worker.add_job('bench_noop', json_build_object('t', $1::int))", [i]).then(() => {
          committed.set(i, now());
        }),
      );
    }
    await Promise.all(inflight);
    const deadline = Date.now() + 15_000;
    while (done.size < count && Date.now() < deadline) await sleep(10);
    for (const [i, t] of committed) {
      const d = done.get(i);
      if (d !== undefined) floorLatency.push(d - t);
    }
    await pool.end();
  } finally {
    await noop.stop();
  }

  const svcSummary = summarize(serviceLatency);
  const floorSummary = summarize(floorLatency);
  const rows: Row[] = [
    {
      scenario: "S5",
      case: "jobs: drain rate; callback answered -> PREPARING",
      variant: "service",
      label: `src/main.ts --worker (concurrency ${ctx.serviceEnv.WORKER_CONCURRENCY ?? 4}), the three real tasks`,
      opsPerSec: serviceDrain!.jobsPerSec,
      opsUnit: "jobs/s",
      throughputHow: `backlog of ${serviceDrain!.jobs} jobs (start_preparation, update_inventory, notification__send_webhook)`,
      p50: svcSummary.p50,
      p99: svcSummary.p99,
      latencyLoad: `${o.s5Rate} callbacks/s fixed`,
      cpu: serviceCpu,
      errors: missing,
      notes: [
        `${serviceLatency.length} of ${sentS5} callbacks timed (callback answered -> PREPARING notification); ${missing} accepted orders never reached PREPARING within 30 s`,
      ],
      raw: { drain: serviceDrain!, latency: svcSummary },
    },
    {
      scenario: "S5",
      case: "jobs: drain rate; callback answered -> PREPARING",
      variant: "floor",
      label: "graphile-worker, no-op task, same concurrency",
      opsPerSec: floorDrain!.jobsPerSec,
      opsUnit: "jobs/s",
      throughputHow: `backlog of ${floorDrain!.jobs} no-op jobs`,
      p50: floorSummary.p50,
      p99: floorSummary.p99,
      latencyLoad: `${o.s5Rate} jobs/s fixed (enqueue committed -> task ran)`,
      cpu: floorCpu,
      errors: Math.max(0, Math.round(o.s5Rate * o.s5Seconds) - floorLatency.length),
      notes: [],
      raw: { drain: floorDrain!, latency: floorSummary },
    },
  ];
  notes.push(
    "latency of the service: from the callback's HTTP answer (its transaction has committed the jobs) to the NOTIFY order_status:<id> with PREPARING that start_preparation's update sends; of the floor: from add_job's commit to the no-op task running",
  );
  return { id: "S5", title: "jobs", rows, notes };
}
