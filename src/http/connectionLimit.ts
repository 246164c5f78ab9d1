import type http from "node:http";
import type { Socket } from "node:net";
import { refusalBody } from "../../common/errorCatalogue.ts";
import type { ClientAddress } from "./clientAddress.ts";
import { refusals } from "./refusalLog.ts";

// At most HTTP_MAX_CONNECTIONS_PER_SOURCE open connections per source
// (WebSockets included; TRUSTED_NETWORK_FACTOR times more inside
// TRUSTED_NETWORKS), counted by the TCP peer's address as soon as it
// connects, before a byte is read. One more is answered at once with a
// fixed 429 and closed: nothing of it is parsed or routed. A peer that is
// one of TRUST_PROXY's proxies is not counted (it carries many clients; the
// request limits still see each client behind it).

const REFUSED = Symbol("refusedConnection");
type CountedSocket = Socket & { [REFUSED]?: boolean };

/** Whether `socket` was refused (its requests and upgrades are then ignored). */
export function refusedConnection(socket: Socket): boolean {
  return (socket as CountedSocket)[REFUSED] === true;
}

export function installConnectionLimit(server: http.Server, sources: ClientAddress, max: number, trustedFactor: number): { open(source: string): number } {
  const open = new Map<string, number>();
  const body = JSON.stringify(refusalBody("TOO_MANY_CONNECTIONS", `At most ${max} open connections per source; close one first.`));
  const answer =
    "HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\nretry-after: 5\r\ncontent-type: application/json; charset=utf-8\r\n" + `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  server.on("connection", (socket: CountedSocket) => {
    const address = socket.remoteAddress ?? "";
    if (sources.trust(address, 0)) return;
    const source = sources.sourceOfAddress(address);
    const n = open.get(source.key) ?? 0;
    if (n >= max * (source.trusted ? trustedFactor : 1)) {
      socket[REFUSED] = true;
      socket.end(answer);
      // Whatever the peer still sends is not read; the socket goes soon.
      setTimeout(() => socket.destroy(), 1000).unref();
      refusals.note(source.key, "TOO_MANY_CONNECTIONS", { route: "(connection)", status: 429 });
      return;
    }
    open.set(source.key, n + 1);
    socket.once("close", () => {
      const left = (open.get(source.key) ?? 1) - 1;
      if (left > 0) open.set(source.key, left);
      else open.delete(source.key);
    });
  });
  return { open: (source) => open.get(source) ?? 0 };
}
