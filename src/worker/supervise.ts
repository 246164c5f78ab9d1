import { run, type Runner, type RunnerOptions } from "graphile-worker";
import { logger } from "../logger.ts";

const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 15_000;

/**
 * Supervision: runs graphile-worker and, if the runner ends on its own (e.g.
 * the database went away under it), starts a new one once the database
 * answers again, backing off from 1 s to 15 s between tries.
 */
export async function supervisedRunner(options: RunnerOptions) {
  let stopped = false;
  let runner = await run(options);
  const supervise = (current: Runner) => {
    current.promise.then(
      () => restart(current, null),
      (err: unknown) => restart(current, err),
    );
  };
  const restart = async (current: Runner, err: unknown) => {
    if (stopped || current !== runner) return;
    logger.warn({ err: err instanceof Error ? err.message : err }, "worker stopped unexpectedly; restarting");
    for (let delay = FIRST_RESTART_DELAY_MS; !stopped; delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS)) {
      await new Promise((r) => setTimeout(r, delay));
      try {
        runner = await run(options);
        supervise(runner);
        logger.info("worker restarted");
        return;
      } catch (e) {
        logger.warn({ err: (e as Error).message }, "worker restart failed; retrying");
      }
    }
  };
  supervise(runner);
  return {
    get runner() {
      return runner;
    },
    /** No more restarts. */
    halt() {
      stopped = true;
    },
    /** No more restarts; the runner stops (running jobs finish, queued ones stay). */
    async stop() {
      stopped = true;
      await runner.stop().catch((err: unknown) => logger.warn({ err: (err as Error).message }, "worker stop failed"));
    },
  };
}
