import { readFileSync } from "node:fs";
import path from "node:path";
import { Kind, parse, print, type DefinitionNode, type FragmentDefinitionNode } from "graphql";
import { DEMO, errorsOf, subscribe } from "../support/client.ts";
import { makeCoffee, orderIn } from "../support/fixtures.ts";
import { listening, ROOT, useTestService } from "../support/service.ts";

// What docs/clients.md (and docs/subscriptions.md) tell a client to send is
// in the manifest: every GraphQL document written out there (a ```graphql
// block, or an inline `query { ... }`/`subscription { ... }`) prints to one of
// contract/trusted-documents.json's texts, and every operation called by name
// (`Login(...)`) is a manifest operation. The notifications a production app
// needs (Notifications, NotificationList) work under AD_HOC_QUERIES=none.

const manifest: Record<string, string> = JSON.parse(readFileSync(path.join(ROOT, "contract/trusted-documents.json"), "utf8"));
const texts = new Set(Object.values(manifest));
const idOf = (text: string) => Object.keys(manifest).find((id) => manifest[id] === text);
const page = (name: string) => readFileSync(path.join(ROOT, "docs", name), "utf8");

/** Each operation of a document text with the fragments it spreads, printed as `npm run documents` prints it. */
function printedOperations(text: string): Array<{ name: string; text: string }> {
  const definitions = parse(text).definitions;
  const fragments = definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  return definitions
    .filter((d) => d.kind === Kind.OPERATION_DEFINITION)
    .map((op) => ({ name: op.name?.value ?? "(anonymous)", text: print({ kind: Kind.DOCUMENT, definitions: [op as DefinitionNode, ...fragments] }) }));
}

/** The GraphQL documents a docs page writes out. */
function documentsIn(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const inline = [...markdown.matchAll(/`((?:query|subscription|mutation)\b[^`]*\{[^`]*\})`/g)].map((m) => m[1]!);
  return [...blocks, ...inline];
}

const t = useTestService({ env: { AD_HOC_QUERIES: "none" }, deleteNewOrders: true });

test("every document docs/clients.md and docs/subscriptions.md write out is a trusted document, notifications included", () => {
  const found = ["clients.md", "subscriptions.md"].flatMap((p) =>
    documentsIn(page(p))
      .flatMap(printedOperations)
      .map((o) => ({ page: p, ...o })),
  );
  expect(found.map((o) => o.name)).toEqual(expect.arrayContaining(["Notifications", "NotificationList"]));
  expect(found.filter((o) => !texts.has(o.text)).map((o) => `${o.page}: ${o.name}`)).toEqual([]);
});

test("every operation docs/clients.md calls by name is in the manifest", () => {
  const operations = new Set(Object.values(manifest).map((text) => printedOperations(text)[0]!.name));
  const called = [...page("clients.md").matchAll(/`([A-Z]\w+)\(/g)].map((m) => m[1]!);
  expect(called).toEqual(expect.arrayContaining(["Login", "RefreshToken", "Logout"]));
  expect(called.filter((name) => !operations.has(name))).toEqual([]);
});

test("under AD_HOC_QUERIES=none a customer hears a notification on Notifications and catches up with NotificationList", async () => {
  const [notifications, list] = ["Notifications", "NotificationList"].map(
    (name) => printedOperations(readFileSync(path.join(ROOT, "documents/notifications.graphql"), "utf8")).find((o) => o.name === name)!.text,
  );
  expect(idOf(notifications!)).toBeDefined();
  // Signed in with the Login document (an ad-hoc sign-in is refused here).
  const login = printedOperations(readFileSync(path.join(ROOT, "documents/accounts.graphql"), "utf8")).find((o) => o.name === "Login")!.text;
  const signedIn = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ documentId: idOf(login), variables: { email: DEMO.alice.email, password: DEMO.password } }),
  });
  const token = ((await signedIn.json()) as { data: { login: { token: string } } }).data.login.token;
  const feed = subscribe(t.ws(token), notifications!);
  await listening(t, [`notification:${DEMO.alice.id}`]);
  const coffee = await makeCoffee(t, `Docs ${Date.now()}`, "2.50");
  const order = await orderIn(t, "PAID", coffee, { customerId: DEMO.alice.id });
  await feed.waitFor(1);
  expect(errorsOf(feed)).toEqual([]);
  expect(feed.results[0]!.data.notificationAdded).toMatchObject({ kind: "payment_received", orderId: order });

  const read = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ documentId: idOf(list!) }),
  });
  const body = (await read.json()) as { data?: { customer: { notificationList: { nodes: Array<{ id: string; orderId: string }> } } }; errors?: unknown };
  expect(body.errors).toBeUndefined();
  expect(body.data!.customer.notificationList.nodes.map((n) => n.id)).toContain(feed.results[0]!.data.notificationAdded.id);
});
