--! Previous: sha1:b764174f485e685e2473aadbcce34aeb8e39a8aa
--! Hash: sha1:496757db0c175fc0bcf338c33658a26baec2e86b
--! Message: exact function grants; page sizes of the lists

-- 1. No function of ours is executable by PUBLIC. Every function created
-- before migration 14 carried PUBLIC EXECUTE (PostgreSQL's default), so any
-- role that could reach a schema could call anything in it: cafe_system,
-- which has USAGE on app_private, could mint an admin's refresh token with
-- app_private.issue_refresh_token. Revoking from PUBLIC on every function of
-- the three schemas also covers functions added by later migrations (they
-- carry their own explicit grants).
revoke execute on all functions in schema app_public, app_hidden, app_private from public;

-- 2. Each role gets exactly what it calls. Who calls what:
-- - the request roles (cafe_anonymous, cafe_customer, cafe_barista,
--   cafe_admin) call app_public functions through generated fields and the
--   mutations (plugins/mutations.ts), and app_hidden functions through
--   plugins/accounts.ts and plugins/subscriptions.ts; RLS policies and
--   SECURITY INVOKER functions call the helpers as the same roles;
-- - cafe_system (the callback route, the worker's tasks, /metrics, the
--   subscription re-reads) calls its app_private entry points;
-- - triggers and what SECURITY DEFINER functions call inside need no grant
--   to the caller (a trigger's function is checked when the trigger is
--   created; a definer's callees run as the owner). Everything not listed
--   is callable by its owner only (e.g. issue_refresh_token, mark_paid,
--   raise_alert, setting).
-- A function not found (a later migration changed its signature) is
-- skipped: that migration grants its own.
do $$
declare
  everyone constant text := 'cafe_anonymous, cafe_customer, cafe_barista, cafe_admin';
  signed_in constant text := 'cafe_customer, cafe_barista, cafe_admin';
  staff constant text := 'cafe_barista, cafe_admin';
  admin constant text := 'cafe_admin';
  sys constant text := 'cafe_system';
  r record;
begin
  for r in select * from (values
    -- RLS and guard helpers, also for cafe_system's reads
    ('app_public.current_actor()', everyone || ', ' || sys),
    ('app_public.current_user_id()', everyone || ', ' || sys),
    ('app_public.is_staff()', everyone || ', ' || sys),
    ('app_public.is_admin()', everyone || ', ' || sys),
    ('app_public.order_status_message(app_public.order_status)', everyone || ', ' || sys),
    ('app_hidden.require_signed_in()', everyone || ', ' || sys),
    ('app_hidden.require_staff()', everyone || ', ' || sys),
    ('app_hidden.require_admin()', everyone || ', ' || sys),
    -- reads anyone may send: computed fields answer null or nothing when the
    -- caller may not see them (anonymous reads nothing rather than an error)
    ('app_public.coffees_ingredients(app_public.coffees)', everyone),
    ('app_public.coffees_seasonal_ingredients(app_public.coffees)', everyone),
    ('app_public.coffees_reviews(app_public.coffees, integer)', everyone),
    ('app_public.coffees_cost(app_public.coffees)', everyone),
    ('app_public.coffees_margin(app_public.coffees)', everyone),
    ('app_public.coffees_supplier(app_public.coffees)', everyone),
    ('app_public.coffees_inventory(app_public.coffees)', everyone),
    ('app_public.coffees_sales_data(app_public.coffees)', everyone),
    ('app_public.orders_order(app_public.orders)', everyone),
    ('app_public.customers_recent_orders(app_public.customers, integer)', everyone),
    ('app_public.coffee_list(app_public.coffee_category)', everyone),
    ('app_public.coffee_by_id(uuid)', everyone),
    ('app_public.search_coffees(text, text)', everyone),
    ('app_public.current_customer()', everyone),
    ('app_public.featured_coffee()', everyone),
    ('app_public.seasonal_drinks()', everyone),
    ('app_public.menu_items()', everyone),
    ('app_public.order_by_id(uuid)', everyone),
    -- signing in; following an order (checked inside)
    ('app_hidden.authenticate(text, text, text)', everyone),
    ('app_hidden.register(text, text, text)', everyone),
    ('app_hidden.refresh_session(text)', everyone),
    ('app_hidden.assert_can_follow_order(uuid)', everyone),
    -- need a signed-in caller: anonymous keeps EXECUTE so that the function
    -- itself answers UNAUTHENTICATED (sign in), which a missing grant cannot
    ('app_hidden.logout(text)', everyone),
    ('app_hidden.change_password(text, text)', everyone),
    ('app_public.create_order(jsonb, text, uuid, integer, text, uuid)', everyone),
    ('app_public.cancel_order(uuid)', everyone),
    ('app_public.update_customer_profile(jsonb)', everyone),
    -- staff
    ('app_public.user_by_id(uuid)', staff),
    ('app_public.customer_by_email(text)', staff),
    ('app_public.search_customers(text)', staff),
    ('app_public.low_stock_items()', staff),
    ('app_public.update_order_status(uuid, app_public.order_status)', staff),
    ('app_public.mark_order_paid(uuid, app_public.payment_method)', staff),
    -- admin
    ('app_public.create_coffee(text, numeric, app_public.roast_level, app_public.coffee_category, uuid, text, text, boolean, boolean)', admin),
    ('app_public.update_coffee_price(uuid, numeric)', admin),
    ('app_public.settle_refund(uuid)', admin),
    ('app_public.open_refunds()', admin),
    ('app_public.set_coffee_available(uuid, boolean)', admin),
    ('app_public.restock_ingredient(uuid, numeric, text)', admin),
    ('app_public.set_stock_alert_level(uuid, numeric)', admin),
    ('app_public.payment_alert_list(integer)', admin),
    -- cafe_system: the callback route, the worker's tasks, /metrics
    ('app_private.is_source_blocked(text)', sys),
    ('app_private.log_delivery(text, integer, text, text, text, text, text, text, uuid)', sys),
    ('app_private.process_payment_callback(text, text, text, text, text, text, text, numeric, jsonb)', sys),
    ('app_private.start_preparation(uuid)', sys),
    ('app_private.notify_customer(uuid, text)', sys),
    ('app_private.take_inventory(uuid)', sys),
    ('app_private.job_counts()', sys),
    -- the owner's alone (listed so that a grant given before is taken back)
    ('app_private.issue_refresh_token(uuid, uuid)', ''),
    ('app_private.mark_paid(uuid, text)', ''),
    ('app_private.raise_alert(text, text, text, uuid)', ''),
    ('app_private.assert_login_allowed(text, text)', ''),
    ('app_private.check_password_strength(text, text)', ''),
    ('app_private.worker_heartbeat(text, text[])', ''),
    ('app_private.recount_reserved_stock()', ''),
    ('app_private.release_stock(uuid)', ''),
    ('app_private.return_inventory(uuid, text)', '')
  ) as v(fn, roles) loop
    if to_regprocedure(r.fn) is null then
      raise notice 'grants: % not found, skipped', r.fn;
      continue;
    end if;
    execute format('revoke all on function %s from cafe_anonymous, cafe_customer, cafe_barista, cafe_admin, cafe_system', r.fn);
    if r.roles <> '' then
      execute format('grant execute on function %s to %s', r.fn, r.roles);
    end if;
  end loop;
end
$$;

-- 3. Page sizes (plugins/pageSize.ts): lists without `first` return at most
-- DEFAULT_LIST_SIZE rows (MAX_LIST_SIZE with `first`), except where a smart
-- comment says `@pageSize <default> [<max>]`: the menus show every coffee
-- (up to 50), and the functions with a `limit` keep their own default and cap.
comment on function app_public.coffee_list(app_public.coffee_category) is E'@fieldName coffees\n@complexity 10\n@behavior -connection +list\n@notNull\n@pageSize 50\nEvery coffee (on sale or not), by name; `category` narrows it.';
comment on function app_public.menu_items() is E'@behavior -connection +list\n@notNull\n@pageSize 50\nWhat the kiosk shows: every coffee on sale now, by category then name.';
comment on function app_public.low_stock_items() is E'@behavior -connection +list\n@notNull\n@pageSize 100\nStaff only (barista, admin); others get a FORBIDDEN error. Stock at or below its alert level, emptiest first.';
comment on function app_public.open_refunds() is E'@behavior -connection +list\n@notNull\n@pageSize 100\nAdmins only: refunds owed and not yet settled, oldest first.';
comment on function app_public.coffees_reviews(app_public.coffees, integer) is E'@behavior -connection +list\n@notNull\n@pageSize 20 100\nNewest first; `limit` defaults to 20 and is capped at 100.';
comment on function app_public.customers_recent_orders(app_public.customers, integer) is E'@behavior -connection +list\n@notNull\n@pageSize 10 100\nNewest first; `limit` defaults to 10 and is capped at 100.';
comment on function app_public.payment_alert_list(integer) is E'@fieldName paymentAlerts\n@behavior -connection +list\n@notNull\n@pageSize 50 500\nAdmins only: the newest payment alerts first.';
