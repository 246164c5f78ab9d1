import { existsSync } from "node:fs";
import { chromium as playwright, type BrowserContext } from "playwright-core";

// Which Chromium the browser test drives, and how it is launched.
//
// A system Chrome or Chromium where there is one (CHROMIUM_PATH, else the
// usual paths); otherwise the one inside the npm package @sparticuz/chromium,
// unpacked into the temporary folder on first use: the npm registry is all a
// fresh machine needs. CHROMIUM_PATH=npm forces the package's browser even
// where a system one is installed (.ci/run tests that path).

const SYSTEM_PATHS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable", "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"];

/**
 * Flags for a machine without the internet: no background requests, updates,
 * sync or first-run pages (each would wait on a network that never answers).
 * Also no sandbox (the tests run as root in containers) and no GPU.
 */
const QUIET_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--no-default-browser-check",
];

/**
 * @sparticuz/chromium's own flags that weaken what the test checks (the
 * same-origin policy, mixed content, site isolation): left out, so the page
 * runs under the rules a real browser applies.
 */
const WEAKENING = ["--disable-web-security", "--allow-running-insecure-content", "--disable-site-isolation-trials", "--disable-setuid-sandbox"];

export interface BrowserChoice {
  executablePath: string;
  /** Where it came from, for the test log. */
  source: string;
  args: string[];
}

export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<BrowserChoice> {
  const wanted = env.CHROMIUM_PATH?.trim();
  if (wanted && wanted !== "npm") {
    if (!existsSync(wanted)) throw new Error(`CHROMIUM_PATH=${wanted} does not exist`);
    return { executablePath: wanted, source: `CHROMIUM_PATH (${wanted})`, args: ["--headless", ...QUIET_FLAGS] };
  }
  const system = wanted === "npm" ? undefined : SYSTEM_PATHS.find((p) => existsSync(p));
  if (system) return { executablePath: system, source: `the system's ${system}`, args: ["--headless", ...QUIET_FLAGS] };
  // ESM-only package: loaded when needed (the system browser's path needs none of it).
  const { default: packaged } = await import("@sparticuz/chromium");
  const executablePath = await packaged.executablePath();
  const args = packaged.args.filter((a) => !WEAKENING.includes(a));
  return { executablePath, source: `npm package @sparticuz/chromium (${executablePath})`, args: [...args, ...QUIET_FLAGS.filter((f) => !args.includes(f))] };
}

/** A headless browser with its own profile in `userDataDir`. */
export async function launchChromium(userDataDir: string, viewport = { width: 1400, height: 900 }): Promise<{ context: BrowserContext; choice: BrowserChoice }> {
  const choice = await findChromium();
  const context = await playwright.launchPersistentContext(userDataDir, { executablePath: choice.executablePath, headless: true, viewport, args: choice.args });
  return { context, choice };
}
