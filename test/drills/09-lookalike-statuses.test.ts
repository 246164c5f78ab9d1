import fc from "fast-check";
import { report } from "../support/figures.ts";
import { placeOrder, stockedCoffee, type StockedCoffee } from "../support/fixtures.ts";
import { LONG } from "../support/load.ts";
import { sendCallback } from "../support/paymentProvider.ts";
import { startTestService, type TestService } from "../support/service.ts";

// Drill 9: look-alike statuses and events. Signed callbacks whose shape-B
// status looks like "paid" (other cases, full-width letters, Cyrillic and
// Greek look-alikes, dotted and dotless i, mathematical letters, combining
// marks, zero-width and invisible characters, spaces) or whose shape-A event
// looks like "payment.completed", with and without a valid amount and items,
// against one unpaid order: every answer is 200 ignored or 400
// VALIDATION_FAILED, and the order is never paid.

const RUNS = LONG ? 3000 : 300;

let t: TestService;
let c: StockedCoffee;
let order: { id: string; total: string };

beforeAll(async () => {
  t = await startTestService();
  c = await stockedCoffee(t, "Look-alike", "3.00", 1);
  order = await placeOrder(t, await t.token("alice"), [{ coffeeId: c.id, quantity: 1 }]);
});

afterAll(async () => {
  if (!t) return;
  try {
    await t.db.query("delete from app_public.orders where id = $1", [order.id]);
    await t.db.query("delete from app_public.coffees where id = $1", [c.id]);
    await t.db.query("delete from app_public.ingredients where id = $1", [c.ingredientId]);
  } finally {
    await t.stop();
  }
});

/** Characters that look like each ASCII letter, or are one after some normalisation or case mapping. */
const LOOKALIKES: Record<string, string[]> = {
  p: ["P", "ｐ", "Ｐ", "р", "Р", "ρ", "𝐩", "𝗽", "ᵖ", "ⓟ"],
  a: ["A", "ａ", "Ａ", "а", "А", "α", "𝐚", "ª", "ɑ", "ⓐ"],
  i: ["I", "ｉ", "Ｉ", "і", "І", "ı", "İ", "ι", "𝐢", "ⁱ", "Ⅰ", "ⓘ"],
  d: ["D", "ｄ", "Ｄ", "ԁ", "ⅾ", "𝐝", "ᵈ", "ⓓ"],
  e: ["E", "ｅ", "е", "Е", "ε", "𝐞"],
  m: ["M", "ｍ", "м", "ⅿ"],
  n: ["N", "ｎ", "ո"],
  t: ["T", "ｔ", "т"],
  c: ["C", "ｃ", "с", "С", "ⅽ"],
  o: ["O", "ｏ", "о", "О", "ο", "0"],
  l: ["L", "ｌ", "ⅼ", "1", "I"],
  y: ["Y", "ｙ", "у"],
  ".": ["．", "。", "․"],
};
const INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u034f", "\u180e"];
const COMBINING = ["\u0307", "\u0301", "\u0300", "\u0308", "\u0323", "\u0338"];
const SPACES = [" ", "\t", "\u00a0", "\u3000", "\n"];

/** A string that looks like `word` but is not exactly it. */
function lookalike(word: string): fc.Arbitrary<string> {
  const perChar = word
    .split("")
    .map((ch) =>
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(ch) },
        { weight: 2, arbitrary: fc.constantFrom(...(LOOKALIKES[ch] ?? [ch.toUpperCase()])) },
        { weight: 1, arbitrary: fc.tuple(fc.constant(ch), fc.constantFrom(...INVISIBLE, ...COMBINING)).map(([a, b]) => a + b) },
      ),
    );
  return fc
    .tuple(
      fc.tuple(...perChar),
      fc.option(fc.constantFrom(...SPACES, ...INVISIBLE), { nil: "" }),
      fc.option(fc.constantFrom(...SPACES, ...INVISIBLE), { nil: "" }),
      fc.constantFrom("none", "nfd", "nfkd", "upper", "lower"),
    )
    .map(([chars, before, after, form]) => {
      const s = before + chars.join("") + after;
      return form === "none" ? s : form === "upper" ? s.toUpperCase() : form === "lower" ? s.toLocaleLowerCase("tr") : s.normalize(form.toUpperCase() as "NFD" | "NFKD");
    })
    .filter((s) => s !== word);
}

test(`look-alike statuses and events never pay an order (${RUNS} cases)`, async () => {
  const seen: Record<string, number> = {};
  const unexpected: string[] = [];
  let n = 0;
  const items = [{ product: c.id, quantity: 1 }];
  const body = fc.oneof(
    fc.tuple(lookalike("paid"), fc.boolean()).map(([status, full]) => ({ order_id: order.id, status, ...(full ? { amount: order.total, items } : {}) })),
    fc.tuple(lookalike("payment.completed"), fc.boolean()).map(([event, full]) => ({
      event,
      data: { customer: "alice@example.com", order_id: order.id, ...(full ? { amount: order.total } : {}) },
    })),
  );
  await fc.assert(
    fc.asyncProperty(body, async (b) => {
      n += 1;
      const r = await sendCallback(t, { ...b, event_id: `lookalike-${n}` });
      const label = `${r.status}:${r.body?.status ?? r.body?.error?.code}`;
      seen[label] = (seen[label] ?? 0) + 1;
      if (!["200:ignored", "400:VALIDATION_FAILED"].includes(label)) unexpected.push(`${label} <- ${JSON.stringify(b)}`);
      const { rows } = await t.db.query("select status::text, paid_at from app_public.orders where id = $1", [order.id]);
      if (rows[0].status !== "PENDING" || rows[0].paid_at) throw new Error(`paid by ${JSON.stringify(b)}`);
    }),
    { numRuns: RUNS },
  );
  report("9 look-alike statuses", { cases: n, answers: seen });
  expect(unexpected).toEqual([]);
  // The real thing still pays (the drill would pass vacuously otherwise).
  const real = await sendCallback(t, { order_id: order.id, status: "paid", amount: order.total, items, event_id: "lookalike-real" });
  expect({ status: real.status, body: real.body?.status }).toEqual({ status: 200, body: "processed" });
});
