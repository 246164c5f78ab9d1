// Runs `node <args...>` with a Node.js the project supports (>= 22.18, which
// runs the TypeScript sources itself by stripping their types).
//
// - On a supported Node (the usual case) the program runs in this very
//   process: no second Node, no download, no extra process between a
//   process manager's signals and the service.
// - On an older one (Debian 12 still ships Node 20) it runs under Node 24
//   from the npm registry's `node` package, fetched once into npm's cache
//   by `npm exec`. `npm exec` only finds that binary: it is then started
//   directly, as this process's only child (npm exec and its `sh -c` would
//   each sit between a supervisor's SIGTERM and the service, and a shell
//   dies of it without passing it on). This process relays SIGTERM, SIGINT
//   and SIGHUP to it and exits with its exit code.
//
// The npm scripts start this file with `exec node ...`, so that npm's own
// `sh -c` is replaced by it: npm passes SIGTERM and SIGINT to its child.
//
// Plain JavaScript that Node 20 can parse: it must run on the old Node too.
import { execFileSync, spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// `--requires=X.Y` before the script raises the minimum for one program:
// the test suite needs 24.9 (Jest loads graphile-worker, an ES module,
// through require()).
const FALLBACK = "node@24";
/** Where the fallback Node's path is kept between runs. */
const FALLBACK_CACHE = fileURLToPath(new URL("../node_modules/.cache/cafe-api/fallback-node.json", import.meta.url));
let args = process.argv.slice(2);
let MINIMUM = [22, 18];
if (args[0]?.startsWith("--requires=")) {
  MINIMUM = args[0].slice("--requires=".length).split(".").map(Number);
  args = args.slice(1);
}

const [major, minor] = process.versions.node.split(".").map(Number);
const supported = major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
const scriptIndex = args.findIndex((a) => !a.startsWith("-"));

// Signals, when a second process runs the program: one that arrives while
// the Node to run is being found (npm exec, a few seconds the first time)
// ends the launcher at once, exit 0, before anything started; once the
// program runs, each goes to it. When the program runs in this process, no
// handler is ever installed: its own decide, and until it has any, a signal
// ends the process. (A handler installed and then removed would swallow a
// signal that came in between: libuv takes it in at once, and hands it to
// the listeners only on the event loop's next turn, when there are none.)
let child = null;
const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"];
function relaySignals() {
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (child) child.kill(signal);
      else process.exit(0);
    });
  }
}

if (supported && scriptIndex === 0) {
  // `node script.ts args...` in this process.
  const script = path.resolve(args[0]);
  process.argv = [process.execPath, script, ...args.slice(1)];
  await import(pathToFileURL(script).href);
} else if (supported) {
  // Node flags before the script (e.g. --cpu-prof): they need a fresh process.
  relaySignals();
  relay(process.execPath, args);
} else {
  relaySignals();
  // Said on a terminal only: a log collected from a pipe stays JSON from its first line.
  if (process.stderr.isTTY)
    console.error(
      `Node.js ${process.versions.node} is older than ${MINIMUM.join(".")}: running under ${FALLBACK} from the npm registry (downloaded once into npm's cache). Install Node >= ${MINIMUM.join(".")} to skip this.`,
    );
  const node = fallbackNode();
  // Its folder first on the PATH, as `npm exec` would put it: a program that
  // starts `node` or an npm script itself (the tests do) gets this Node too,
  // without going through this launcher (and its notice) again.
  relay(node, args, { ...process.env, PATH: [path.dirname(node), process.env.PATH].filter(Boolean).join(path.delimiter) });
}

/** The path of the registry's Node binary: the one kept from an earlier run if it is still there, else npm's (and kept). */
function fallbackNode() {
  try {
    const kept = JSON.parse(readFileSync(FALLBACK_CACHE, "utf8"));
    if (kept.package === FALLBACK && typeof kept.path === "string") {
      accessSync(kept.path, constants.X_OK);
      return kept.path;
    }
  } catch {
    // not kept yet, or gone (npm's cache cleaned): ask npm
  }
  const found = npmExecNode();
  try {
    mkdirSync(path.dirname(FALLBACK_CACHE), { recursive: true });
    writeFileSync(FALLBACK_CACHE, JSON.stringify({ package: FALLBACK, path: found }) + "\n");
  } catch {
    // a read-only install: ask npm every time
  }
  return found;
}

/** The path of the registry's Node binary, from npm's cache (fetched there on first use). */
function npmExecNode() {
  const windows = process.platform === "win32";
  const out = execFileSync(windows ? "npm.cmd" : "npm", ["exec", "--yes", `--package=${FALLBACK}`, "--", "node", "-p", "process.execPath"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    shell: windows,
  });
  return out.trim().split("\n").pop();
}

function relay(command, commandArgs, env = process.env) {
  child = spawn(command, commandArgs, { stdio: "inherit", env });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
