import { boundedCache, textBytes, type BoundedCache, type CacheBounds } from "../../common/boundedCache.ts";
import { MEMORY_BOUNDS } from "../config.ts";
import { accessLogger, logger } from "../logger.ts";

// Refusals are counted, not each logged: a flood of refused requests
// (over a limit, blocked, unsigned, too large, not trusted...) writes one
// line per source and reason per interval, with the count, where each
// refusal used to write its own. The first refusal of a source and reason
// is written at once (an operator sees it start); those after it within the
// interval are counted, and written as one line once the interval is over
// (at the next refusal, or by the timer), so no two lines of one source and
// reason are closer than the interval. Successes keep their access-log
// lines (src/http/accessLog.ts).
//
// Every refusal goes through here: the access log's (any 4xx, and 503),
// the connection cap's, the WebSocket upgrade's. The counts are a bounded
// cache (MEMORY_BOUNDS.refusalLog, in /metrics as cache="refusal_log"); the
// counts of a source it drops are written in the next "others" line.

/** How often a source and reason's refusals are written at most. */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** What one line says beside the counts: the bounded facts of the refusal. */
export interface RefusalFacts {
  route?: string;
  status?: number;
  method?: string;
}

interface Pending {
  source: string;
  reason: string;
  facts: RefusalFacts;
  /** Refusals since the last line. */
  count: number;
  /** When the last line of this source and reason was written (0: never). */
  loggedAt: number;
  /** When the first refusal counted in `count` came. */
  since: number;
}

export interface RefusalLogOptions {
  intervalMs?: number;
  bounds?: CacheBounds;
  now?: () => number;
  /** Where a line goes (default: the access log, at warn for a 5xx, else info). */
  write?: (line: { source: string; reason: string; refused: number; sinceMs: number } & RefusalFacts) => void;
}

const defaultWrite: NonNullable<RefusalLogOptions["write"]> = (line) => {
  const level = (line.status ?? 0) >= 500 ? "warn" : "info";
  // The access log's stream, at the level the process logs (src/logger.ts).
  if (logger.isLevelEnabled(level)) accessLogger[level](line, "refused");
};

export class RefusalLog {
  private readonly pending: BoundedCache<string, Pending>;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly write: NonNullable<RefusalLogOptions["write"]>;
  /** Refusals counted for sources the cache dropped before they were written. */
  private dropped = 0;
  private droppedSince = 0;
  private droppedLoggedAt = 0;
  private readonly timer: NodeJS.Timeout;

  constructor({ intervalMs = REFUSAL_LOG_INTERVAL_MS, bounds = MEMORY_BOUNDS.refusalLog, now = Date.now, write = defaultWrite }: RefusalLogOptions = {}) {
    this.intervalMs = intervalMs;
    this.now = now;
    this.write = write;
    this.pending = boundedCache("refusal_log", {
      ...bounds,
      bytesOf: (p, key) => textBytes(key) + textBytes(p.source) + 160,
      onRemove: (p, _key, reason) => {
        if (reason === "set" || !p.count) return;
        if (!this.dropped) this.droppedSince = p.since;
        this.dropped += p.count;
      },
    });
    this.timer = setInterval(() => this.flush(), Math.max(10, Math.floor(intervalMs / 2)));
    this.timer.unref();
  }

  /** Counts one refusal of `source` for `reason` (a fixed word: an error code, a route's own); writes a line when one is due. */
  note(source: string, reason: string, facts: RefusalFacts = {}): void {
    const now = this.now();
    const key = `${reason}\u0000${source}`;
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { source, reason, facts, count: 0, loggedAt: 0, since: now }));
    if (!p.count) p.since = now;
    p.count++;
    if (now - p.loggedAt >= this.intervalMs) this.writeLine(p, now);
  }

  /** Writes the lines that are due: counts whose interval is over (`all`: every count, due or not; at shutdown). */
  flush(all = false): void {
    const now = this.now();
    const due: Pending[] = [];
    // Kept only while a line is due or was written within the interval (until then, it holds the next one back).
    const idle: string[] = [];
    for (const [key, p] of this.pending.entries()) {
      if (all && p.count) due.push(p);
      if (now - p.loggedAt < this.intervalMs) continue;
      if (p.count && !all) due.push(p);
      else idle.push(key);
    }
    for (const p of due) this.writeLine(p, now);
    for (const key of idle) this.pending.delete(key);
    if (this.dropped && (all || now - this.droppedLoggedAt >= this.intervalMs)) {
      this.write({ source: "(others)", reason: "(sources beyond the bound)", refused: this.dropped, sinceMs: now - this.droppedSince });
      this.dropped = 0;
      this.droppedLoggedAt = now;
    }
  }

  private writeLine(p: Pending, now: number) {
    this.write({ source: p.source, reason: p.reason, ...p.facts, refused: p.count, sinceMs: now - p.since });
    p.count = 0;
    p.loggedAt = now;
  }

  stop(): void {
    clearInterval(this.timer);
    this.flush(true);
  }
}

/** The process's one refusal log. */
export const refusals = new RefusalLog();
