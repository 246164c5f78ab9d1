import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT, useTestService } from "../support/service.ts";

// The cost figures the docs show are the service's: every example request
// in README.md and docs/*.md (a `curl ... -d '{"query": ...}'` block
// followed by the answer it prints, with `extensions.cost`) is sent to the
// real service as the docs' caller (Alice where it sends `$TOKEN`), and the
// cost it reports must be the one the page prints. Pricing changes
// (plugins/QueryCostPlugin/) show here as the figures to update.

interface Example {
  page: string;
  body: { query: string; variables?: Record<string, unknown> };
  signedIn: boolean;
  cost: number;
}

function examplesIn(page: string): Example[] {
  const text = readFileSync(path.join(ROOT, page), "utf8");
  const found: Example[] = [];
  for (const m of text.matchAll(/```sh\n((?:(?!```)[\s\S])*)```\n```json\n((?:(?!```)[\s\S])*)```/g)) {
    const [, command, answer] = m;
    const data = /-d '(\{"query"[^']*\})'/.exec(command!);
    const cost = /"cost":\{"requested":(\d+)/.exec(answer!);
    if (!data || !cost) continue;
    found.push({ page, body: JSON.parse(data[1]!), signedIn: /authorization: Bearer \$TOKEN/i.test(command!), cost: Number(cost[1]) });
  }
  return found;
}

const pages = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const examples = pages.flatMap(examplesIn);

const t = useTestService({ deleteNewOrders: true });

test("the docs show example answers with their cost (README's menu and order, docs/api.md's stores)", () => {
  expect(examples.map((e) => e.page)).toEqual(expect.arrayContaining(["README.md", "README.md", "docs/api.md"]));
});

test("each example's cost is what the service reports for it", async () => {
  const token = await t.token("alice");
  const reported = [];
  for (const e of examples) {
    const r = await t.gql(e.body.query, { variables: e.body.variables, token: e.signedIn ? token : undefined });
    expect({ query: e.body.query, errors: r.body.errors }).toEqual({ query: e.body.query, errors: undefined });
    reported.push({ page: e.page, query: e.body.query, cost: r.body.extensions?.cost?.requested });
  }
  expect(reported).toEqual(examples.map((e) => ({ page: e.page, query: e.body.query, cost: e.cost })));
});
