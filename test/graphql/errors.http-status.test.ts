import { readFileSync } from "node:fs";
import path from "node:path";
import { request } from "../support/client.ts";
import { ROOT, useTestService } from "../support/service.ts";

// docs/errors.md's UNAUTHENTICATED row against the service: the statuses it
// names are the ones a client meets, under both of GraphQL over HTTP's
// response types. A bad token is refused before anything runs (401); an
// anonymous createOrder runs and Postgres refuses it, an execution error
// (200, the code in `errors`).

const t = useTestService({});
const ACCEPTS = ["application/json", "application/graphql-response+json"];
const CREATE_ORDER = `mutation { createOrder(input: { items: [{ coffeeId: "40000000-0000-4000-8000-000000000003", quantity: 1 }] }) { id } }`;

async function post(query: string, accept: string, token?: string) {
  const r = await request(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  return { accept, status: r.status, code: (r.json as { errors?: Array<{ extensions?: { code?: string } }> }).errors?.[0]?.extensions?.code };
}

test("UNAUTHENTICATED: 401 for a bad token, 200 for an anonymous createOrder (both response types), and the page names both", async () => {
  const seen = [];
  for (const accept of ACCEPTS) {
    seen.push(await post(`{ __typename }`, accept, "not-a-token"));
    seen.push(await post(CREATE_ORDER, accept));
  }
  expect(seen).toEqual(
    ACCEPTS.flatMap((accept) => [
      { accept, status: 401, code: "UNAUTHENTICATED" },
      { accept, status: 200, code: "UNAUTHENTICATED" },
    ]),
  );
  const row = readFileSync(path.join(ROOT, "docs/errors.md"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("| `UNAUTHENTICATED` |"))!;
  const when = row.split(" | ").slice(3).join(" | ");
  for (const status of new Set(seen.map((s) => s.status))) expect({ status, named: when.includes(`${status}`) }).toEqual({ status, named: true });
  expect(when).toContain("createOrder");
});
