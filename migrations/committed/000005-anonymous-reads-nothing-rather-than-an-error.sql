--! Previous: sha1:6188c0256b911a8ffee7d07c28d68cec01312805
--! Hash: sha1:5e200fcc974b765cb6694ec27fe8c9d5667e3ef5
--! Message: anonymous reads nothing rather than an error

-- 000005: anonymous callers may ask for orders and customers and get none
-- (an empty list, a null), rather than a permission error: the grants let
-- the query run, and RLS (no policy for cafe_anonymous) returns no rows.

grant select on app_public.orders, app_public.order_items, app_public.customers, app_public.profiles,
  app_public.baristas, app_public.order_events, app_public.notifications
to cafe_anonymous;
