import { DEMO, gqlAs, ok } from "../support/client.ts";
import { makeCoffee, moveAsDba, orderIn } from "../support/fixtures.ts";
import { useTestService } from "../support/service.ts";

// featuredCoffee is ranked from app_private.coffee_sales, the counted sales
// per store, hour and coffee, kept by triggers as orders are paid, cancelled,
// edited or deleted, whoever writes them (the service's own functions or a
// DBA's SQL). The buckets must always equal what a recount from the orders
// gives, and the ranking must read the buckets, not the week's orders.

const t = useTestService({ sandbox: true });

/** The kept buckets of the last 8 days, and what a recount from the orders would give. */
async function keptAndRecounted(): Promise<{ kept: string[]; recounted: string[] }> {
  const { rows: kept } = await t.db.query(`select store_id || ' ' || hour || ' ' || coffee_id || ' ' || sold as r from app_private.coffee_sales where sold <> 0 order by 1`);
  const { rows: recounted } = await t.db.query(
    `select o.store_id || ' ' || app_private.sales_hour(o.time_ordered) || ' ' || i.coffee_id || ' ' || sum(i.quantity) as r
       from app_public.orders o join app_public.order_items i on i.order_id = o.id
      where app_private.sale_counts(o.status) and o.time_ordered >= now() - interval '8 days'
      group by o.store_id, app_private.sales_hour(o.time_ordered), i.coffee_id order by 1`,
  );
  return { kept: kept.map((r) => r.r), recounted: recounted.map((r) => r.r) };
}

async function soldOf(coffeeId: string): Promise<number> {
  const { rows } = await t.db.query("select coalesce(sum(sold), 0)::int as n from app_private.coffee_sales where coffee_id = $1", [coffeeId]);
  return rows[0].n;
}

test("the kept sales follow every write to orders and their lines, and equal a recount from the orders", async () => {
  const a = await makeCoffee(t, "ZZ Sales Count A", "3.00", { category: "FEATURED" });
  const b = await makeCoffee(t, "ZZ Sales Count B", "3.00", { category: "FEATURED" });

  const pending = await orderIn(t, "PENDING", a, { quantity: 2, customerId: DEMO.bob.id });
  expect(await soldOf(a)).toBe(0); // not paid: not a sale
  await moveAsDba(t, pending, "PAID");
  expect(await soldOf(a)).toBe(2);
  await t.db.query("update app_public.orders set status = 'PREPARING' where id = $1", [pending]);
  expect(await soldOf(a)).toBe(2); // still counted once

  // A line added to, changed on and removed from a counted order (a DBA's SQL).
  await t.db.query("insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price) values ($1, 9, $2, 5, 3.00)", [pending, b]);
  expect(await soldOf(b)).toBe(5);
  await t.db.query("update app_public.order_items set quantity = 7 where order_id = $1 and coffee_id = $2", [pending, b]);
  expect(await soldOf(b)).toBe(7);
  await t.db.query("delete from app_public.order_items where order_id = $1 and coffee_id = $2", [pending, b]);
  expect(await soldOf(b)).toBe(0);

  // Moved back in time out of the window, and forward again.
  await t.db.query("update app_public.orders set time_ordered = now() - interval '9 days' where id = $1", [pending]);
  expect(await soldOf(a)).toBe(0);
  await t.db.query("update app_public.orders set time_ordered = now() where id = $1", [pending]);
  expect(await soldOf(a)).toBe(2);

  // Cancelled after payment: no longer a sale.
  const cancelled = await orderIn(t, "PAID", b, { quantity: 3, customerId: DEMO.bob.id });
  expect(await soldOf(b)).toBe(3);
  await t.db.query("update app_public.orders set status = 'CANCELLED' where id = $1", [cancelled]);
  expect(await soldOf(b)).toBe(0);

  // A counted order deleted takes its lines back (they go by cascade).
  const deleted = await orderIn(t, "COMPLETED", b, { quantity: 4, customerId: DEMO.bob.id });
  expect(await soldOf(b)).toBe(4);
  await t.db.query("delete from app_public.orders where id = $1", [deleted]);
  expect(await soldOf(b)).toBe(0);

  const { kept, recounted } = await keptAndRecounted();
  expect(kept).toEqual(recounted);
});

test("featuredCoffee is ranked from the kept counts: a sale moves it, and the ranking reads no order", async () => {
  const challenger = await makeCoffee(t, "ZZ Sales Challenger", "3.00", { category: "FEATURED" });
  const order = await orderIn(t, "PENDING", challenger, { quantity: 1, customerId: DEMO.bob.id });
  // More than any coffee has sold in the demo café's week, in one line.
  const { rows: most } = await t.db.query("select coalesce(max(sold), 0)::int as n from (select sum(sold) as sold from app_private.coffee_sales group by coffee_id) s");
  await t.db.query("update app_public.order_items set quantity = $2 where order_id = $1", [order, most[0].n + 1]);
  await moveAsDba(t, order, "PAID");
  const { featuredCoffee } = ok(await gqlAs(t, "anonymous", "{ featuredCoffee { id } }"));
  expect(featuredCoffee.id).toBe(challenger);

  // The ranking reads the counts, not the orders: a sale the counts miss
  // (as after a load with triggers off) ranks nothing until they are rebuilt.
  const late = await makeCoffee(t, "ZZ Sales Late", "3.00", { category: "FEATURED" });
  const lateOrder = await orderIn(t, "PENDING", late, { quantity: 1, customerId: DEMO.bob.id });
  await t.db.query("update app_public.order_items set quantity = $2 where order_id = $1", [lateOrder, most[0].n + 10]);
  await moveAsDba(t, lateOrder, "PAID");
  await t.db.query("delete from app_private.coffee_sales where coffee_id = $1", [late]);
  const rank = async () => (await t.db.query("select app_private.rank_featured_coffee(null) as id")).rows[0].id;
  expect(await rank()).toBe(challenger);
  await t.db.query("select app_private.recount_sales()");
  expect(await rank()).toBe(late);
});
