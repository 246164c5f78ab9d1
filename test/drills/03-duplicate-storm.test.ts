import { errorCode } from "../support/client.ts";
import { jobCounts } from "../support/db.ts";
import { report } from "../support/figures.ts";
import { effectProblems, orderEffects } from "../support/fixtures.ts";
import { LONG, mapLimit, shuffle } from "../support/load.ts";
import { type KeyKind, paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { ChildService, useDrillDatabase, withLogsOnFailure } from "../support/service.ts";
import { sleep } from "../support/wait.ts";

// Drill 3: duplicate storm. Every one of EVENTS distinct payment events is
// delivered COPIES times, shuffled, CONCURRENCY at a time, spread over two
// API processes on one database: exactly EVENTS are processed, the rest are
// duplicates, and each payment's effects happen once (one PAID transition,
// three jobs, then one notification and one stock movement set). A few
// events also arrive once with an extra field (a different body under the
// same key): still a duplicate, and an alert. The storm itself is a burst
// over app_private.alert_rules 'burst' (300 in 60 s): one burst alert a
// window it falls in.

const EVENTS = LONG ? 400 : 100;
const COPIES = 10;
const CONCURRENCY = 50;
const ALTERED = 5;

const { d, orders } = useDrillDatabase("cafe_drill_3", { orders: EVENTS, setupTimeoutMs: 120_000 });
const apis: ChildService[] = [];
let worker: ChildService | null = null;

test(
  `duplicate storm: ${EVENTS * COPIES} deliveries of ${EVENTS} events over two API processes`,
  () =>
    withLogsOnFailure(
      () => [...apis, worker],
      async () => {
        const env = { DATABASE_POOL_SIZE: "10" };
        apis.push(...(await Promise.all([1, 2].map((n) => ChildService.start({ name: `api-${n}`, mode: "api", databaseUrl: d.url, env })))));

        const kinds: KeyKind[] = ["event", "idem", "none"];
        const events = orders.map((o, i) => ({ order: o, body: paymentBody(o, i % 2 ? "A" : "B", kinds[i % 3]!), kind: kinds[i % 3]! }));
        const deliveries: Array<{ event: number; body: string }> = [];
        events.forEach((e, i) => {
          for (let c = 0; c < COPIES; c++) deliveries.push({ event: i, body: e.body });
        });
        // A different body under a known key (a provider adding a field to a retry).
        const altered = events.filter((e) => e.kind !== "none").slice(0, ALTERED);
        for (const e of altered) {
          const i = events.indexOf(e);
          const j = deliveries.findIndex((x) => x.event === i);
          const parsed = JSON.parse(e.body);
          deliveries[j] = { event: i, body: JSON.stringify({ ...parsed, delivery_attempt: 7 }) };
        }

        const started = Date.now();
        const answers = await mapLimit(shuffle(deliveries), CONCURRENCY, async (x, n) => {
          const api = apis[n % 2]!;
          for (let attempt = 1; attempt <= 5; attempt++) {
            try {
              const r = await sendCallback(api.url, x.body, { timeoutMs: 20_000 });
              if (r.status === 200) return { event: x.event, answer: String(r.json?.status), attempts: attempt, ms: r.ms };
              if (attempt === 5) return { event: x.event, answer: `${r.status}:${r.json?.error?.code}`, attempts: attempt, ms: r.ms };
            } catch (e) {
              if (attempt === 5) return { event: x.event, answer: errorCode(e), attempts: attempt, ms: 0 };
            }
            await sleep(200);
          }
          return { event: x.event, answer: "?", attempts: 5, ms: 0 };
        });
        const stormMs = Date.now() - started;

        const count = (a: string) => answers.filter((x) => x.answer === a).length;
        const processedPerEvent = new Map<number, number>();
        for (const a of answers) if (a.answer === "processed") processedPerEvent.set(a.event, (processedPerEvent.get(a.event) ?? 0) + 1);
        const retried = answers.filter((a) => a.attempts > 1).length;

        // Effects before any worker ran: one PAID transition and three jobs an order.
        const { rows: paid } = await d.db.query("select count(*)::int as n from app_public.order_events where to_status = 'PAID' and order_id = any($1::uuid[])", [orders.map((o) => o.id)]);
        // Each job of an order: start_preparation:<order>, update_inventory:<order>,
        // and notification__send_webhook:<its payment notification>.
        const { rows: jobsPerOrder } = await d.db.query<{ n: number; total: number }>(
          `with j as (
             select case when key like 'notification\\_\\_send\\_webhook:%'
                         then (select n.order_id::text from app_public.notifications n where n.id::text = split_part(key, ':', 2))
                         else split_part(key, ':', 2) end as order_id
             from graphile_worker.jobs where key is not null),
           per as (select order_id, count(*) as k from j where order_id = any($1::text[]) group by 1)
           select (select count(*)::int from per where k <> 3) as n, (select coalesce(sum(k), 0)::int from per) as total`,
          [orders.map((o) => o.id)],
        );
        const jobsBefore = await jobCounts(d.db);
        const { rows: logged } = await d.db.query("select outcome, count(*)::int as n from app_private.payment_deliveries group by outcome order by 1");
        const { rows: alerts } = await d.db.query("select kind, count(*)::int as n from app_public.payment_alerts group by kind order by 1");

        // Then the worker: one notification, one set of stock movements an order.
        worker = await ChildService.start({ name: "worker", mode: "worker", databaseUrl: d.url, waitReady: false });
        const settleStart = Date.now();
        let effects = await orderEffects(
          d.db,
          orders.map((o) => o.id),
        );
        let bad = orders.filter((o) => effectProblems(effects.get(o.id), true).length);
        while (bad.length && Date.now() - settleStart < 60_000) {
          await sleep(500);
          effects = await orderEffects(
            d.db,
            orders.map((o) => o.id),
          );
          bad = orders.filter((o) => effectProblems(effects.get(o.id), true).length);
        }

        report("3 duplicate-storm", {
          deliveries: answers.length,
          events: EVENTS,
          concurrency: CONCURRENCY,
          api_processes: apis.length,
          processed: count("processed"),
          duplicates_answered: count("duplicate"),
          other_answers: answers.length - count("processed") - count("duplicate"),
          deliveries_retried: retried,
          storm_s: (stormMs / 1000).toFixed(1),
          slowest_answer_ms: Math.max(...answers.map((a) => a.ms)),
          paid_transitions: paid[0].n,
          jobs_after_storm: jobsBefore.total,
          logged: Object.fromEntries(logged.map((r) => [r.outcome, r.n])),
          alerts: Object.fromEntries(alerts.map((r) => [r.kind, r.n])),
          settled_orders: orders.length - bad.length,
          settle_s: ((Date.now() - settleStart) / 1000).toFixed(1),
        });

        const burstAlerts = alerts.find((a) => a.kind === "burst")?.n ?? 0;
        // The rule's windows are aligned (date_bin from the epoch): a storm of
        // a few seconds may fall across two of them, and then alerts in each.
        const { rows: windows } = await d.db.query(
          "select count(distinct date_bin(make_interval(secs => r.window_seconds), p.received_at, timestamptz 'epoch'))::int as n from app_private.payment_deliveries p, app_private.alert_rules r where r.kind = 'burst'",
        );
        const windowsTouched = windows[0].n as number;
        expect({
          otherAnswers: answers.filter((a) => a.answer !== "processed" && a.answer !== "duplicate").slice(0, 5),
          processed: count("processed"),
          duplicates: count("duplicate"),
          eventsProcessedMoreThanOnce: [...processedPerEvent.entries()].filter(([, n]) => n !== 1).length + (EVENTS - processedPerEvent.size),
          paidTransitions: paid[0].n,
          jobs: jobsPerOrder[0]?.total ?? 0,
          ordersWithoutThreeJobs: jobsPerOrder[0]?.n ?? 0,
          logged: Object.fromEntries(logged.map((r) => [r.outcome, r.n])),
          // Each altered body raised its alert (either it came first and its
          // siblings differ from it, or it came later and differs).
          differentBodyAlertsAtLeastAltered: (alerts.find((a) => a.kind === "duplicate_key_different_body")?.n ?? 0) >= ALTERED,
          // 1,000 callbacks in seconds is a burst over the rule (300 in 60 s): one alert a window.
          burstAlertsOneAWindow: burstAlerts >= 1 && burstAlerts <= windowsTouched ? true : { burstAlerts, windowsTouched },
          unsettled: orders
            .map((o) => ({ order: o.id, problems: effectProblems(effects.get(o.id), true) }))
            .filter((x) => x.problems.length)
            .slice(0, 5),
        }).toEqual({
          otherAnswers: [],
          processed: EVENTS,
          duplicates: EVENTS * (COPIES - 1),
          eventsProcessedMoreThanOnce: 0,
          paidTransitions: EVENTS,
          jobs: EVENTS * 3,
          ordersWithoutThreeJobs: 0,
          logged: { duplicate: EVENTS * (COPIES - 1), processed: EVENTS },
          differentBodyAlertsAtLeastAltered: true,
          burstAlertsOneAWindow: true,
          unsettled: [],
        });
      },
    ),
  LONG ? 600_000 : 150_000,
);
