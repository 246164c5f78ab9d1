// A small subscription client: signs in, then prints each event.
//   npm run subscribe -- alice@example.com coffee <orderId>   (orderStatusChanged)
//   npm run subscribe -- - - new-coffee                      (newCoffee, anonymous)
//   npm run subscribe -- <staff email> <password> --queue <storeId>   (a store's orderQueueChanged)
// API_URL defaults to http://localhost:<PORT>, as for npm run pay. It sends
// trusted documents (docs/trusted-documents.md): sign-in by documentId, the
// subscription by its exact text, so it works under every AD_HOC_QUERIES
// policy. A refusal (the server's code and message) ends it with exit 1;
// "subscribed" is printed once the server has not refused the subscription.
import "../src/envDefaults.ts";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { apiUrl } from "./apiUrl.ts";
import { printedDocuments as trustedDocuments } from "./operations.ts";

const trusted = (operation: string) => trustedDocuments().find((d) => d.operation === operation)!;

/**
 * graphql-ws has no message saying a subscription is live: the server
 * checks who may follow what, then listens, and answers a refusal at
 * once. Quiet this long after subscribing (or a first event) counts as accepted.
 */
const ACCEPTED_AFTER_MS = 2000;

type Payload = { data?: unknown; errors?: ReadonlyArray<{ message?: string; extensions?: { code?: unknown } }> };

/** The server's refusal in one line per error: its code and message. */
const refusal = (errors: Payload["errors"]) => (errors ?? []).map((e) => `refused: ${String(e.extensions?.code ?? "ERROR")}: ${e.message ?? ""}`).join("\n");

async function main() {
  const [email, password, target, store] = process.argv.slice(2);
  if (!target) {
    console.error("usage: npm run subscribe -- <email|-> <password|-> <orderId|new-coffee|--queue <storeId>>");
    process.exit(2);
  }
  const base = apiUrl();
  let token: string | undefined;
  if (email && email !== "-") {
    const r = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ documentId: trusted("Login").id, variables: { email, password } }),
    }).then((res) => res.json());
    token = r.data?.login?.token;
    if (!token) {
      console.error(`login ${refusal(r.errors)}`);
      process.exit(1);
    }
  }
  const client = createClient({
    url: base.replace(/^http/, "ws") + "/graphql",
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
  const request =
    target === "new-coffee"
      ? { query: trusted("NewOnMenu").text }
      : target === "--queue"
        ? { query: trusted("StoreQueueLive").text, variables: { storeId: store } }
        : { query: trusted("StatusFeed").text, variables: { orderId: target } };
  let accepted = false;
  const accept = () => {
    if (accepted) return;
    accepted = true;
    clearTimeout(timer);
    console.error(`subscribed to ${target === "--queue" ? `the queue of store ${store}` : target}; Ctrl-C to stop`);
  };
  const timer = setTimeout(accept, ACCEPTED_AFTER_MS);
  client.subscribe(request, {
    next: (event: Payload) => {
      if (event.errors?.length && event.data == null) {
        console.error(refusal(event.errors));
        process.exit(1);
      }
      accept();
      console.log(JSON.stringify(event));
    },
    error: (err) => {
      const errors = Array.isArray(err) ? (err as Payload["errors"]) : undefined;
      console.error(errors ? refusal(errors) : `error: ${err instanceof Error ? err.message : JSON.stringify(err)}`);
      process.exit(1);
    },
    complete: () => process.exit(accepted ? 0 : 1),
  });
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
