// A small subscription client: signs in, then prints each event.
//   npm run subscribe -- alice@example.com coffee <orderId>   (orderStatusChanged)
//   npm run subscribe -- - - new-coffee                      (newCoffee, anonymous)
//   npm run subscribe -- <staff email> <password> --queue <storeId>   (a store's orderQueueChanged)
// API_URL defaults to http://localhost:5678. It sends trusted documents
// (docs/trusted-documents.md): sign-in by documentId, the subscription by
// its exact text, so it works under every AD_HOC_QUERIES policy.
import "../src/envDefaults.ts";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { printedDocuments as trustedDocuments } from "./operations.ts";

const trusted = (operation: string) => trustedDocuments().find((d) => d.operation === operation)!;

async function main() {
  const [email, password, target, store] = process.argv.slice(2);
  const base = process.env.API_URL ?? "http://localhost:5678";
  if (!target) {
    console.error("usage: npm run subscribe -- <email|-> <password|-> <orderId|new-coffee|--queue <storeId>>");
    process.exit(2);
  }
  let token: string | undefined;
  if (email && email !== "-") {
    const r = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ documentId: trusted("Login").id, variables: { email, password } }),
    }).then((res) => res.json());
    token = r.data?.login?.token;
    if (!token) throw new Error(`login failed: ${JSON.stringify(r.errors)}`);
  }
  const client = createClient({
    url: base.replace(/^http/, "ws") + "/graphql",
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
  });
  const request =
    target === "new-coffee"
      ? { query: trusted("NewOnMenu").text }
      : target === "--queue"
        ? { query: trusted("StoreQueueLive").text, variables: { storeId: store } }
        : { query: trusted("StatusFeed").text, variables: { orderId: target } };
  client.subscribe(request, {
    next: (event) => console.log(JSON.stringify(event)),
    error: (err) => {
      console.error("error:", JSON.stringify(err));
      process.exit(1);
    },
    complete: () => process.exit(0),
  });
  console.error(`subscribed to ${target === "--queue" ? `the queue of store ${store}` : target}; Ctrl-C to stop`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
