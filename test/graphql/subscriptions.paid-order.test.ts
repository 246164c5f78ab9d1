import { DEMO, errorsOf, subscribe } from "../support/client.ts";
import { operationsOf } from "../support/contract.ts";
import { placeOrder, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { paymentBody, sendCallback } from "../support/paymentProvider.ts";
import { listening, useTestService } from "../support/service.ts";
import { sleep, waitUntil } from "../support/wait.ts";

// TrackOrder (orderUpdated) as the mobile app follows a paid order through
// the worker: the payment callback marks it PAID, the worker's
// start_preparation job moves it to PREPARING a moment later, the barista
// takes it on from there. Each NOTIFY of `order:<id>` is answered by
// reading the order again, so the PAID notice read after the worker's step
// showed PREPARING, and the PREPARING notice showed it again: one change,
// two identical events. Now a subscriber never gets the same order twice
// in a row.

const MOBILE = operationsOf("mobile");
const BARISTA = operationsOf("barista");

let coffee: StockedCoffee;
let tokens: Awaited<ReturnType<typeof t.tokens>>;

const t = useTestService({
  worker: true,
  deleteNewOrders: true,
  async cleanup() {
    await t.db.query("delete from app_public.coffees where id = $1", [coffee.id]);
    await t.db.query("delete from app_public.ingredients where id = $1", [coffee.ingredientId]);
  },
});

beforeAll(async () => {
  tokens = await t.tokens();
  coffee = await stockedCoffee(t, "Tracked", "3.30", 1);
});

const statusOf = async (id: string) => (await t.db.query("select status from app_public.orders where id = $1", [id])).rows[0].status as string;

test("a paid order followed through PAID, PREPARING (the worker), BREWING, READY, COMPLETED: one event a change, never the same contents twice in a row", async () => {
  const rounds = 3;
  for (let round = 0; round < rounds; round++) {
    const order = await placeOrder(t, tokens.alice, [{ coffeeId: coffee.id, quantity: 1 }]);
    const client = t.ws(tokens.alice);
    const track = subscribe(client, MOBILE, { id: order.id }, "TrackOrder");
    await listening(t, [`order:${order.id}`]);

    const paid = await sendCallback(t, paymentBody({ id: order.id, email: DEMO.alice.email, total: order.total, lines: [] }, "A", "event"));
    expect(paid.body).toMatchObject({ status: "processed" });
    await waitUntil("the worker to start preparing", async () => (await statusOf(order.id)) === "PREPARING");
    // Each change is seen before the next is made: orderUpdated reads the order when its notice arrives, so a step made right after another may be read over.
    const delivered = (status: string) => waitUntil(`${status} delivered`, () => track.results.some((r) => r.data?.orderUpdated?.status === status));
    await delivered("PREPARING");
    for (const status of ["BREWING", "READY", "COMPLETED"]) {
      const r = await t.gql(BARISTA, { operationName: "Advance", variables: { id: order.id, status }, token: tokens.barista });
      expect(r.body.errors).toBeUndefined();
      await delivered(status);
    }
    // Anything still on its way arrives now.
    await sleep(300);
    expect(errorsOf(track)).toEqual([]);
    const payloads = track.results.map((r) => JSON.stringify(r.data?.orderUpdated));
    const repeated = payloads.filter((p, i) => i > 0 && p === payloads[i - 1]);
    expect({ round, repeated }).toEqual({ round, repeated: [] });
    const statuses = track.results.map((r) => r.data?.orderUpdated?.status as string);
    // Every step is seen at most once (PAID may be passed over when the worker is quicker than the re-read), in order.
    expect(statuses.filter((s) => s !== "PAID")).toEqual(["PREPARING", "BREWING", "READY", "COMPLETED"]);
    track.dispose();
  }
});
