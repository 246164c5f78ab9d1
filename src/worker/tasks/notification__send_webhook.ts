import { createHmac } from "node:crypto";
import type { Task } from "graphile-worker";
import type { Config } from "../../config.ts";
import { logger } from "../../logger.ts";
import { asSystemInJob } from "../job.ts";
import { annotateSpan, outgoingCall } from "../../tracing.ts";

// The outgoing webhook of one customer notification (NOTIFY_WEBHOOK_URL),
// signed the Standard Webhooks way (https://www.standardwebhooks.com):
// webhook-id is the notification's id, the same on every attempt, so the
// receiver drops a repeat; webhook-timestamp is the attempt's time in unix
// seconds; webhook-signature is `v1,` + base64(HMAC-SHA256(key,
// `${id}.${timestamp}.${body}`)). Payload: { id } (queued by the trigger
// app_private.tg_notifications__publish, job_key per notification).
//
// A failed attempt (network error, timeout, non-2xx) is recorded and the
// next one queued by app_private.notification_webhook_failed, after the
// DBA's backoff settings (notify_webhook_backoff_*); the delivery is
// recorded too, so a job run again sends nothing twice.

/** How long one attempt may take before it counts as failed. */
const ATTEMPT_TIMEOUT_MS = 10_000;

/** The signing key's bytes: the base64 after `whsec_`, or the raw string. */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice("whsec_".length), "base64") : Buffer.from(secret, "utf8");
}

/** The `webhook-signature` value for one attempt. */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac("sha256", webhookKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

interface NotificationBody {
  id: string;
  kind: string;
  [key: string]: unknown;
}

function idOf(payload: unknown): string {
  const id = (payload as { id?: unknown } | null)?.id;
  if (typeof id !== "string" || !/^[0-9a-f-]{36}$/i.test(id)) throw new Error(`payload has no valid id: ${JSON.stringify(payload)}`);
  return id;
}

async function post(url: string, secret: string, n: NotificationBody): Promise<void> {
  const timestamp = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: `notification.${n.kind}`, timestamp: new Date(timestamp * 1000).toISOString(), data: n });
  // In a client span while tracing is on; the receiver gets `traceparent`.
  const res = await outgoingCall("POST notification webhook", { "http.request.method": "POST", "server.address": new URL(url).host, "cafe.notification.kind": n.kind }, (traceHeaders) =>
    fetch(url, {
      method: "POST",
      headers: {
        ...traceHeaders,
        "content-type": "application/json",
        "webhook-id": n.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": webhookSignature(secret, n.id, timestamp, body),
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    }).then(async (res) => {
      // Drain the answer (in the span) so the connection is freed.
      annotateSpan({ "http.response.status_code": res.status });
      await res.arrayBuffer().catch(() => undefined);
      return res;
    }),
  );
  if (res.status < 200 || res.status >= 300) throw new Error(`receiver answered ${res.status}`);
}

export function notification__send_webhook(config: Pick<Config, "NOTIFY_WEBHOOK_URL" | "NOTIFY_WEBHOOK_SECRET">): Task {
  return async (payload, helpers) => {
    const id = idOf(payload);
    const url = config.NOTIFY_WEBHOOK_URL;
    const secret = config.NOTIFY_WEBHOOK_SECRET;
    // No webhook configured: nothing to send (the row and the subscription are the notification).
    if (!url || !secret) return;
    const n = await asSystemInJob(helpers, async (c) => (await c.query<{ n: NotificationBody | null }>("select app_private.notification_webhook($1) as n", [id])).rows[0]!.n);
    if (!n) return; // delivered already, given up, or gone
    try {
      await post(url, secret, n);
    } catch (err) {
      const message = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
      const next = await asSystemInJob(helpers, async (c) => (await c.query<{ next: Date | null }>("select app_private.notification_webhook_failed($1, $2) as next", [id, message])).rows[0]!.next);
      if (next) logger.warn({ notification: id, err: message, retryAt: next }, "notification webhook failed; will retry");
      else logger.error({ notification: id, err: message }, "notification webhook failed; giving up");
      return;
    }
    await asSystemInJob(helpers, (c) => c.query("select app_private.notification_webhook_delivered($1)", [id]));
    logger.info({ notification: id, kind: n.kind }, "notification webhook delivered");
  };
}
