import { startAnotherService, useTestService, type TestService } from "../support/service.ts";

// The URLs a newcomer tries first (src/http/homeRoute.ts): GET / names the
// service's URLs, a browser opening /graphql is sent to Ruru, and a body
// that is not JSON is told so with its own code.

const t = useTestService();
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

test("GET / names /graphql and /graphiql: JSON for a client, a short HTML page for a browser", async () => {
  const json = await fetch(`${t.url}/`);
  expect(json.status).toBe(200);
  expect(json.headers.get("content-type")).toMatch(/^application\/json/);
  const body = await json.json();
  expect(body).toMatchObject({ graphql: "/graphql", graphiql: "/graphiql" });
  expect(Object.keys(body.links)).toEqual(expect.arrayContaining(["/graphql", "/graphiql", "/orders/payment-callback", "/healthz"]));

  const html = await fetch(`${t.url}/`, { headers: { accept: BROWSER_ACCEPT } });
  expect(html.status).toBe(200);
  expect(html.headers.get("content-type")).toMatch(/^text\/html/);
  const page = await html.text();
  expect(page).toContain('href="/graphql"');
  expect(page).toContain('href="/graphiql"');
});

test("a browser opening /graphql is redirected (302) to /graphiql; a GraphQL GET and a JSON client are not", async () => {
  const visit = await fetch(`${t.url}/graphql`, { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" });
  expect(visit.status).toBe(302);
  expect(visit.headers.get("location")).toBe("/graphiql");

  const query = await fetch(`${t.url}/graphql?query=${encodeURIComponent("{ __typename }")}`, { headers: { accept: "application/json" }, redirect: "manual" });
  expect(query.status).toBe(200);
  expect(await query.json()).toMatchObject({ data: { __typename: "Query" } });

  const client = await fetch(`${t.url}/graphql`, { headers: { accept: "application/json" }, redirect: "manual" });
  expect(client.status).not.toBe(302);
});

test.each([
  ["a truncated object", '{"query": "{ __typename }"'],
  ["not JSON at all", "query { __typename }"],
  ["an empty body", ""],
])("a /graphql body that is not valid JSON (%s) is 400 INVALID_JSON, saying so", async (_name, body) => {
  const res = await fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body });
  expect(res.status).toBe(400);
  const answer = await res.json();
  expect(answer.errors).toHaveLength(1);
  expect(answer.errors[0].extensions.code).toBe("INVALID_JSON");
  expect(answer.errors[0].message).toBe("The request body is not valid JSON.");
  expect(answer.data).toBeUndefined();
});

test("GET /graphql with variables that are not JSON is 400 INVALID_JSON too", async () => {
  const res = await fetch(`${t.url}/graphql?query=${encodeURIComponent("{ __typename }")}&variables=%7Bnope`, { headers: { accept: "application/json" } });
  expect(res.status).toBe(400);
  const answer = await res.json();
  expect(answer.errors[0].extensions.code).toBe("INVALID_JSON");
  expect(answer.errors[0].message).toMatch(/variables.*not valid JSON/);
});

describe("with GRAPHIQL=false", () => {
  let off: TestService;
  beforeAll(async () => {
    off = await startAnotherService({ GRAPHIQL: "false" });
  });
  afterAll(() => off?.stop());

  test("GET / does not name /graphiql and a browser opening /graphql is not redirected", async () => {
    const body = await (await fetch(`${off.url}/`)).json();
    expect(body.graphiql).toBeNull();
    expect(Object.keys(body.links)).not.toContain("/graphiql");
    const visit = await fetch(`${off.url}/graphql`, { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" });
    expect(visit.status).not.toBe(302);
  });
});
