import pino from "pino";
import { accessLogger, logger } from "../../src/logger.ts";

/**
 * The service's log lines, read where pino writes them: for each test, the
 * destination streams (the access log's and the others') are swapped for
 * an array, at level info, and put back after it. `lines()`: the running
 * test's lines (parsed JSON); `release()`: the real destinations again, now.
 */
export function captureLogLines(): { lines(): any[]; release(): void } {
  let lines: any[] = [];
  let restore: () => void = () => {};
  beforeEach(() => {
    const streams = [logger, accessLogger].map((l) => (l as any)[pino.symbols.streamSym] as { write(s: string): boolean });
    const writes = streams.map((stream) => stream.write);
    const level = logger.level;
    lines = [];
    for (const stream of streams)
      stream.write = (s: string) => {
        lines.push(JSON.parse(s));
        return true;
      };
    logger.level = "info";
    restore = () => {
      streams.forEach((stream, i) => (stream.write = writes[i]!));
      logger.level = level;
    };
  });
  afterEach(() => restore());
  return {
    lines: () => lines,
    release() {
      restore();
      restore = () => {};
    },
  };
}
