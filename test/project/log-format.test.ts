import { spawnSync } from "node:child_process";
import path from "node:path";
import { bannerText } from "../../src/banner.ts";
import { usesPrettyLines } from "../../src/logger.ts";
import { testConfig } from "../support/service.ts";

// The terminal (src/logger.ts, src/banner.ts): JSON lines when stdout is not
// a terminal or LOG_FORMAT=json, readable lines on a terminal or with
// LOG_FORMAT=pretty; the start-up banner names the URLs and the demo accounts.

const LOGGER = path.resolve(__dirname, "../../src/logger.ts");

/** What a fresh process writes to stdout (a pipe: not a terminal) when it logs one line. */
function logOneLine(env: Record<string, string>): string {
  const script = `import { logger } from ${JSON.stringify(LOGGER)}; logger.info({ order: "o-1" }, "order paid");`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(r.status).toBe(0);
  return r.stdout;
}

test("not a terminal: JSON lines (LOG_FORMAT unset or auto)", () => {
  for (const env of [{}, { LOG_FORMAT: "auto" }] as Array<Record<string, string>>) {
    const out = logOneLine(env).trim();
    expect(JSON.parse(out)).toMatchObject({ level: 30, msg: "order paid", order: "o-1", service: "cafe-api" });
  }
});

test("LOG_FORMAT=pretty: readable lines even when not a terminal", () => {
  const out = logOneLine({ LOG_FORMAT: "pretty" });
  expect(out).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: order paid \{"order":"o-1"\}\n$/);
});

test("on a terminal: readable unless LOG_FORMAT=json", () => {
  expect(usesPrettyLines(undefined, true)).toBe(true);
  expect(usesPrettyLines("auto", true)).toBe(true);
  expect(usesPrettyLines("json", true)).toBe(false);
  expect(usesPrettyLines("auto", false)).toBe(false);
  expect(usesPrettyLines("pretty", false)).toBe(true);
});

test("the banner names the URLs and, where the demo data is loaded, the demo accounts", () => {
  const config = testConfig();
  const text = bannerText(config, { port: 5678, worker: true, demoAccounts: [{ email: "alice@example.com", role: "customer" }] });
  for (const url of ["/graphql", "/graphiql", "/orders/payment-callback", "/healthz"]) expect(text).toContain(`http://localhost:5678${url}`);
  expect(text).toMatch(/alice@example\.com\s+customer/);
  expect(text).toContain("password: coffee");
  const bare = bannerText(testConfig({ GRAPHIQL: "false" }), { port: 5678, worker: true, demoAccounts: [] });
  expect(bare).not.toContain("/graphiql");
  expect(bare).not.toContain("Demo accounts");
});
