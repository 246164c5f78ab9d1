/**
 * The password-check gate of one API process: at most `concurrency`
 * password checks (bcrypt in Postgres: sign-in, registration, password
 * change, new staff account) run at once, at most `queue` more wait for
 * their turn, and the rest are refused at once (RATE_LIMITED, by the
 * caller). A waiting check holds no pool connection (the plugin asks for
 * its turn before it takes one), so a flood of sign-ins takes at most
 * `concurrency` connections and CPU cores while other requests go on.
 */
export interface PasswordCheckGate {
  /** Resolves with a release function when it is this check's turn; null when the queue is full. */
  acquire(): Promise<(() => void) | null>;
  /** Checks running, and waiting. */
  readonly load: { running: number; waiting: number };
}

export function makePasswordCheckGate({ concurrency, queue }: { concurrency: number; queue: number }): PasswordCheckGate {
  let running = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next)
      next(); // the slot passes straight on
    else running -= 1;
  };
  const once = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  };
  return {
    acquire() {
      if (running < concurrency) {
        running += 1;
        return Promise.resolve(once());
      }
      if (waiting.length >= queue) return Promise.resolve(null);
      return new Promise((resolve) => waiting.push(() => resolve(once())));
    },
    get load() {
      return { running, waiting: waiting.length };
    },
  };
}

/** How many checks may run at once: PASSWORD_CHECK_CONCURRENCY, but never more than half the pool. */
export function passwordCheckConcurrency(configured: number, poolSize: number): number {
  return Math.max(1, Math.min(configured, Math.floor(poolSize / 2)));
}
