import { useTestService } from "../support/service.ts";

// What every /graphql answer says about itself (security headers, CORS), for
// browsers and for clients without an Origin alike. The headers are worked
// out once at start-up (src/server.ts), so these tests pin what they are.

const ALLOWED = "https://dashboard.example";
const t = useTestService({ env: { CORS_ORIGINS: ALLOWED } });

const typename = JSON.stringify({ query: "{ __typename }" });

async function post(headers: Record<string, string> = {}) {
  return fetch(`${t.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typename });
}

test("a /graphql answer carries the strict headers of a JSON API", async () => {
  const res = await post();
  expect(res.status).toBe(200);
  expect(res.headers.get("content-security-policy")).toBe("default-src 'none';frame-ancestors 'none'");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("strict-transport-security")).toMatch(/^max-age=\d+/);
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  expect(res.headers.get("vary")).toMatch(/Origin/i);
  // Headers that only concern HTML pages or old browsers are not sent.
  expect(res.headers.get("x-dns-prefetch-control")).toBeNull();
  expect(res.headers.get("x-powered-by")).toBeNull();
});

test("refusals carry the same headers (401, 413)", async () => {
  const unauthenticated = await post({ authorization: "Bearer not-a-token" });
  expect(unauthenticated.status).toBe(401);
  expect(unauthenticated.headers.get("content-security-policy")).toBe("default-src 'none';frame-ancestors 'none'");
  const tooLarge = await fetch(`${t.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: `{ __typename } # ${"x".repeat(200_000)}` }),
  });
  expect(tooLarge.status).toBe(413);
  expect(tooLarge.headers.get("x-content-type-options")).toBe("nosniff");
});

test("an allowed origin gets CORS headers, on the request and on its preflight", async () => {
  const res = await post({ origin: ALLOWED });
  expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
  expect(res.headers.get("vary")).toMatch(/Origin/i);
  const preflight = await fetch(`${t.url}/graphql`, {
    method: "OPTIONS",
    headers: { origin: ALLOWED, "access-control-request-method": "POST", "access-control-request-headers": "content-type, authorization" },
  });
  expect(preflight.status).toBeLessThan(300);
  expect(preflight.headers.get("access-control-allow-origin")).toBe(ALLOWED);
  expect(preflight.headers.get("access-control-allow-methods")).toMatch(/POST/);
  expect(preflight.headers.get("access-control-allow-headers")).toMatch(/authorization/i);
});

test("another origin gets no CORS headers; a request without Origin gets none either", async () => {
  const other = await post({ origin: "https://evil.example" });
  expect(other.headers.get("access-control-allow-origin")).toBeNull();
  const none = await post();
  expect(none.headers.get("access-control-allow-origin")).toBeNull();
  const preflight = await fetch(`${t.url}/graphql`, {
    method: "OPTIONS",
    headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
  });
  expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
});

test("the other routes keep helmet's page defaults", async () => {
  const res = await fetch(`${t.url}/healthz`);
  expect(res.headers.get("content-security-policy")).toMatch(/default-src 'self'/);
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
});
