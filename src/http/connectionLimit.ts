import { readFileSync } from "node:fs";
import type http from "node:http";
import type { Socket } from "node:net";
import { refusalBody, RETRY_AFTER_SECONDS } from "../../common/errorCatalogue.ts";
import { FALLBACK_FILE_LIMIT, FILE_RESERVE } from "../../common/openFiles.ts";
import type { Config } from "../config.ts";
import type { ClientAddress } from "./clientAddress.ts";
import { refusals } from "./refusalLog.ts";

// At most HTTP_MAX_CONNECTIONS_PER_SOURCE open connections per source
// (WebSockets included; TRUSTED_NETWORK_FACTOR times more inside
// TRUSTED_NETWORKS), counted by the TCP peer's address as soon as it
// connects, before a byte is read. One more is answered at once with a
// fixed 429 and closed: nothing of it is parsed or routed. A peer that is
// one of TRUST_PROXY's proxies has no per-source limit (it carries many
// clients; the request limits still see each client behind it) and weighs
// like a trusted network (its connections / TRUSTED_NETWORK_FACTOR).
//
// And at most HTTP_MAX_CONNECTIONS in all (connectionCap): below the
// process's open-file limit by the headroom its database connections, the
// LISTEN connection, health probes and its own files need, so a flood of
// connections from many sources never takes the files those need. At the
// cap a newcomer whose source would hold no more than the biggest holder
// (per its factor) takes the place of that holder's oldest connection, which
// is closed; otherwise it is answered a fixed 503 and closed, except that a
// proxy's newcomer takes the place of the proxy's own oldest connection
// (the clients behind it are many: a flood through it must not shut out a
// health probe or a customer coming through it). So a health probe is
// answered through any flood, proxied or not.

const REFUSED = Symbol("refusedConnection");
type CountedSocket = Socket & { [REFUSED]?: boolean };

/** Whether `socket` was refused (its requests and upgrades are then ignored). */
export function refusedConnection(socket: Socket): boolean {
  return (socket as CountedSocket)[REFUSED] === true;
}

/** The soft RLIMIT_NOFILE of this process, from /proc/self/limits (Linux); null elsewhere. */
export function openFileLimit(limits = "/proc/self/limits"): number | null {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync(limits, "utf8"));
    if (!line || line[1] === "unlimited") return null;
    return Number(line[1]) || null;
  } catch {
    return null;
  }
}

/**
 * HTTP_MAX_CONNECTIONS, never more than the open-file limit less the
 * headroom (the pools' connections and FILE_RESERVE); 0 in config: that.
 * Where the limit cannot be read, a value set is taken as it is (only 0
 * falls back to FALLBACK_FILE_LIMIT less the headroom).
 */
export function connectionCap(
  config: Pick<Config, "HTTP_MAX_CONNECTIONS" | "DATABASE_POOL_SIZE" | "DATABASE_SUBSCRIPTION_POOL_SIZE" | "CALLBACK_POOL_SIZE" | "WORKER_CONCURRENCY">,
  fileLimit = openFileLimit(),
): number {
  const headroom = config.DATABASE_POOL_SIZE + config.DATABASE_SUBSCRIPTION_POOL_SIZE + config.CALLBACK_POOL_SIZE + config.WORKER_CONCURRENCY + FILE_RESERVE;
  if (fileLimit === null && config.HTTP_MAX_CONNECTIONS > 0) return config.HTTP_MAX_CONNECTIONS;
  const derived = Math.max(1, (fileLimit ?? FALLBACK_FILE_LIMIT) - headroom);
  return config.HTTP_MAX_CONNECTIONS > 0 ? Math.min(config.HTTP_MAX_CONNECTIONS, derived) : derived;
}

/** Close a refused socket after its answer; at most this many wait for theirs at once (the rest are cut). */
const LINGERING_MAX = 64;

interface Holder {
  key: string;
  factor: number;
  /** Oldest first. */
  sockets: Set<Socket>;
  /** sockets / factor, rounded down; -1 while it holds none (then it is in no level). */
  level: number;
}

export function installConnectionLimit(
  server: http.Server,
  sources: ClientAddress,
  { perSource, trustedFactor, cap }: { perSource: number; trustedFactor: number; cap: number },
): { open(source: string): number; readonly total: number; readonly holders: { sources: number; levelled: number } } {
  const holders = new Map<string, Holder>();
  /** Holders by level (connections / factor); the biggest holders are in levels' highest key. */
  const levels = new Map<number, Set<Holder>>();
  let topLevel = 0;
  let total = 0;
  let lingering = 0;
  const answerOf = (status: string, code: "TOO_MANY_CONNECTIONS" | "SERVICE_BUSY", message: string, retryAfter: number) => {
    const body = JSON.stringify(refusalBody(code, message));
    return `HTTP/1.1 ${status}\r\nconnection: close\r\nretry-after: ${retryAfter}\r\ncontent-type: application/json; charset=utf-8\r\n` + `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  const perSourceAnswer = answerOf("429 Too Many Requests", "TOO_MANY_CONNECTIONS", `At most ${perSource} open connections per source; close one first.`, 5);
  const busyAnswer = answerOf("503 Service Unavailable", "SERVICE_BUSY", "The server holds all the connections it may; try again in a moment.", RETRY_AFTER_SECONDS.SERVICE_BUSY);

  const refuse = (socket: CountedSocket, answer: string, lingerMs: number) => {
    socket[REFUSED] = true;
    if (lingering >= LINGERING_MAX) {
      socket.destroy();
      return;
    }
    lingering += 1;
    socket.once("close", () => (lingering -= 1));
    socket.end(answer);
    // Whatever the peer still sends is not read; the socket goes soon.
    setTimeout(() => socket.destroy(), lingerMs).unref();
  };
  const relevel = (h: Holder) => {
    const level = h.sockets.size === 0 ? -1 : Math.floor(h.sockets.size / h.factor);
    if (level === h.level) return;
    levels.get(h.level)?.delete(h);
    if (levels.get(h.level)?.size === 0) levels.delete(h.level);
    h.level = level;
    if (level >= 0) {
      let at = levels.get(level);
      if (!at) levels.set(level, (at = new Set()));
      at.add(h);
    }
    if (level > topLevel) topLevel = level;
    while (topLevel > 0 && !levels.has(topLevel)) topLevel -= 1;
  };
  const hold = (key: string, factor: number, socket: Socket) => {
    let h = holders.get(key);
    if (!h) holders.set(key, (h = { key, factor, sockets: new Set(), level: -1 }));
    h.sockets.add(socket);
    total += 1;
    relevel(h);
    socket.once("close", () => letGo(h, socket));
  };
  const letGo = (h: Holder, socket: Socket) => {
    if (!h.sockets.delete(socket)) return;
    total -= 1;
    relevel(h);
    if (h.sockets.size === 0) holders.delete(h.key);
  };

  server.on("connection", (socket: CountedSocket) => {
    const address = socket.remoteAddress ?? "";
    const proxy = sources.trust(address, 0);
    // A proxy: no per-source limit, weighed like a trusted network.
    const source = proxy ? { key: `proxy:${address}`, trusted: true } : sources.sourceOfAddress(address);
    const factor = source.trusted ? trustedFactor : 1;
    const own = holders.get(source.key);
    const n = own?.sockets.size ?? 0;
    if (!proxy && n >= perSource * factor) {
      refuse(socket, perSourceAnswer, 1000);
      refusals.note(source.key, "TOO_MANY_CONNECTIONS", { route: "(connection)", status: 429 });
      return;
    }
    if (total >= cap) {
      // The biggest holder's oldest connection makes way, unless the newcomer's source would hold more.
      // A proxy that would hold more gives up its own oldest instead.
      const more = Math.floor((n + 1) / factor) > topLevel;
      const itself = proxy && own !== undefined && (more || own.level === topLevel);
      const biggest = itself ? own : levels.get(topLevel)?.values().next().value;
      if (!biggest || (!itself && (topLevel === 0 || more))) {
        refuse(socket, busyAnswer, 100);
        refusals.note(source.key, "SERVICE_BUSY", { route: "(connection)", status: 503 });
        return;
      }
      const oldest = biggest.sockets.values().next().value!;
      letGo(biggest, oldest); // counted out now: its close event comes later
      oldest.destroy();
      refusals.note(biggest.key, "SERVICE_BUSY", { route: "(connection closed for another source)", status: 503 });
    }
    hold(source.key, factor, socket);
  });
  return {
    open: (source) => holders.get(source)?.sockets.size ?? 0,
    get total() {
      return total;
    },
    get holders() {
      let levelled = 0;
      for (const at of levels.values()) levelled += at.size;
      return { sources: holders.size, levelled };
    },
  };
}
