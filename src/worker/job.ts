import type { JobHelpers, Task, TaskList } from "graphile-worker";
import type pg from "pg";
import { inTransactionAsSystem } from "../db/asSystem.ts";
import { jobQueueWait, jobRunTime, zeroJobMetrics } from "../metrics.ts";
import { inJobSpan } from "../tracing.ts";

/**
 * Every task timed (cafe_job_queue_wait_seconds from run_at to start,
 * cafe_job_run_seconds by outcome) and, while tracing is on, run in a span
 * that continues the trace its payload carries (`traceparent`, added where
 * it was queued: migration 000009-ops.sql).
 */
export function observedTasks(tasks: TaskList): TaskList {
  zeroJobMetrics(Object.keys(tasks));
  return Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, observed(name, task!)]));
}

function observed(name: string, task: Task): Task {
  const queueWait = jobQueueWait.labels({ task: name });
  const ran = { success: jobRunTime.labels({ task: name, outcome: "success" }), failure: jobRunTime.labels({ task: name, outcome: "failure" }) };
  return async (payload, helpers) => {
    const { job } = helpers;
    queueWait.observe(Math.max(0, Date.now() - new Date(job.run_at).getTime()) / 1000);
    const started = performance.now();
    let outcome: keyof typeof ran = "failure";
    try {
      const traceparent = (payload as { traceparent?: unknown } | null)?.traceparent;
      await inJobSpan(traceparent, `job ${name}`, { "cafe.job.task": name, "cafe.job.id": String(job.id), "cafe.job.attempt": job.attempts }, async () => {
        await task(payload, helpers);
      });
      outcome = "success";
    } finally {
      ran[outcome].observe((performance.now() - started) / 1000);
    }
  };
}

/** Runs `fn` in a transaction as cafe_system, the role the transition rules name for jobs. */
export function asSystemInJob<T>(helpers: JobHelpers, fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  return helpers.withPgClient((client) => inTransactionAsSystem(client, fn));
}

/** Reads `{ orderId }` from a job's payload, refusing anything else. */
export function orderIdOf(payload: unknown): string {
  const orderId = (payload as { orderId?: unknown } | null)?.orderId;
  if (typeof orderId !== "string" || !/^[0-9a-f-]{36}$/i.test(orderId)) {
    throw new Error(`payload has no valid orderId: ${JSON.stringify(payload)}`);
  }
  return orderId;
}
