// S1 HTTP floor: `{ __typename }` over POST /graphql. Floor: a bare node:http
// server answering the same JSON. Peer: stock PostGraphile V5 (Amber preset,
// no plugins, the same grafserv node:http adaptor) on the same database.
import { base, gqlBody, postJson, trustedBody, type Ctx, type ScenarioResult } from "../lib/context.ts";
import { peakThenLatency } from "../lib/measureVariants.ts";
import { ask } from "../lib/proc.ts";

/** Makes S1's floor (bench/servers/floorHttp.ts) answer `text` to every POST. */
export function setFloorAnswer(ctx: Ctx, text: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("the floor did not take the answer")), 5000);
    ctx.floorHttp.onMessage((m) => {
      if (m?.type === "answer-ok") {
        clearTimeout(t);
        resolve();
      }
    });
    ctx.floorHttp.send({ type: "answer", text });
  });
}

export async function s1(ctx: Ctx): Promise<ScenarioResult> {
  const body = gqlBody("{ __typename }");
  const answer = await postJson(base(ctx.service.port), "/graphql", body);
  if (answer.status !== 200 || answer.json?.data?.__typename !== "Query") throw new Error(`service answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  // The trusted form: the Ping document (documents/ping.graphql, `{ __typename }`) by its id.
  const trusted = trustedBody("Ping");
  const trustedAnswer = await postJson(base(ctx.service.port), "/graphql", trusted);
  if (trustedAnswer.text !== answer.text) throw new Error(`the trusted Ping answered differently: ${trustedAnswer.status} ${trustedAnswer.text.slice(0, 200)}`);
  const floor = ctx.floorHttp;
  await ask(floor, { type: "answer", text: answer.text }, "answer-ok");
  const request = { path: "/graphql", body };
  const rows = await peakThenLatency(ctx, "S1", "{ __typename }", [
    {
      variant: "service",
      label: "cafe-api",
      baseUrl: base(ctx.service.port),
      pid: ctx.service.proc.pid,
      request,
      notes: [`answers ${answer.text.length} bytes: ${answer.text.slice(0, 120)}`],
    },
    {
      variant: "extra",
      label: "cafe-api, trusted document by documentId (Ping: `{ __typename }`)",
      baseUrl: base(ctx.service.port),
      pid: ctx.service.proc.pid,
      request: { path: "/graphql", body: trusted },
    },
    { variant: "floor", label: "bare node:http, same JSON", baseUrl: base(ctx.floorHttp.port), pid: ctx.floorHttp.proc.pid, request },
    { variant: "peer", label: "stock PostGraphile V5 (Amber)", baseUrl: base(ctx.stock.port), pid: ctx.stock.proc.pid, request },
  ]);
  return {
    id: "S1",
    title: "HTTP floor",
    rows,
    notes: [
      "the service's every layer before any SQL (src/server.ts and the preset: security headers, CORS, rate limiter (off here), token check, metrics, grafserv, Grafast and its middleware, the cost check)",
    ],
  };
}
