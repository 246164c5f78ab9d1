import net from "node:net";
import fc from "fast-check";
import type pg from "pg";
import { errorCode, type RawResponse, request } from "../support/client.ts";
import { report } from "../support/figures.ts";
import { LONG } from "../support/load.ts";
import { CALLBACK_PATH, callbackHeaders, SECRETS, sendCallback, signature } from "../support/paymentProvider.ts";
import { ChildService, useDrillDatabase, withLogsOnFailure } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Drill 5: hostile input on the payment callback route, generated with
// fast-check: random bytes, random JSON, the two shapes with wrong types,
// unicode, NUL characters and duplicate keys, huge and deeply nested
// bodies, signatures over other bytes, odd tokens and content types,
// slow-loris bodies and headers. Every answer is one of the documented
// ones, the process stays up with bounded memory, and nothing changes in
// the database but the delivery log, the alerts and the block list.

const RUNS = LONG ? 10 : 1;
const SLOW_OBSERVE_MS = LONG ? 360_000 : 12_000;

const { d } = useDrillDatabase("cafe_drill_5");
let api: ChildService | null = null;

const DOCUMENTED: Record<number, string[]> = {
  200: ["ignored", "duplicate", "processed"],
  400: ["INVALID_JSON", "VALIDATION_FAILED"],
  401: ["UNAUTHORIZED", "BAD_SIGNATURE"],
  413: ["PAYLOAD_TOO_LARGE"],
  415: ["UNSUPPORTED_MEDIA_TYPE"],
  422: ["ORDER_NOT_FOUND", "AMOUNT_MISMATCH", "ITEMS_MISMATCH", "ORDER_NOT_PAYABLE", "AMBIGUOUS_ORDER", "CURRENCY_MISMATCH"],
  429: ["RATE_LIMITED"],
};

/** What Node lets a client put in a header value. */
const headerSafe = (s: string) => /^[\t\x20-\x7e]*$/.test(s);

/** "status:code" of an answer. */
function label(r: RawResponse): string {
  return `${r.status}:${r.json?.status ?? r.json?.error?.code ?? "?"}`;
}

function isDocumented(r: RawResponse): boolean {
  const codes = DOCUMENTED[r.status];
  if (!codes) return false;
  const code = r.status === 200 ? r.json?.status : r.json?.error?.code;
  if (!codes.includes(code)) return false;
  if (code === "VALIDATION_FAILED" && !Array.isArray(r.json?.error?.details)) return false;
  return true;
}

/**
 * Every table of the service's schemas, as a digest, but for those hostile
 * input may change, and the processes' shared rate-limit counts
 * (app_private.rate_usage: each process's heartbeat row moves on every sync).
 */
async function snapshot(db: pg.Pool): Promise<Record<string, string>> {
  const { rows: tables } = await db.query<{ name: string }>(
    `select format('%I.%I', schemaname, tablename) as name from pg_tables
      where schemaname in ('app_public', 'app_private', 'app_hidden', 'graphile_worker')
        and format('%I.%I', schemaname, tablename) not in
            ('app_private.payment_deliveries', 'app_public.payment_alerts', 'app_private.blocked_sources', 'app_private.alert_windows', 'app_private.worker_heartbeats',
             'app_private.rate_usage')
      order by 1`,
  );
  const out: Record<string, string> = {};
  for (const t of tables) {
    const { rows } = await db.query(`select count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from ${t.name} x`);
    out[t.name] = `${rows[0].n}:${rows[0].h}`;
  }
  return out;
}

test(
  "hostile callback input: documented answers only, the process stays up, memory bounded, nothing changes but the log, alerts and blocks",
  () =>
    withLogsOnFailure(
      () => [api],
      async () => {
        // Hostile bodies from one source, faster than CALLBACK_RATE_LIMIT: the limit has its own test (test/http/payment-callback.before-io.test.ts).
        api = await ChildService.start({ name: "api", mode: "api", databaseUrl: d.url, env: { DATABASE_POOL_SIZE: "6", CALLBACK_RATE_LIMIT: "1000000" } });
        const url = api.url;
        const target = `${url}${CALLBACK_PATH}`;
        const db = d.db;
        // The service keeps the block list in memory, updated by the delete's
        // NOTIFY (a few ms; the service is another process here): wait for it.
        const unblock = async () => {
          await db.query("delete from app_private.blocked_sources");
          await sleep(100);
        };

        // Real orders and customers, so that hostile bodies reach the order rules too.
        const { rows: orderRows } = await db.query<{ id: string; status: string; total: string; email: string }>(
          `select o.id, o.status::text, o.total::text, a.email::text from app_public.orders o join app_private.accounts a on a.id = o.customer_id
            where o.status <> 'CANCELLED'`,
        );
        const pendingTotals = new Set(orderRows.filter((o) => o.status === "PENDING").map((o) => Number(o.total).toFixed(2)));
        const { rows: coffeeRows } = await db.query<{ id: string; name: string }>("select id, name from app_public.coffees");
        const before = await snapshot(db);
        const rssStart = api.rssMb() ?? 0;
        let rssPeak = rssStart;
        const memory = setInterval(() => {
          rssPeak = Math.max(rssPeak, api?.rssMb() ?? 0);
        }, 200);

        const seen: Record<string, number> = {};
        const undocumented: string[] = [];
        let cases = 0;
        /** Sends one body; records and checks its answer. */
        const send = async (body: Buffer | string, headers: Record<string, string>, check?: (r: RawResponse) => boolean) => {
          cases++;
          let r: RawResponse;
          try {
            r = await request(target, { method: "POST", headers, body, timeoutMs: 15_000 });
          } catch (e) {
            undocumented.push(`no answer (${errorCode(e)}) to ${String(body).slice(0, 120)}`);
            return null;
          }
          seen[label(r)] = (seen[label(r)] ?? 0) + 1;
          if (!isDocumented(r) || (check && !check(r))) {
            undocumented.push(`${r.status} ${r.text.slice(0, 160)} <- ${headers["content-type"] ?? ""} ${String(body).slice(0, 160)}`);
          }
          return r;
        };
        const signed = (body: Buffer | string, extra: Record<string, string> = {}) => send(body, callbackHeaders(body, extra));
        const notProcessed = (r: RawResponse) => !(r.status === 200 && r.json?.status === "processed");

        // --- slow-loris, alongside everything else ---
        const slowLoris = (mode: "body" | "headers") =>
          new Promise<{ mode: string; closedAfterMs: number | null; bytesSent: number; answer: string }>((resolve) => {
            const started = Date.now();
            const socket = net.connect(api!.port, "127.0.0.1");
            let bytes = 0;
            let answer = "";
            let closedAt: number | null = null;
            const body = JSON.stringify({ event: "payment.completed", data: { amount: 1, customer: "a@b.c" }, pad: "x".repeat(200) });
            socket.on("data", (c) => (answer += c.toString()));
            socket.on("error", () => {});
            socket.on("close", () => (closedAt = Date.now()));
            socket.on("connect", () => {
              if (mode === "body") {
                socket.write(
                  `POST ${CALLBACK_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${SECRETS.webhookToken}\r\nX-Signature: ${signature(body)}\r\nContent-Length: ${body.length}\r\n\r\n`,
                );
              } else {
                socket.write(`POST ${CALLBACK_PATH} HTTP/1.1\r\nHost: x\r\nX-Slow: `);
              }
            });
            const tick = setInterval(() => {
              if (closedAt || Date.now() - started > SLOW_OBSERVE_MS) {
                clearInterval(tick);
                const result = { mode, closedAfterMs: closedAt ? closedAt - started : null, bytesSent: bytes, answer: answer.split("\r\n")[0] ?? "" };
                socket.destroy();
                resolve(result);
                return;
              }
              // One byte every half second, never finishing.
              if (mode === "body" && bytes < body.length - 1) socket.write(body[bytes++]!);
              if (mode === "headers") {
                socket.write(bytes % 20 === 19 ? "\r\nX-Slow: " : "a");
                bytes++;
              }
            }, 500);
          });
        const slow = Promise.all([slowLoris("body"), slowLoris("headers"), ...Array.from({ length: 50 }, () => slowLoris("body"))]);
        await sleep(300);

        // While 52 slow connections hang on: the route still answers promptly.
        const promptBody = JSON.stringify({ event: "refund.created", event_id: "prompt-check" });
        const prompt = await sendCallback(url, promptBody, { timeoutMs: 5000 }).then(
          (r) => ({ status: r.status, ms: r.ms }),
          (e) => ({ status: errorCode(e), ms: -1 }),
        );

        // --- 1. random bytes, signed ---
        await fc.assert(
          fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), async (bytes) => {
            await signed(Buffer.from(bytes), {});
          }),
          { numRuns: 150 * RUNS },
        );

        // --- 2. random JSON values, signed ---
        await fc.assert(
          fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (v) => {
            await send(JSON.stringify(v) ?? "null", callbackHeaders(JSON.stringify(v) ?? "null"), notProcessed);
          }),
          { numRuns: 150 * RUNS },
        );

        // --- 3. the two shapes, with wrong types, odd strings, real ids ---
        const nasty = fc.constantFrom(
          "' or 1=1 --",
          "'; drop table app_public.orders; --",
          "\u0000",
          "a\u0000b",
          "\ud800",
          "🙂☕️",
          "ǅ\u202e\u200b",
          "1e308",
          "-0",
          "NaN",
          "Infinity",
          "0.001",
          "99999999.999",
          "100000000",
          " 1.00",
          "1,00",
          "x".repeat(300),
          "00000000-0000-0000-0000-000000000000",
          "ALICE@EXAMPLE.COM",
          "%s%s%s%n",
          "${jndi:ldap://x}",
          "<script>alert(1)</script>",
        );
        const anyValue = fc.oneof(
          nasty,
          fc.string({ unit: "binary", maxLength: 40 }),
          fc.integer(),
          fc.double(),
          fc.boolean(),
          fc.constant(null),
          fc.array(fc.oneof(fc.integer(), fc.string())),
          fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })),
          fc.constantFrom(...orderRows.map((o) => o.id)),
          fc.constantFrom(...orderRows.map((o) => o.email)),
          fc.constantFrom(...coffeeRows.map((c) => c.name), ...coffeeRows.map((c) => c.id)),
        );
        const amount = fc
          .oneof(anyValue, fc.constantFrom(...orderRows.map((o) => Number(o.total))), fc.double({ min: 0, max: 100 }))
          .map((a) => (typeof a === "number" && pendingTotals.has(Number(a).toFixed(2)) ? a + 0.01 : typeof a === "string" && pendingTotals.has(a) ? `${a}1` : a));
        const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
        const shapeA = fc.record(
          {
            event: fc.oneof(fc.constant("payment.completed"), anyValue),
            data: fc.oneof(fc.record({ amount, customer: anyValue, order_id: maybe(anyValue) }, { requiredKeys: [] }), anyValue),
            event_id: maybe(anyValue),
            idempotency_key: maybe(anyValue),
            extra: maybe(anyValue),
          },
          { requiredKeys: ["event"] },
        );
        const shapeB = fc.record(
          {
            order_id: anyValue,
            status: fc.oneof(fc.constantFrom("paid", "PAID", "Paid", "pending", "failed"), anyValue),
            amount,
            items: fc.oneof(fc.array(fc.record({ product: anyValue, quantity: fc.oneof(fc.integer({ min: -5, max: 2000 }), anyValue) }, { requiredKeys: [] }), { maxLength: 5 }), anyValue),
            event_id: maybe(anyValue),
            idempotency_key: maybe(anyValue),
          },
          { requiredKeys: ["order_id"] },
        );
        await fc.assert(
          fc.asyncProperty(fc.oneof(shapeA, shapeB), async (v) => {
            const body = JSON.stringify(v);
            await send(body, callbackHeaders(body), notProcessed);
          }),
          { numRuns: 400 * RUNS },
        );

        // --- 4. hand-made JSON text: duplicate keys, escapes, unicode keys ---
        const dupKeys = fc
          .tuple(anyValue, anyValue, fc.constantFrom(...orderRows.map((o) => o.id)), fc.string({ unit: "grapheme", maxLength: 20 }))
          .map(([a, b, id, s]) =>
            [
              `{"event":"payment.completed","event":${JSON.stringify(a)},"data":{"amount":1,"amount":${JSON.stringify(b)},"customer":"alice@example.com","order_id":"${id}"},"event_id":${JSON.stringify(s)}}`,
              `{"order_id":"${id}","order_id":${JSON.stringify(a)},"status":"paid","amount":${JSON.stringify(b)},"items":[{"product":"Latte","quantity":1}],"status":"pending"}`,
              `{"\\u0065vent":"payment.completed","data":{"amount":"1.00","customer":"alice@example.com"},"event_id":"\\u0000${s}"}`,
              `{"event":"payment.completed","data":{"amount":1,"customer":"alice@example.com"},"${s}":${JSON.stringify(a)},"idempotency_key":"\\ud800\\udc00${s}"}`,
              `\ufeff{"event":"x"}`,
              `{"event":"x"} trailing`,
              `{"event":"x",}`,
            ].join("\n"),
          );
        await fc.assert(
          fc.asyncProperty(dupKeys, fc.nat(6), async (texts, i) => {
            const body = texts.split("\n")[i]!;
            await send(body, callbackHeaders(body), notProcessed);
          }),
          { numRuns: 150 * RUNS },
        );

        // --- 5. signatures over other bytes (the source unblocked before each, so the answer is exact) ---
        const validBody = JSON.stringify({ event: "payment.completed", data: { amount: 1, customer: "alice@example.com" }, event_id: "sig-check" });
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              fc.uint8Array({ minLength: 1, maxLength: 20 }).map((extra) => signature(Buffer.concat([Buffer.from(validBody), Buffer.from(extra)]))),
              fc.string({ minLength: 16, maxLength: 40 }).map((secret) => signature(validBody, secret)),
              fc.constant(signature(validBody).replace("sha256=", "sha1=")),
              fc.constant(signature(validBody).slice(0, -2)),
              fc.constant(signature(validBody.replace("1", "2"))),
              fc.constant(`sha256=${"0".repeat(64)}`),
              fc.constant(""),
              fc.string({ unit: "binary-ascii", maxLength: 100 }).filter(headerSafe),
            ),
            async (sig) => {
              await unblock();
              await send(
                validBody,
                { "content-type": "application/json", authorization: `Bearer ${SECRETS.webhookToken}`, "x-signature": sig },
                (r) => r.status === 401 && r.json?.error?.code === "BAD_SIGNATURE",
              );
            },
          ),
          { numRuns: 100 * RUNS },
        );

        // --- 6. odd Authorization headers ---
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              fc
                .string({ unit: "binary-ascii", maxLength: 80 })
                .filter(headerSafe)
                .map((s) => `Bearer ${s}`),
              fc.constantFrom(
                `Basic ${Buffer.from(`x:${SECRETS.webhookToken}`).toString("base64")}`,
                `Bearer ${SECRETS.webhookToken}x`,
                `Bearer ${SECRETS.webhookToken.slice(1)}`,
                `Bearer  ${SECRETS.webhookToken} extra`,
                `Token ${SECRETS.webhookToken}`,
                "Bearer",
                "",
                `Bearer ${"a".repeat(8000)}`,
              ),
            ),
            async (auth) => {
              await unblock();
              const hdrs: Record<string, string> = { "content-type": "application/json", "x-signature": signature(validBody) };
              if (auth) hdrs.authorization = auth;
              await send(validBody, hdrs, (r) => r.status === 401 && r.json?.error?.code === "UNAUTHORIZED");
            },
          ),
          { numRuns: 60 * RUNS },
        );

        // --- 7. content types and encodings (unblocked: earlier auth failures blocked this source,
        // and a blocked source gets 429 before its body is read) ---
        await unblock();
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "json", "", "application/json-patch+json"),
              fc.string({ unit: "binary-ascii", maxLength: 40 }).filter(headerSafe),
            ),
            async (ct) => {
              const isJson = ct.split(";")[0]!.trim().toLowerCase() === "application/json";
              await send(validBody, callbackHeaders(validBody, { "content-type": ct }), (r) => (isJson ? r.status !== 415 : r.status === 415));
            },
          ),
          { numRuns: 40 * RUNS },
        );
        await send(validBody, callbackHeaders(validBody, { "content-encoding": "gzip" }), (r) => r.status === 415);

        // --- 8. huge and deeply nested bodies, many at once ---
        await unblock();
        const big = Buffer.from(JSON.stringify({ event: "x", pad: "y".repeat(64 * 1024) }));
        await send(big, callbackHeaders(big), (r) => r.status === 413);
        await unblock();
        await send(big, { "content-type": "application/json" }, (r) => r.status === 413);
        const huge = Buffer.alloc(5 * 1024 * 1024, 0x5b); // 5 MiB of '['
        await unblock();
        await send(huge, callbackHeaders(huge), (r) => r.status === 413);
        const depth = 30_000;
        const deep = `{"event":"payment.completed","data":{"amount":1,"customer":"alice@example.com","order_id":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
        await send(deep, callbackHeaders(deep), (r) => r.status === 400);
        const deepIgnored = `{"event":"deep.one","event_id":"deep-1","data":${'{"a":'.repeat(8000)}1${"}".repeat(8000)}}`;
        await send(deepIgnored, callbackHeaders(deepIgnored), notProcessed);
        const deepKey = `{"event":"payment.completed","event_id":${"[".repeat(20000)}${"]".repeat(20000)},"data":{"amount":1,"customer":"alice@example.com"}}`;
        await send(deepKey, callbackHeaders(deepKey), (r) => r.status === 400);
        const nearLimit = Buffer.from(JSON.stringify({ event: "payment.completed", data: { amount: 1, customer: "nobody@example.com" }, pad: "z".repeat(64 * 1024 - 120) }));
        for (let round = 0; round < 3 * RUNS; round++) {
          await Promise.all(Array.from({ length: 40 }, () => send(nearLimit, callbackHeaders(nearLimit))));
          // A body too large to read is a failure before authentication: past the threshold the source is blocked (429).
          await Promise.all(Array.from({ length: 40 }, () => send(big, callbackHeaders(big), (r) => r.status === 413 || r.status === 429)));
        }

        const slowResults = await slow;
        clearInterval(memory);
        const rssEnd = api.rssMb() ?? 0;
        const health = await request(`${url}/healthz`, { timeoutMs: 5000 }).then((r) => r.status, errorCode);
        const after = await snapshot(db);
        const changed = Object.keys({ ...before, ...after }).filter((k) => before[k] !== after[k]);
        const { rows: ignoredKeys } = await db.query("select count(*)::int as n from app_private.processed_payment_keys where outcome = 'ignored'");
        const { rows: logged } = await db.query("select count(*)::int as n from app_private.payment_deliveries");
        const { rows: alerts } = await db.query("select kind, count(*)::int as n from app_public.payment_alerts group by kind order by 1");
        const bodySlow = slowResults.filter((s) => s.mode === "body");
        const headerSlow = slowResults.find((s) => s.mode === "headers")!;

        report("5 hostile-callbacks", {
          fuzz_cases: cases,
          answers: seen,
          undocumented: undocumented.length,
          prompt_answer_during_slowloris: prompt,
          slowloris_body: `${bodySlow.filter((s) => s.closedAfterMs !== null).length}/${bodySlow.length} cut by the server within ${SLOW_OBSERVE_MS / 1000} s${
            bodySlow.some((s) => s.closedAfterMs)
              ? ` (after ${Math.min(...bodySlow.filter((s) => s.closedAfterMs).map((s) => s.closedAfterMs!))} ms: ${bodySlow.find((s) => s.closedAfterMs)?.answer})`
              : ""
          }`,
          slowloris_headers: headerSlow.closedAfterMs ? `cut after ${headerSlow.closedAfterMs} ms (${headerSlow.answer})` : `still open after ${SLOW_OBSERVE_MS / 1000} s`,
          rss_mb: { start: Math.round(rssStart), peak: Math.round(rssPeak), end: Math.round(rssEnd) },
          process_alive: api.alive,
          healthz: health,
          tables_changed: changed,
          ignored_keys_recorded: ignoredKeys[0].n,
          deliveries_logged: logged[0].n,
          alerts: Object.fromEntries(alerts.map((a) => [a.kind, a.n])),
        });

        // Grouped by answer, with a few examples each.
        const groups: Record<string, { count: number; examples: string[] }> = {};
        for (const u of undocumented) {
          const g = (groups[u.slice(0, u.indexOf(" <- ")).replace(/"message":"[^"]*"/, "")] ??= { count: 0, examples: [] });
          g.count++;
          if (g.examples.length < 3) g.examples.push(u.slice(u.indexOf(" <- ") + 4, u.indexOf(" <- ") + 200));
        }
        expect({
          undocumentedAnswers: groups,
          processAlive: api.alive,
          healthz: health,
          promptDuringSlowLoris: typeof prompt.status === "number" && prompt.ms < 2000,
          rssPeakGrowthUnder300MB: rssPeak - rssStart < 300,
          rssEndGrowthUnder150MB: rssEnd - rssStart < 150,
          // Nothing but the log, the alerts and the block list changed. (The
          // processed-keys table counts too: a refused delivery is not
          // recorded as processed, README "Payment callbacks".)
          tablesChanged: changed,
        }).toEqual({
          undocumentedAnswers: {},
          processAlive: true,
          healthz: 200,
          promptDuringSlowLoris: true,
          rssPeakGrowthUnder300MB: true,
          rssEndGrowthUnder150MB: true,
          tablesChanged: [],
        });
        if (LONG) {
          // The server does not keep a never-finishing upload forever.
          expect(bodySlow.every((s) => s.closedAfterMs !== null)).toBe(true);
          expect(headerSlow.closedAfterMs).not.toBeNull();
        }
      },
    ),
  LONG ? 1_200_000 : 180_000,
);

test("a refused or an ignored delivery does not use up its key: the corrected payment is processed", () =>
  withLogsOnFailure(
    () => [api],
    async () => {
      const url = api!.url;
      const { rows } = await d.db.query<{ id: string; total: string; email: string; items: Array<{ product: string; quantity: number }> }>(
        `select o.id, o.total::text, a.email::text,
                (select json_agg(json_build_object('product', i.coffee_id, 'quantity', i.quantity)) from app_public.order_items i where i.order_id = o.id) as items
           from app_public.orders o join app_private.accounts a on a.id = o.customer_id
          where o.status = 'PENDING' order by o.time_ordered limit 2`,
      );
      expect(rows.length).toBe(2);
      const [p1, p2] = rows as [(typeof rows)[0], (typeof rows)[0]];
      const body = (o: typeof p1, extra: Record<string, unknown>) => JSON.stringify({ order_id: o.id, status: "paid", amount: o.total, items: o.items, ...extra });
      const answer = async (b: string) => {
        const r = await sendCallback(url, b);
        return `${r.status}:${r.json?.status ?? r.json?.error?.code}`;
      };
      // 1. Refused (wrong amount), then sent right under the same key.
      const refused = await answer(body(p1, { idempotency_key: `k1-${p1.id}`, amount: (Number(p1.total) + 1).toFixed(2) }));
      const corrected = await answer(body(p1, { idempotency_key: `k1-${p1.id}` }));
      // 2. Ignored (status pending), then the payment under the same key.
      const ignored = await answer(body(p2, { idempotency_key: `k2-${p2.id}`, status: "pending" }));
      const paidAfterIgnored = await answer(body(p2, { idempotency_key: `k2-${p2.id}` }));
      report("5 keys-after-refusal", { refused, corrected, ignored, paidAfterIgnored });
      expect({ refused, corrected, ignored, paidAfterIgnored }).toEqual({
        refused: "422:AMOUNT_MISMATCH",
        corrected: "200:processed",
        ignored: "200:ignored",
        // A refused delivery's key is not recorded as processed (README "Payment callbacks").
        paidAfterIgnored: "200:processed",
      });
    },
  ));
