// Command line and the three profiles: --smoke (seconds, tiny data), --quick
// (a minute or two, 1x and 10x), full (the default: longer runs, 1x/10x/100x).

export type ProfileName = "smoke" | "quick" | "full";

export interface Options {
  profile: ProfileName;
  /** Data set at 1x. */
  coffees: number;
  customers: number;
  orders: number;
  /** Orders in PREPARING/BREWING (the barista queue); constant at every scale. */
  queue: number;
  /** PENDING orders in the base data (open orders count in stock checks). */
  pending: number;
  reviewsPerCoffee: number;
  /** S2 repeated at these multiples of `orders` (the last run of S2 is at 1x). */
  scales: number[];
  connections: number;
  warmupSeconds: number;
  peakSeconds: number;
  latencySeconds: number;
  /** Latency is measured at this fraction of the service's own peak, the same rate for every variant. */
  latencyLoad: number;
  /** PENDING orders made for S4 per variant (callbacks need distinct orders). */
  s4Orders: number;
  /** S5: callbacks per second while measuring callback -> PREPARING, and for how long. */
  s5Rate: number;
  s5Seconds: number;
  /** S5: jobs in the backlog drained to measure jobs/s. */
  s5Backlog: number;
  s6Subscribers: number[];
  s7Iterations: number;
  /** S3: extra open (PENDING) orders at which create_order() is timed one call at a time. */
  s3OpenOrders: number[];
  /** Calls per level of that probe (and per scale in S2x). */
  probeCalls: number;
  databaseUrl?: string;
  out?: string;
  keepDatabase: boolean;
  only?: Set<string>;
  logLevel: string;
  /** Where the service and the peer write V8 CPU profiles (--cpu-prof), if anywhere. */
  cpuProfDir?: string;
  poolSize: number;
  rateGenerator: "paced" | "autocannon";
}

type Profile = Omit<Options, "profile" | "keepDatabase" | "logLevel" | "poolSize" | "rateGenerator">;

/** The quick profile; the full one is it with longer runs, a 100x scale and more calls. */
const QUICK: Profile = {
  coffees: 200,
  customers: 5000,
  orders: 10_000,
  queue: 100,
  pending: 20,
  reviewsPerCoffee: 10,
  scales: [1, 10],
  connections: 16,
  warmupSeconds: 0.5,
  peakSeconds: 1.5,
  latencySeconds: 1.5,
  latencyLoad: 0.5,
  s4Orders: 5000,
  s5Rate: 25,
  s5Seconds: 4,
  s5Backlog: 900,
  s6Subscribers: [10, 100, 1000],
  s7Iterations: 200,
  s3OpenOrders: [0, 500, 2000],
  probeCalls: 20,
};

const PROFILES: Record<ProfileName, Profile> = {
  smoke: {
    coffees: 20,
    customers: 50,
    orders: 300,
    queue: 10,
    pending: 5,
    reviewsPerCoffee: 3,
    scales: [1, 2],
    connections: 4,
    warmupSeconds: 0,
    peakSeconds: 0.25,
    latencySeconds: 0.2,
    latencyLoad: 0.5,
    s4Orders: 2000,
    s5Rate: 20,
    s5Seconds: 0.5,
    s5Backlog: 60,
    s6Subscribers: [5, 20],
    s7Iterations: 30,
    s3OpenOrders: [0, 100],
    probeCalls: 5,
  },
  quick: QUICK,
  full: {
    ...QUICK,
    scales: [1, 10, 100],
    warmupSeconds: 2,
    peakSeconds: 10,
    latencySeconds: 10,
    s4Orders: 20_000,
    s5Seconds: 15,
    s5Backlog: 6000,
    s6Subscribers: [10, 100, 1000, 10_000],
    s7Iterations: 2000,
    s3OpenOrders: [0, 500, 2000, 5000],
    probeCalls: 40,
  },
};

export const HELP = `npm run bench [-- options]

  --smoke | --quick      profile (default: full)
  --orders N --customers N --coffees N --queue N --pending N --reviews-per-coffee N
  --scales 1,10,100      S2 at these multiples of --orders
  --connections N        closed-loop connections (default 16)
  --peak-seconds S --latency-seconds S --warmup-seconds S
  --latency-load F       fixed rate for latency = F x the service's peak (default 0.5)
  --s4-orders N --s5-rate N --s5-seconds S --s5-backlog N --s6 10,100,1000[,10000] --s7-iterations N
  --pool-size N          DATABASE_POOL_SIZE of the service; the floors and the peer use the same (default 10)
  --database-url URL     superuser URL of the bench database (default: postgres://postgres@127.0.0.1:5432/cafe_bench
                         when that server answers, else the embedded server); the database is dropped and created
  --only S1,S2,...       run some scenarios
  --out FILE             where to write the JSON (default bench/results/<date>.json)
  --keep                 keep the bench database afterwards
  --log-level L          LOG_LEVEL of the processes under test (default info: the service writes its access log)
  --cpu-prof DIR         write a V8 CPU profile of the service and the stock peer into DIR (node --cpu-prof)
  --rate-generator G     paced (default: open loop, evenly spaced) or autocannon (overallRate: a per-second
                         budget per connection, i.e. bursts) for the fixed-rate latency runs
`;

export function parseOptions(argv: readonly string[]): Options {
  const profile: ProfileName = argv.includes("--smoke") ? "smoke" : argv.includes("--quick") ? "quick" : "full";
  const o: Options = { profile, ...structuredClone(PROFILES[profile]), keepDatabase: false, logLevel: "info", poolSize: 10, rateGenerator: "paced" };
  const num = (v: string | undefined, name: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} needs a number, not ${v}`);
    return n;
  };
  const list = (v: string | undefined, name: string) =>
    (v ?? "")
      .split(",")
      .filter(Boolean)
      .map((x) => num(x, name));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = () => argv[++i];
    switch (a) {
      case "--smoke":
      case "--quick":
      case "--full":
        break;
      case "--orders":
        o.orders = num(v(), a);
        break;
      case "--customers":
        o.customers = num(v(), a);
        break;
      case "--coffees":
        o.coffees = num(v(), a);
        break;
      case "--queue":
        o.queue = num(v(), a);
        break;
      case "--pending":
        o.pending = num(v(), a);
        break;
      case "--reviews-per-coffee":
        o.reviewsPerCoffee = num(v(), a);
        break;
      case "--scales":
        o.scales = list(v(), a);
        break;
      case "--connections":
        o.connections = num(v(), a);
        break;
      case "--peak-seconds":
        o.peakSeconds = num(v(), a);
        break;
      case "--latency-seconds":
        o.latencySeconds = num(v(), a);
        break;
      case "--warmup-seconds":
        o.warmupSeconds = num(v(), a);
        break;
      case "--latency-load":
        o.latencyLoad = num(v(), a);
        break;
      case "--s4-orders":
        o.s4Orders = num(v(), a);
        break;
      case "--s5-rate":
        o.s5Rate = num(v(), a);
        break;
      case "--s5-seconds":
        o.s5Seconds = num(v(), a);
        break;
      case "--s5-backlog":
        o.s5Backlog = num(v(), a);
        break;
      case "--s6":
        o.s6Subscribers = list(v(), a);
        break;
      case "--s7-iterations":
        o.s7Iterations = num(v(), a);
        break;
      case "--pool-size":
        o.poolSize = num(v(), a);
        break;
      case "--database-url":
        o.databaseUrl = v();
        break;
      case "--out":
        o.out = v();
        break;
      case "--keep":
        o.keepDatabase = true;
        break;
      case "--log-level":
        o.logLevel = v() ?? "info";
        break;
      case "--rate-generator": {
        const g = v();
        if (g !== "paced" && g !== "autocannon") throw new Error("--rate-generator is paced or autocannon");
        o.rateGenerator = g;
        break;
      }
      case "--cpu-prof":
        o.cpuProfDir = v();
        break;
      case "--only":
        o.only = new Set((v() ?? "").toUpperCase().split(",").filter(Boolean));
        break;
      case "--help":
      case "-h":
        console.log(HELP);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option ${a}\n\n${HELP}`);
    }
  }
  if (!o.scales.includes(1)) o.scales.unshift(1);
  o.scales = [...new Set(o.scales)].sort((a, b) => a - b);
  return o;
}
