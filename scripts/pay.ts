// Pays an order as the payment provider would: a signed callback to
// POST /orders/payment-callback (docs/payments.md), shape A
// ({"event":"payment.completed","data":{amount, customer, order_id}}).
//   npm run pay -- <orderId> <amount> [customer e-mail, default alice@example.com]
// The token and signing key are the service's own (WEBHOOK_TOKEN,
// SIGNING_SECRET from the environment or .env, else the development
// defaults); API_URL defaults to http://localhost:<PORT>.
import "../src/envDefaults.ts";
import { randomUUID } from "node:crypto";
import { applyEnvFile, loadConfig } from "../src/config.ts";
import { signatureHeader } from "../src/payments/signature.ts";
import { apiUrl } from "./apiUrl.ts";

async function main() {
  const [orderId, amount, customer = "alice@example.com"] = process.argv.slice(2);
  if (!orderId || !amount || !Number.isFinite(Number(amount))) {
    console.error("usage: npm run pay -- <orderId> <amount> [customer e-mail]");
    process.exit(2);
  }
  applyEnvFile();
  const config = loadConfig();
  const base = apiUrl();
  const body = JSON.stringify({
    event: "payment.completed",
    event_id: `evt_${randomUUID()}`,
    data: { amount: Number(amount), customer, order_id: orderId },
  });
  const res = await fetch(`${base}/orders/payment-callback`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${config.WEBHOOK_TOKEN}`,
      "x-signature": signatureHeader(body, config.SIGNING_SECRET),
    },
    body,
  });
  console.log(`POST ${base}/orders/payment-callback ${body}`);
  console.log(`${res.status} ${await res.text()}`);
  if (!res.ok) process.exit(1);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
