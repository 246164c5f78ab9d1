import { logger } from "./logger.ts";

/**
 * What to undo at shutdown, in the manner of graphile/starter's
 * shutdownActions: each start-up step adds its own undo as it starts, and
 * run() undoes them in reverse order, each awaited in turn, so the stop
 * mirrors the start without being written twice. A step that fails is
 * logged and the rest still run. run() runs once; later calls wait for it.
 */
export class Shutdown {
  private readonly steps: { name: string; undo: () => unknown }[] = [];
  private running: Promise<void> | null = null;

  add(name: string, undo: () => unknown): void {
    this.steps.push({ name, undo });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const { name, undo } of [...this.steps].reverse()) {
        try {
          await undo();
        } catch (err) {
          logger.error({ err, step: name }, "shutdown step failed");
        }
      }
    })();
    return this.running;
  }
}

/** Thrown by Lifecycle.step once a stop was asked: start-up goes no further. */
export class StartupStopped extends Error {
  constructor(signal: string) {
    super(`start-up stopped by ${signal}`);
  }
}

/**
 * The process's start-up, stoppable at any moment: main() makes it on its
 * first line, with the signal handlers. Each start-up step (the embedded
 * PostgreSQL, the migrations, the API, the worker) runs through step(),
 * which adds the step's undo as soon as it has started; stop() waits for
 * the step in flight to settle (a migration is not cut in half), then undoes
 * every step that started, in reverse. A step asked for after a stop does
 * not start.
 */
export class Lifecycle {
  private readonly shutdown = new Shutdown();
  private current: Promise<unknown> = Promise.resolve();
  private stopped: Promise<void> | null = null;
  /** The signal that asked for the stop, once one did. */
  stopping: string | null = null;

  async step<T>(name: string, start: () => Promise<T>, undo?: (value: T) => unknown): Promise<T> {
    if (this.stopping) throw new StartupStopped(this.stopping);
    const running = (async () => {
      const value = await start();
      if (undo) this.shutdown.add(name, () => undo(value));
      return value;
    })();
    this.current = running.catch(() => {});
    const value = await running;
    if (this.stopping) throw new StartupStopped(this.stopping);
    return value;
  }

  /** Stops what has started (once; later calls wait for it). */
  stop(signal = "stop"): Promise<void> {
    this.stopping ??= signal;
    this.stopped ??= this.current.then(() => this.shutdown.run());
    return this.stopped;
  }
}
