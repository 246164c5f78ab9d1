import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { gql, login } from "../support/client.ts";
import { paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { freePort } from "../support/ports.ts";
import { testIfInstalled } from "../support/programs.ts";
import { ChildService, ROOT, useDrillDatabase, withLogsOnFailure } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";
import { say } from "../support/figures.ts";
import { tempDir } from "../support/tempDirs.ts";

// ops/prometheus/alerts.yml, unit-tested with `promtool test rules` (the
// example scrape configuration beside it checked by promtool too), and
// ops/grafana/cafe-api.json, whose every panel's query is run against a
// real Prometheus (Debian's package: `apt-get install prometheus`; .ci/run
// installs it) scraping the real service (API and worker) every second
// while it serves orders, payments, jobs and webhooks: each returns data.

const RULES = path.join(ROOT, "ops", "prometheus");
// Skipped, saying how to install it, where prometheus or promtool is missing (REQUIRE_PROMETHEUS=1: failed).
const testIfPrometheus = testIfInstalled("prometheus");
const DASHBOARD = path.join(ROOT, "ops", "grafana", "cafe-api.json");

testIfPrometheus("promtool: the example scrape configuration and the rules load, and the rules' unit tests pass (each alert fires on a bad day, none on a healthy one)", () => {
  // Its token file is the operator's: the syntax only.
  const scrape = spawnSync("promtool", ["check", "config", "--syntax-only", path.join(RULES, "prometheus.yml")], { encoding: "utf8" });
  if (scrape.error) throw new Error(`promtool did not run: ${scrape.error.message}`);
  expect({ status: scrape.status, out: scrape.stdout + scrape.stderr }).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  const check = spawnSync("promtool", ["check", "rules", path.join(RULES, "alerts.yml")], { encoding: "utf8" });
  expect(check.stdout).toMatch(/SUCCESS: \d+ rules found/);
  const unit = spawnSync("promtool", ["test", "rules", "alerts.test.yml"], { cwd: RULES, encoding: "utf8" });
  expect({ status: unit.status, out: unit.stdout + unit.stderr }).toEqual({ status: 0, out: expect.stringContaining("SUCCESS") });
  // Every alert of the file is tested, firing and quiet.
  const alerts = [...readFileSync(path.join(RULES, "alerts.yml"), "utf8").matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
  const tests = readFileSync(path.join(RULES, "alerts.test.yml"), "utf8");
  for (const alert of alerts) expect(tests.match(new RegExp(`alertname: ${alert}\\b`, "g"))?.length ?? 0).toBeGreaterThanOrEqual(2);
});

describe("the dashboard against a real Prometheus", () => {
  const { d } = useDrillDatabase("ops_monitoring");
  let api: ChildService | undefined;
  let prometheus: ChildProcess | undefined;
  let hooks: http.Server | undefined;
  let dataDir = "";
  const prometheusLog: string[] = [];

  afterAll(async () => {
    prometheus?.kill("SIGTERM");
    await api?.stop();
    hooks?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  testIfPrometheus(
    "every panel's query returns data while the service serves orders, payments and jobs",
    async () => {
      const hookPort = await freePort();
      hooks = http.createServer((req, res) => req.resume().on("end", () => res.writeHead(204).end()));
      await new Promise<void>((resolve) => hooks!.listen(hookPort, "127.0.0.1", resolve));
      api = await ChildService.start({
        name: "monitored",
        mode: "all",
        databaseUrl: d.url,
        env: { NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${hookPort}/hook`, NOTIFY_WEBHOOK_SECRET: "a-monitoring-test-webhook-secret-0123" },
      });

      dataDir = tempDir("prometheus");
      const promPort = await freePort();
      const config = path.join(dataDir, "prometheus.yml");
      writeFileSync(
        config,
        `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - ${path.join(RULES, "alerts.yml")}\nscrape_configs:\n  - job_name: cafe-api\n    static_configs:\n      - targets: ["127.0.0.1:${api.port}"]\n`,
      );
      prometheus = spawn("prometheus", [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dataDir, "data")}`, `--web.listen-address=127.0.0.1:${promPort}`], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      prometheus.stderr!.on("data", (c: Buffer) => prometheusLog.push(c.toString()));
      const query = async (expr: string) => {
        const r = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(expr)}`);
        return (await r.json()) as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> }; error?: string };
      };

      await withLogsOnFailure(
        () => [api],
        async () => {
          await waitUntil("Prometheus scraping the service", async () => (await query('up{job="cafe-api"} == 1').catch(() => null))?.data?.result.length === 1, 30_000, 250);

          // Traffic: reads, an order, its payment (jobs, a webhook), an ad-hoc document, a 404.
          const token = await login(api!.url, "alice");
          for (let i = 0; i < 5; i++) await gql(api!.url, "query Menu { coffees(first: 3) { id name } }");
          const placed = await gql(api!.url, 'mutation { createOrder(input: {items: [{coffeeId: "40000000-0000-4000-8000-000000000003", quantity: 1}]}) { id total } }', { token });
          const order = placed.body.data.createOrder;
          const paid = await sendCallback(api!.url, paymentBody({ id: order.id, email: "alice@example.com", total: String(order.total), lines: [] }, "A", "event"));
          expect(paid.status).toBe(200);
          await fetch(`${api!.url}/nowhere`);
          await waitUntil("the order PREPARING", async () => (await d.db.query("select status from app_public.orders where id = $1", [order.id])).rows[0]?.status === "PREPARING", 30_000);

          const panels: Array<{ title: string; targets: Array<{ expr: string }> }> = JSON.parse(readFileSync(DASHBOARD, "utf8")).panels;
          expect(panels.length).toBeGreaterThanOrEqual(15);
          const empty = async () => {
            const missing: string[] = [];
            for (const p of panels) {
              for (const t of p.targets) {
                const r = await query(t.expr);
                if (r.status !== "success" || r.data.result.length === 0) missing.push(`${p.title}: ${t.expr} (${r.error ?? "no data"})`);
              }
            }
            return missing;
          };
          // A rate needs two scrapes after the traffic: a few seconds.
          let missing: string[] = [];
          await waitUntil(
            "every panel has data",
            async () => {
              missing = await empty();
              return missing.length === 0;
            },
            30_000,
            1000,
          ).catch(() => {});
          expect(missing).toEqual([]);

          // The latency the order took is there: paid to PREPARING was observed
          // (by the job, just after the order's PREPARING: a scrape or two later).
          const prepared = async () => Number((await query("sum(cafe_order_paid_to_preparing_seconds_count)")).data.result[0]?.value[1] ?? 0);
          await waitUntil("paid to PREPARING observed", async () => (await prepared()) >= 1, 15_000, 500);
          // Prometheus loaded the rules file too.
          const rules = (await (await fetch(`http://127.0.0.1:${promPort}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: unknown[] }> } };
          expect(rules.data.groups[0]?.rules.length).toBeGreaterThanOrEqual(15);
        },
      ).catch((e) => {
        say(`--- prometheus:\n${prometheusLog.join("").slice(-3000)}`);
        throw e;
      });
    },
    180_000,
  );
});
