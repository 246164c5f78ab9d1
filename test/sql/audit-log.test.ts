import pg from "pg";
import { type Caller, DEMO, expectRefused, gqlAs, ok } from "../support/client.ts";
import { documentsOf } from "../support/contract.ts";
import { requestRolePool, sqlAs, testDatabaseUrl } from "../support/db.ts";
import { ChildService, useTestService } from "../support/service.ts";

// auditLog: every change of a rule, whoever makes it (GraphQL, a DBA's SQL,
// DDL through the event trigger), against the real service and database.

const ADMIN = documentsOf("admin");
type Entry = { at: string; actor: string; action: string; entity: string; before: string | null; after: string | null };

const t = useTestService({
  sandbox: true,
  async cleanup() {
    await superuser.end();
  },
});
let superuser: pg.Client;

const log = async (first = 20): Promise<Entry[]> => ok(await gqlAs(t, "admin", ADMIN, { first }, "AuditLog")).auditLog;
const json = (text: string | null) => (text === null ? null : JSON.parse(text));

beforeAll(async () => {
  superuser = new pg.Client({ connectionString: testDatabaseUrl() });
  await superuser.connect();
});

test("admins only: baristas and customers FORBIDDEN, anonymous UNAUTHENTICATED", async () => {
  for (const [who, code] of [
    ["barista", "FORBIDDEN"],
    ["alice", "FORBIDDEN"],
    ["anonymous", "UNAUTHENTICATED"],
  ] as Array<[Caller, string]>) {
    expectRefused(await gqlAs(t, who, ADMIN, {}, "AuditLog"), code);
  }
  expectRefused(await gqlAs(t, "admin", ADMIN, { first: -1 }, "AuditLog"), "BAD_USER_INPUT");
});

test("a DBA's plain SQL on app_private.settings is recorded with the database user as the actor", async () => {
  const { rows } = await t.db.query("select value from app_private.settings where key = 'prep_base_seconds'");
  const old = Number(rows[0].value);
  try {
    await t.db.query("update app_private.settings set value = value + 1 where key = 'prep_base_seconds'"); // the owner's pool
    await superuser.query("update app_private.settings set value = value + 1 where key = 'prep_base_seconds'"); // a superuser's session
    const [bySuper, byOwner] = await log(2);
    expect(byOwner).toMatchObject({ actor: "cafe_owner", action: "UPDATE", entity: "app_private.settings prep_base_seconds" });
    expect(json(byOwner!.before)).toEqual({ value: old });
    expect(json(byOwner!.after)).toEqual({ value: old + 1 });
    expect(bySuper).toMatchObject({ actor: new URL(testDatabaseUrl()).username, action: "UPDATE", entity: "app_private.settings prep_base_seconds" });
    expect(json(bySuper!.after)).toEqual({ value: old + 2 });
    expect(Date.parse(bySuper!.at)).toBeGreaterThanOrEqual(Date.parse(byOwner!.at));
  } finally {
    await t.db.query("update app_private.settings set value = $1 where key = 'prep_base_seconds'", [old]);
  }
});

test("updateCoffeePrice by an admin over GraphQL names the admin's e-mail and role; the changed column only", async () => {
  const { rows } = await t.db.query("insert into app_public.coffees (name, price, roaster_id) select 'Audited Roast ' || $1, 3.00, id from app_public.roasters limit 1 returning id", [Date.now()]);
  const id = rows[0].id;
  const [created] = await log(1);
  expect(created).toMatchObject({ actor: "cafe_owner", action: "INSERT", entity: `app_public.coffees ${id}`, before: null });
  expect(json(created!.after)).toMatchObject({ id, price: 3, available: true });

  ok(await gqlAs(t, "admin", `mutation($id: ID!) { updateCoffeePrice(id: $id, newPrice: 3.5) { id price } }`, { id }));
  ok(await gqlAs(t, "admin", `mutation($id: ID!) { setCoffeeAvailable(id: $id, available: false) { id } }`, { id }));
  const [unavailable, priced] = await log(2);
  expect(priced).toMatchObject({ actor: `${DEMO.admin.email} (admin)`, action: "UPDATE", entity: `app_public.coffees ${id}` });
  expect([json(priced!.before), json(priced!.after)]).toEqual([{ price: 3 }, { price: 3.5 }]);
  expect(unavailable).toMatchObject({ actor: `${DEMO.admin.email} (admin)`, entity: `app_public.coffees ${id}` });
  expect([json(unavailable!.before), json(unavailable!.after)]).toEqual([{ available: true }, { available: false }]);

  // A change of something that is not a rule (the description) is not recorded.
  await t.db.query("update app_public.coffees set description = 'nutty' where id = $1", [id]);
  expect((await log(1))[0]).toEqual(unavailable);
});

test("order transitions, alert rules and staff accounts (added, role changed, disabled) are recorded; the password hash never is", async () => {
  await t.db.query("insert into app_public.order_status_transitions (from_status, to_status, role) values ('READY', 'CANCELLED', 'admin')");
  await t.db.query("delete from app_public.order_status_transitions where from_status = 'READY' and to_status = 'CANCELLED' and role = 'admin'");
  await t.db.query("update app_private.alert_rules set threshold = threshold + 1 where kind = 'burst'");
  await t.db.query("update app_private.alert_rules set threshold = threshold - 1 where kind = 'burst'");
  const email = `audited-${Date.now()}@example.com`;
  const { rows } = await t.db.query("insert into app_private.accounts (email, password_hash, role) values ($1, 'x', 'barista') returning id", [email]);
  const id = rows[0].id;
  try {
    await t.db.query("update app_private.accounts set role = 'admin' where id = $1", [id]);
    await t.db.query("update app_private.accounts set disabled_at = now() where id = $1", [id]);
    await t.db.query("update app_private.accounts set password_hash = 'y' where id = $1", [id]); // not a rule: not recorded
    const entries = await log(7);
    expect(entries.map((e) => [e.action, e.entity])).toEqual([
      ["UPDATE", `app_private.accounts ${id}`],
      ["UPDATE", `app_private.accounts ${id}`],
      ["INSERT", `app_private.accounts ${id}`],
      ["UPDATE", "app_private.alert_rules burst"],
      ["UPDATE", "app_private.alert_rules burst"],
      ["DELETE", "app_public.order_status_transitions READY CANCELLED admin"],
      ["INSERT", "app_public.order_status_transitions READY CANCELLED admin"],
    ]);
    expect([entries[2]!.before, json(entries[2]!.after)]).toEqual([null, { id, email, role: "barista", disabled_at: null }]);
    expect([json(entries[1]!.before), json(entries[1]!.after)]).toEqual([{ role: "barista" }, { role: "admin" }]);
    expect(json(entries[0]!.before)).toEqual({ disabled_at: null });
    for (const e of entries) expect(`${e.before} ${e.after}`).not.toMatch(/password/);
  } finally {
    await t.db.query("delete from app_private.accounts where id = $1", [id]);
  }
  const [deleted] = await log(1);
  expect(deleted).toMatchObject({ action: "DELETE", entity: `app_private.accounts ${id}`, after: null });
  expect(json(deleted!.before)).toMatchObject({ id, email, role: "admin" });
  // Customers signing up are not staff changes.
  const before = (await log(1))[0];
  const r = await gqlAs(t, "anonymous", `mutation($e: String!) { register(email: $e, password: "long enough 1", name: "Cus Tomer") { role } }`, {
    e: `audit-customer-${Date.now()}@example.com`,
  });
  ok(r);
  expect((await log(1))[0]).toEqual(before);
  await t.db.query("delete from app_private.accounts where email like 'audit-customer-%'");
});

test("newest first, paged with first and offset; without first, DEFAULT_LIST_SIZE rows (what the cost plugin priced)", async () => {
  // More changes than a default page (each one undone by the next).
  for (let i = 0; i < t.config.DEFAULT_LIST_SIZE + 2; i++) {
    await t.db.query("update app_private.settings set value = value + $1 where key = 'max_lines_per_order'", [i % 2 === 0 ? 1 : -1]);
  }
  const r = await gqlAs(t, "admin", ADMIN, {}, "AuditLog");
  expect(ok(r).auditLog).toHaveLength(t.config.DEFAULT_LIST_SIZE);
  // 1 for the field, 1 per row (its columns come with it).
  expect(r.body.extensions?.cost?.requested).toBe(1 + t.config.DEFAULT_LIST_SIZE);
  const page = await log(5);
  const second = ok(await gqlAs(t, "admin", ADMIN, { first: 3, offset: 2 }, "AuditLog")).auditLog;
  expect(second).toEqual(page.slice(2, 5));
  for (let i = 1; i < page.length; i++) expect(Date.parse(page[i - 1]!.at)).toBeGreaterThanOrEqual(Date.parse(page[i]!.at));
});

test("no request role may read, change or delete audit rows directly", async () => {
  const pool = requestRolePool(t);
  try {
    for (const role of ["cafe_anonymous", "cafe_customer", "cafe_barista", "cafe_admin", "cafe_system"] as const) {
      for (const sql of [
        "select * from app_private.audit_log",
        "delete from app_private.audit_log",
        "update app_private.audit_log set actor = 'x'",
        "insert into app_private.audit_log (actor, action, entity) values ('x', 'x', 'x')",
      ]) {
        const r = await sqlAs(pool, role, DEMO.admin.id, sql);
        expect(r.error?.code).toBe("42501");
      }
    }
  } finally {
    await pool.end();
  }
});

test("DDL (a new RLS policy, a grant) is recorded by the event trigger the service installed with its superuser URL", async () => {
  const { rows } = await t.db.query("select app_private.ddl_audit_installed() as installed");
  expect(rows[0].installed).toBe(true);
  await superuser.query("create policy audit_probe on app_public.coffees for select to cafe_admin using (false)");
  try {
    const [created] = await log(1);
    expect(created).toMatchObject({ action: "CREATE POLICY", actor: new URL(testDatabaseUrl()).username });
    expect(created!.entity).toBe("policy audit_probe on app_public.coffees");
    expect(json(created!.after).statement).toContain("create policy audit_probe");
  } finally {
    await superuser.query("drop policy audit_probe on app_public.coffees");
  }
  expect((await log(1))[0]).toMatchObject({ action: "DROP POLICY" });
  await t.db.query("grant select on app_public.coffees to cafe_anonymous"); // already granted: still a GRANT statement
  expect((await log(1))[0]).toMatchObject({ action: "GRANT", actor: "cafe_owner" });
  // Installing again changes nothing.
  await superuser.query("select app_private.install_ddl_audit()");
  expect((await superuser.query("select count(*)::int as n from pg_event_trigger where evtname = 'cafe_audit_ddl'")).rows[0].n).toBe(1);
});

test("without a superuser URL, start-up says in one log line that DDL changes are not audited", async () => {
  await superuser.query("alter event trigger cafe_audit_ddl disable");
  let api: ChildService | undefined;
  try {
    // The owner's URL: not a superuser, so nothing can install the event trigger.
    api = await ChildService.startApi({ DATABASE_URL: t.urls.owner });
    const lines = api.logs.filter((l) => l.includes("DDL changes"));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: expect.stringContaining("select app_private.install_ddl_audit()") });
  } finally {
    await api?.stop();
    await superuser.query("alter event trigger cafe_audit_ddl enable");
  }
}, 90_000);
