import net from "node:net";

// The café's own networks (TRUSTED_NETWORKS), parsed once: config.ts checks
// the setting with it, src/http/clientAddress.ts matches callers against it.

/** TRUSTED_NETWORKS, parsed: comma-separated CIDRs (a bare address is one host). Throws on a bad entry. */
export function parseNetworks(value: string): net.BlockList {
  const list = new net.BlockList();
  for (const entry of value
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean)) {
    const [addr, prefix, ...rest] = entry.split("/");
    const type = net.isIPv4(addr ?? "") ? "ipv4" : net.isIPv6(addr ?? "") ? "ipv6" : null;
    const bits = prefix === undefined ? (type === "ipv4" ? 32 : 128) : Number(prefix);
    if (!type || rest.length || !Number.isInteger(bits) || bits < 0 || bits > (type === "ipv4" ? 32 : 128) || (prefix !== undefined && !/^\d+$/.test(prefix))) {
      throw new Error(`"${entry}" is not an address or CIDR`);
    }
    list.addSubnet(addr!, bits, type);
  }
  return list;
}
