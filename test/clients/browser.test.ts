import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../support/browser.ts";
import { DEMO } from "../support/client.ts";
import { insertOrders } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";
import { waitUntil } from "../support/wait.ts";

import { orderQueueTopic } from "../../common/topics.ts";
import { tempDir } from "../support/tempDirs.ts";
import { say } from "../support/figures.ts";

// The admin's ad-hoc GraphQL in Ruru (/graphiql), in a real browser driven
// by playwright-core: a system Chrome/Chromium where there is one, else the
// one the npm package @sparticuz/chromium ships (test/support/browser.ts).
// It never skips. Screenshots of each step go to test-output/browser/
// (git-ignored).

const AMERICANO = "40000000-0000-4000-8000-000000000017"; // a demo coffee
const OUT = path.resolve(__dirname, "../..", "test-output", "browser");

const t = useTestService({
  sandbox: true,
  async cleanup() {
    await browser?.close();
  },
});
let browser: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

const shot = (name: string) => page.screenshot({ path: path.join(OUT, `${name}.png`) });

/** The text of a Monaco editor on the page (its visible lines), with Monaco's non-breaking spaces made plain. */
const editorText = (selector: string) =>
  page
    .locator(`${selector} .view-lines`)
    .first()
    .innerText()
    .then((s) => s.replace(/\u00a0/g, " "));

/** Replaces the content of the Monaco editor inside `selector`, typing as the admin would (pasted in one go: no auto-closed brackets). */
async function typeInto(selector: string, text: string) {
  await page.locator(selector).first().click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
  await page.keyboard.press("Home"); // the start of the line in view, for the screenshots
}

/** Runs the operation in the editor (Ctrl+Enter), once Ruru has seen the new text (it picks the operation to run after a short debounce). */
async function run() {
  await page.waitForTimeout(1000);
  await page.keyboard.press("ControlOrMeta+Enter");
}

beforeAll(async () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const launched = await launchChromium(tempDir("ruru"));
  browser = launched.context;
  say(`browser: ${launched.choice.source}, ${browser.browser()?.version() ?? "version unknown"}`);
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => {
    // Ruru asks for /favicon.ico, which this API does not serve.
    if (m.type() === "error" && !m.location().url.endsWith("/favicon.ico")) pageErrors.push(`${m.text()} ${m.location().url}`);
  });
  // A Content-Security-Policy that refused anything Ruru loads would show here.
  await page.exposeFunction("reportCspViolation", (v: string) => pageErrors.push(`CSP: ${v}`));
  await page.addInitScript(() => document.addEventListener("securitypolicyviolation", (e) => (window as any).reportCspViolation(`${e.violatedDirective} ${e.blockedURI}`)));
}, 60_000);

test("Ruru loads under its CSP headers, with nothing refused", async () => {
  const res = await page.goto(`${t.url}/graphiql`);
  expect(res?.status()).toBe(200);
  await page.locator(".graphiql-query-editor .monaco-editor").first().waitFor({ timeout: 20_000 });
  await shot("01-ruru-loaded");
  // The IDE's page gets helmet's headers without a CSP (src/server.ts): Ruru
  // runs inline scripts, blob workers and a WebSocket to /graphql.
  expect(res?.headers()["x-content-type-options"]).toBe("nosniff");
  await page.waitForTimeout(500);
  expect(pageErrors).toEqual([]);
});

test("the admin sets a bearer token in the headers editor and runs a filtered, ordered, paginated allOrders", async () => {
  const specs = (["PAID", "COMPLETED", "PENDING", "PAID", "COMPLETED", "CANCELLED"] as const).map((status, i) => ({
    customerId: DEMO.bob.id,
    status,
    lines: [{ coffeeId: AMERICANO, quantity: i + 1 }],
    timeOffset: `-${10 + i} minutes`,
  }));
  await insertOrders(t, specs);
  const { rows: expected } = await t.db.query(`select id, status from app_public.orders where customer_id = $1 and status in ('PAID', 'COMPLETED') order by time_ordered desc limit 2 offset 1`, [
    DEMO.bob.id,
  ]);
  const { rows: count } = await t.db.query(`select count(*)::int as n from app_public.orders where customer_id = $1 and status in ('PAID', 'COMPLETED')`, [DEMO.bob.id]);
  expect(expected).toHaveLength(2);

  const token = await t.token("admin");
  await page.getByText("Headers", { exact: true }).click();
  await typeInto('.monaco-editor[data-uri$="headers.json"]', JSON.stringify({ Authorization: `Bearer ${token}` }));
  await shot("02-headers");

  await typeInto(
    ".graphiql-query-editor .monaco-editor",
    `query AdHoc { allOrders(filter: { customerId: { equalTo: "${DEMO.bob.id}" }, status: { in: [PAID, COMPLETED] } }, orderBy: [TIME_ORDERED_DESC], first: 2, offset: 1) { totalCount nodes { id status } } }`,
  );
  await run();
  const result = await waitUntil(
    "the result on the page",
    async () => {
      const text = await editorText(".graphiql-response");
      return text.includes("totalCount") ? text : "";
    },
    15_000,
    100,
  );
  await shot("03-all-orders");
  const parsed = JSON.parse(result);
  expect(parsed).toMatchObject({ data: { allOrders: { totalCount: count[0].n, nodes: expected.map((o) => ({ id: o.id, status: o.status })) } } });
}, 60_000);

test("an orderQueueChanged subscription started in Ruru shows the order paid at the till", async () => {
  const [orderId] = await insertOrders(t, [{ customerId: DEMO.alice.id, status: "PENDING", lines: [{ coffeeId: AMERICANO, quantity: 2 }] }]);
  await typeInto(".graphiql-query-editor .monaco-editor", `subscription Queue { orderQueueChanged { id status total } }`);
  await run();
  await waitUntil("the subscription's LISTEN", () => t.service.api!.subscriber.listeningTopics.includes(orderQueueTopic(DEMO.stores.baixa)), 15_000, 50);
  await shot("04-subscription-started");

  const paid = await t.gql(`mutation($id: ID!) { markOrderPaid(id: $id, method: CARD_PRESENT) { id status } }`, { variables: { id: orderId }, token: await t.token("barista") });
  expect(paid.body.errors).toBeUndefined();
  const event = await waitUntil(
    "the event on the page",
    async () => {
      const text = await editorText(".graphiql-response");
      return text.includes(orderId!) ? text : "";
    },
    15_000,
    100,
  );
  await shot("05-subscription-event");
  expect(JSON.parse(event)).toMatchObject({ data: { orderQueueChanged: { id: orderId, status: "PAID" } } });
  expect(pageErrors).toEqual([]);
}, 60_000);
