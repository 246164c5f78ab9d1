// S1's floor: a bare node:http server that reads the POST body, parses it as
// JSON and answers with the JSON the service answers to `{ __typename }`
// (given in BENCH_FLOOR_ANSWER). What any HTTP JSON endpoint costs on this
// machine.
import http from "node:http";
import { stopOn } from "./child.ts";

// The service's answer arrives over IPC before S1 runs ({type: "answer", text}).
let answer = Buffer.from(process.env.BENCH_FLOOR_ANSWER ?? '{"data":{"__typename":"Query"}}');
process.on("message", (m: any) => {
  if (m?.type === "answer") {
    answer = Buffer.from(String(m.text));
    process.send?.({ type: "answer-ok" });
  }
});
const port = Number(process.env.PORT ?? 0);

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1", () => process.send?.({ ready: true, port: (server.address() as { port: number }).port }));
stopOn(() => {
  server.close();
  server.closeAllConnections();
});
