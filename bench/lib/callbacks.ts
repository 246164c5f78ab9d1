// Signed payment callbacks (README "Payment callbacks"): shape A with the
// order's id, the customer's e-mail and the exact total, a distinct event_id
// per order; `Authorization: Bearer <WEBHOOK_TOKEN>` and
// `X-Signature: sha256=<hex HMAC-SHA256 of the raw body with SIGNING_SECRET>`.
import { createHmac } from "node:crypto";
import type { Secrets } from "./context.ts";
import type { RequestSpec } from "./load.ts";

export interface PendingOrder {
  id: string;
  total: string;
  email: string;
}

export function signedCallback(secrets: Secrets, o: PendingOrder): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    event: "payment.completed",
    event_id: `bench-${o.id}`,
    data: { amount: o.total, customer: o.email, order_id: o.id },
  });
  const signature = createHmac("sha256", secrets.SIGNING_SECRET).update(body).digest("hex");
  return {
    body,
    headers: { authorization: `Bearer ${secrets.WEBHOOK_TOKEN}`, "x-signature": `sha256=${signature}`, "content-type": "application/json" },
  };
}

/**
 * A request spec that pays the next order of `orders` with each request and
 * records which orders were sent and which the server accepted ({status:
 * "processed"}), with when (performance.now()) the answer arrived.
 */
export function callbackStream(secrets: Secrets, orders: PendingOrder[]) {
  let next = 0;
  const sent: string[] = [];
  const accepted = new Map<string, number>();
  const refused: string[] = [];
  const spec: RequestSpec = {
    path: "/orders/payment-callback",
    setup: () => {
      // Past the end the last order repeats: its duplicates answer "duplicate" and count as bad.
      const o = orders[Math.min(next++, orders.length - 1)]!;
      sent.push(o.id);
      return signedCallback(secrets, o);
    },
    check: (status, body) => {
      let parsed: any = null;
      try {
        parsed = JSON.parse(body);
      } catch {
        // not JSON
      }
      if (status === 200 && parsed?.status === "processed" && parsed.orderId) {
        accepted.set(parsed.orderId, performance.now());
        return true;
      }
      refused.push(`${status} ${body.slice(0, 120)}`);
      return false;
    },
  };
  return { spec, sent, accepted, refused, used: () => Math.min(next, orders.length) };
}
