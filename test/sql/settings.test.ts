import { useTestService } from "../support/service.ts";

// Settings fail closed: every row of app_private.settings has a
// kind and a range (app_private.setting_definitions), checked by the
// database when it is written; a bad value, an unknown key or a deletion is
// refused with 22023 and changes nothing; a reader of a missing setting
// raises instead of reading "off".

const t = useTestService();

const valueOf = async (key: string) => (await t.db.query("select value::text, text_value from app_private.settings where key = $1", [key])).rows[0];
const update = (key: string, set: string, params: unknown[] = []) => t.db.query(`update app_private.settings set ${set} where key = $1`, [key, ...params]);

test("every setting has a definition and every definition a setting", async () => {
  const { rows } = await t.db.query(
    `select coalesce(s.key, d.key) as key, s.key is null as missing, d.key is null as undefined
       from app_private.settings s full join app_private.setting_definitions d on d.key = s.key
      where s.key is null or d.key is null`,
  );
  expect(rows).toEqual([]);
});

test.each([
  ["NULL", "login_max_failures_per_account_and_source", "value = null", [], /is a number/],
  ["NULL lock-out per source", "login_max_failures_per_source", "value = null", [], /is a number/],
  ["a text value for a number", "login_window_seconds", "value = null, text_value = '900'", [], /is a number/],
  ["zero (a limit turned off)", "login_max_failures_per_account_and_source", "value = 0", [], /between 1 and 1000/],
  ["negative", "registration_max_per_source", "value = -1", [], /between 1 and/],
  ["above its range", "password_hash_cost", "value = 31", [], /between 4 and 14/],
  ["a fraction for a whole number", "max_lines_per_order", "value = 2.5", [], /whole number/],
  ["a percentage above 100", "max_stock_share_percent", "value = 150", [], /between 1 and 100/],
  ["a number for the currency", "currency", "text_value = null, value = 978", [], /is text/],
  ["a currency that is no ISO 4217 code", "currency", "text_value = $2", ["eur"], /ISO 4217/],
  ["an unknown time zone", "cafe_time_zone", "text_value = $2", ["Mars/Olympus"], /time zone/],
])("%s is refused (22023, naming the setting) and the old value stays", async (_label, key, set, params, message) => {
  const before = await valueOf(key);
  await expect(update(key, set, params)).rejects.toMatchObject({ code: "22023", message: expect.stringMatching(message) });
  expect(await valueOf(key)).toEqual(before);
});

test("an unknown key is refused, and so is deleting a setting", async () => {
  await expect(t.db.query("insert into app_private.settings (key, value, description) values ('login_max_failure_per_source', 3, 'typo')")).rejects.toMatchObject({
    code: "22023",
    message: expect.stringMatching(/no setting login_max_failure_per_source/),
  });
  await expect(t.db.query("delete from app_private.settings where key = 'login_max_failures_per_source'")).rejects.toMatchObject({
    code: "22023",
    message: expect.stringMatching(/may not be deleted/),
  });
  expect((await valueOf("login_max_failures_per_source")).value).not.toBeNull();
});

test("a value in range is taken", async () => {
  const before = await valueOf("prep_base_seconds");
  try {
    await update("prep_base_seconds", "value = 95");
    expect((await valueOf("prep_base_seconds")).value).toBe("95");
  } finally {
    await update("prep_base_seconds", "value = $2", [before.value]);
  }
});

test("a missing setting (its check bypassed by a superuser) makes its readers raise: the sign-in limits are never silently off", async () => {
  const client = await t.db.connect();
  try {
    await client.query("begin");
    await client.query("alter table app_private.settings disable trigger _100_check");
    await client.query("delete from app_private.settings where key = 'login_max_failures_per_source'");
    await client.query("savepoint s");
    await expect(client.query("select app_private.setting('login_max_failures_per_source')")).rejects.toMatchObject({
      code: "CT900",
      message: expect.stringMatching(/login_max_failures_per_source is missing/),
    });
    await client.query("rollback to savepoint s");
    await expect(client.query("select app_private.assert_login_allowed('someone@example.test', '192.0.2.1')")).rejects.toMatchObject({ code: "CT900" });
    await client.query("rollback to savepoint s");
    await client.query("delete from app_private.settings where key = 'currency'");
    await expect(client.query("select app_private.text_setting('currency')")).rejects.toMatchObject({ code: "CT900" });
  } finally {
    await client.query("rollback");
    client.release();
  }
  expect((await valueOf("login_max_failures_per_source")).value).not.toBeNull();
});
