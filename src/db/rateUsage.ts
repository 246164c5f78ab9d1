import { randomUUID } from "node:crypto";
import os from "node:os";
import type pg from "pg";
import { statementAsSystem } from "./asSystem.ts";

// The request counts the API processes share (src/http/rateLimiter.ts): one
// statement, in the background, as cafe_system
// (app_hidden.share_rate_usage, migrations 000006 and 000012).

/** What this process counted for a key in its window. */
export interface KeyCount {
  key: string;
  used: number;
  /** Requests asked for under the key since the previous sync, refused ones included. */
  demand: number;
  budget: number;
  windowEndMs: number;
}

/** How far this process may go on for a key, in its window that ends at `windowEndMs`. */
export interface Ceiling {
  ceiling: number;
  windowEndMs: number;
}

/**
 * Sends this process's counts; answers how far it may go on for each key
 * (the keys sent, and keys not sent whose unused room it gives back) and how
 * many API processes are live.
 */
export type ShareCounts = (counts: KeyCount[], nowMs: number, unknownKeyPercent: number) => Promise<{ ceilings: Map<string, Ceiling>; live: number }>;

/** This process's name among the others: host, pid and a random part (two services may share a process in tests). */
export function rateProcessName(): string {
  return `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

export function shareRateUsage(pool: pg.Pool, processName = rateProcessName()): ShareCounts {
  return async (counts, nowMs, unknownKeyPercent) => {
    const { rows } = await statementAsSystem(pool, {
      text: "select key, ceiling, window_end_ms, live from app_hidden.share_rate_usage($1, $2, $3, $4, $5, $6, $7, $8)",
      values: [processName, nowMs, unknownKeyPercent, counts.map((c) => c.key), counts.map((c) => c.used), counts.map((c) => c.demand), counts.map((c) => c.budget), counts.map((c) => c.windowEndMs)],
    });
    const ceilings = new Map<string, Ceiling>();
    let live = 1;
    for (const r of rows as Array<{ key: string; ceiling: number; window_end_ms: string; live: number }>) {
      live = r.live;
      if (r.key !== "") ceilings.set(r.key, { ceiling: r.ceiling, windowEndMs: Number(r.window_end_ms) });
    }
    return { ceilings, live };
  };
}
