// Command line (node's util.parseArgs) and the three profiles: --smoke
// (seconds, tiny data), --quick (a minute or two, 1x and 10x), full (the
// default: longer runs, 1x/10x/100x).
import { parseArgs } from "node:util";

export type ProfileName = "smoke" | "quick" | "full";

const QUICK = {
  coffees: 200,
  customers: 5000,
  orders: 10_000,
  /** Orders in PREPARING/BREWING (the barista queue) and PENDING: the same at every scale. */
  queue: 100,
  pending: 20,
  reviewsPerCoffee: 10,
  /** S2 repeated at these multiples of `orders`. */
  scales: [1, 10],
  connections: 16,
  warmupSeconds: 0.5,
  peakSeconds: 1.5,
  latencySeconds: 1.5,
  /** Latency is measured at this fraction of the service's own peak, the same rate for every variant. */
  latencyLoad: 0.5,
  /** PENDING orders made for S4 per variant (callbacks need distinct orders). */
  s4Orders: 5000,
  /** S5: callbacks per second while timing callback -> PREPARING, for how long, and the backlog drained. */
  s5Rate: 25,
  s5Seconds: 4,
  s5Backlog: 900,
  s6Subscribers: [10, 100, 1000],
  s7Iterations: 200,
  /** S3: extra open orders at which create_order() is timed one call at a time. */
  s3OpenOrders: [0, 500, 2000],
  /** Calls per level of that probe (and per scale in S2x). */
  probeCalls: 20,
  /** S9, the rush hour: kiosks (closed loop, then a fixed rate), customers each following their order, barista dashboards, orders a second. */
  s9Kiosks: 20,
  s9Customers: 100,
  s9Baristas: 2,
  s9Rate: 5,
  /** The customer pays this long after placing the order; the barista moves it on (BREWING, READY, COMPLETED) this long after each step. */
  s9PayDelayMs: 500,
  s9StepMs: 2000,
  /** Orders flowing before the kiosks are measured, and the window whose SQL is counted per order. */
  s9RampSeconds: 3,
  s9CaptureSeconds: 2,
  /** The same rush again with the live cache off. */
  s9CacheOff: true,
};
type Sizes = typeof QUICK;

const PROFILES: Record<ProfileName, Sizes> = {
  smoke: {
    ...{ coffees: 20, customers: 50, orders: 300, queue: 10, pending: 5, reviewsPerCoffee: 3, scales: [1, 2], connections: 4 },
    ...{ warmupSeconds: 0, peakSeconds: 1, latencySeconds: 0.2, latencyLoad: 0.5, s4Orders: 2000, s5Rate: 20, s5Seconds: 0.5, s5Backlog: 60 },
    ...{ s6Subscribers: [5, 20], s7Iterations: 30, s3OpenOrders: [0, 100], probeCalls: 5 },
    ...{ s9Kiosks: 4, s9Customers: 10, s9Baristas: 2, s9Rate: 5, s9PayDelayMs: 100, s9StepMs: 100, s9RampSeconds: 0.5, s9CaptureSeconds: 1, s9CacheOff: false },
  },
  quick: QUICK,
  full: {
    ...QUICK,
    ...{ scales: [1, 10, 100], warmupSeconds: 2, peakSeconds: 10, latencySeconds: 10, s4Orders: 20_000, s5Seconds: 15, s5Backlog: 6000, s6Subscribers: [10, 100, 1000, 10_000] },
    ...{ s7Iterations: 2000, s3OpenOrders: [0, 500, 2000, 5000], probeCalls: 40, s9RampSeconds: 5, s9CaptureSeconds: 5 },
  },
};

export interface Options extends Sizes {
  profile: ProfileName;
  databaseUrl?: string;
  out?: string;
  keepDatabase: boolean;
  only?: Set<string>;
  logLevel: string;
  /** Where the service, the peer and S9's processes write V8 CPU profiles (node --cpu-prof), if anywhere. */
  cpuProfDir?: string;
  poolSize: number;
}

export const HELP = `npm run bench [-- options]

  --smoke | --quick      profile (default: full)
  --orders N             orders at 1x (S2 also runs at --scales multiples of it, e.g. 1,10,100)
  --s6 10,100,1000       S6's subscriber counts
  --connections N        closed-loop connections (default 16)
  --peak-seconds S --latency-seconds S
  --pool-size N          DATABASE_POOL_SIZE of the service, the floors and the peer (default 10)
  --database-url URL     superuser URL of the bench database (default: the machine's PostgreSQL on
                         127.0.0.1:5432 when it answers, else the embedded server); dropped and created
  --only S1,S2,...       run some scenarios
  --out FILE             where to write the JSON (default bench/results/<date>[-profile].json, git-ignored)
  --keep                 keep the bench database and the processes' logs afterwards
  --log-level L          LOG_LEVEL of the processes under test (default info: the service writes its access log)
  --cpu-prof DIR         write V8 CPU profiles of the service, the stock peer and S9's processes into DIR
`;

export function parseOptions(args: string[]): Options {
  const { values: v } = parseArgs({
    args,
    options: {
      smoke: { type: "boolean" },
      quick: { type: "boolean" },
      orders: { type: "string" },
      scales: { type: "string" },
      s6: { type: "string" },
      connections: { type: "string" },
      "peak-seconds": { type: "string" },
      "latency-seconds": { type: "string" },
      "pool-size": { type: "string" },
      "database-url": { type: "string" },
      only: { type: "string" },
      out: { type: "string" },
      keep: { type: "boolean" },
      "log-level": { type: "string", default: "info" },
      "cpu-prof": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) {
    console.log(HELP);
    process.exit(0);
  }
  const profile: ProfileName = v.smoke ? "smoke" : v.quick ? "quick" : "full";
  const num = (x: string) => {
    const n = Number(x);
    if (!Number.isFinite(n) || n < 0) throw new Error(`not a number: ${x}\n\n${HELP}`);
    return n;
  };
  const o: Options = { profile, ...structuredClone(PROFILES[profile]), keepDatabase: Boolean(v.keep), logLevel: v["log-level"], poolSize: 10 };
  if (v.orders) o.orders = num(v.orders);
  if (v.scales) o.scales = [...new Set([1, ...v.scales.split(",").map(num)])].sort((a, b) => a - b);
  if (v.s6) o.s6Subscribers = v.s6.split(",").map(num);
  if (v.connections) o.connections = num(v.connections);
  if (v["peak-seconds"]) o.peakSeconds = num(v["peak-seconds"]);
  if (v["latency-seconds"]) o.latencySeconds = num(v["latency-seconds"]);
  if (v["pool-size"]) o.poolSize = num(v["pool-size"]);
  if (v.only) o.only = new Set(v.only.toUpperCase().split(","));
  return { ...o, databaseUrl: v["database-url"], out: v.out, cpuProfDir: v["cpu-prof"] };
}
