import type { IncomingMessage } from "node:http";
import proxyaddr from "proxy-addr";

type Trust = (addr: string, hop: number) => boolean;

/**
 * TRUST_PROXY, read once: which hops' X-Forwarded-For to believe ("false"
 * or empty: none; "true": every hop; a number: that many hops; else
 * addresses and subnets, comma-separated, as proxy-addr reads them). `trust`
 * is also Express's "trust proxy" (req.ip on the REST routes), so both paths
 * name the same caller.
 */
export function makeClientAddress(value: string): { trust: Trust; clientAddress(req: IncomingMessage): string } {
  const none = value === "false" || value === "";
  const trust: Trust = none
    ? () => false
    : value === "true"
      ? () => true
      : /^\d+$/.test(value)
        ? (_addr, hop) => hop < Number(value)
        : proxyaddr.compile(value.split(",").map((v) => v.trim()));
  return {
    trust,
    // Without trusted proxies the address is the socket's (what proxyaddr
    // answers then), without parsing X-Forwarded-For on every request.
    clientAddress: none ? (req) => req.socket.remoteAddress ?? "" : (req) => proxyaddr(req as Parameters<typeof proxyaddr>[0], trust),
  };
}
