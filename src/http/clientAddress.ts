import type { IncomingMessage } from "node:http";
import net from "node:net";
import proxyaddr from "proxy-addr";
import { parseNetworks } from "../networks.ts";

// Who is calling, the one definition every limiter uses (the GraphQL request
// limiter, the WebSocket and HTTP connection caps, the payment callback's
// limit and block list, the sign-in and registration counters in SQL):
//  - the address: the socket's, or X-Forwarded-For as far as TRUST_PROXY
//    lets us believe it;
//  - the source: that address, except that an IPv6 client's whole /64 is one
//    source (one subscriber's network: rotating addresses inside it must
//    not reset a count) and an IPv4-mapped IPv6 address is its IPv4
//    address. Written exactly as app_private.source_key() writes it, so
//    SQL's counters and ours name the same source;
//  - whether it is trusted: inside TRUSTED_NETWORKS (the café's own Wi-Fi,
//    tills and kiosks), whose per-source limits are raised.
// Worked out once per request (kept on the request).

type Trust = (addr: string, hop: number) => boolean;

export interface Source {
  /** The caller's address (logs). */
  address: string;
  /** What per-source limits count by. */
  key: string;
  /** Inside TRUSTED_NETWORKS. */
  trusted: boolean;
}

/** Sixteen-bit groups of an IPv6 address (8 of them), or null. */
function ipv6Groups(address: string): number[] | null {
  let a = address;
  const zone = a.indexOf("%");
  if (zone >= 0) a = a.slice(0, zone);
  if (!net.isIPv6(a)) return null;
  // A dotted IPv4 tail is two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const [b0, b1, b2, b3] = v4.slice(1).map(Number) as [number, number, number, number];
    a = `${a.slice(0, v4.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.includes("::") ? a.split("::") : [a, undefined];
  const parse = (s: string | undefined) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  return tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t];
}

/** The source an address counts as (see above); anything unparsable is itself. */
export function sourceKey(address: string): string {
  if (net.isIPv4(address)) return address;
  const g = ipv6Groups(address);
  if (!g) return address || "unknown";
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  // The /64's network, as Postgres prints it: the lower four groups are zero,
  // so the longest run of zeros (the one "::" stands for) is always the tail.
  const upper = g.slice(0, 4);
  while (upper.length && upper[upper.length - 1] === 0) upper.pop();
  return `${upper.map((x) => x.toString(16)).join(":")}::/64`;
}

export interface ClientAddress {
  /** TRUST_PROXY's test of a hop (also Express's "trust proxy"). */
  trust: Trust;
  /** The caller's address. */
  clientAddress(req: IncomingMessage): string;
  /** The caller as a source (computed once per request). */
  sourceOf(req: IncomingMessage): Source;
  /** A bare address as a source (a TCP peer before any request). */
  sourceOfAddress(address: string): Source;
}

const SOURCE = Symbol("source");

/**
 * TRUST_PROXY, read once: which hops' X-Forwarded-For to believe ("false"
 * or empty: none; "true": every hop; a number: that many hops; else
 * addresses and subnets, comma-separated, as proxy-addr reads them). `trust`
 * is also Express's "trust proxy" (req.ip on the REST routes), so both paths
 * name the same caller. `trustedNetworks`: TRUSTED_NETWORKS.
 */
export function makeClientAddress(value: string, trustedNetworks = ""): ClientAddress {
  const none = value === "false" || value === "";
  const trust: Trust = none ? () => false : value === "true" ? () => true : /^\d+$/.test(value) ? (_addr, hop) => hop < Number(value) : proxyaddr.compile(value.split(",").map((v) => v.trim()));
  const networks = parseNetworks(trustedNetworks);
  const anyTrusted = trustedNetworks.trim() !== "";
  // Without trusted proxies the address is the socket's (what proxyaddr
  // answers then), without parsing X-Forwarded-For on every request.
  const clientAddress = none ? (req: IncomingMessage) => req.socket.remoteAddress ?? "" : (req: IncomingMessage) => proxyaddr(req as Parameters<typeof proxyaddr>[0], trust);
  const sourceOfAddress = (address: string): Source => {
    const key = sourceKey(address);
    let trusted = false;
    if (anyTrusted) {
      // An IPv4-mapped address is checked as its IPv4 address.
      const plain = net.isIPv4(key) ? key : address.split("%")[0]!;
      const type = net.isIPv4(plain) ? "ipv4" : net.isIPv6(plain) ? "ipv6" : null;
      trusted = type !== null && networks.check(plain, type);
    }
    return { address, key, trusted };
  };
  return {
    trust,
    clientAddress,
    sourceOfAddress,
    sourceOf(req) {
      const r = req as IncomingMessage & { [SOURCE]?: Source };
      return (r[SOURCE] ??= sourceOfAddress(clientAddress(req)));
    },
  };
}
