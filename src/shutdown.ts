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
