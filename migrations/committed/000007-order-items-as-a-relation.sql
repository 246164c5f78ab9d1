--! Previous: sha1:da399bdc3e07e12ec2003dba128c8ca7643d74f2
--! Hash: sha1:32062a1c06ebc9f05c457f7d17c7163604a18ad8
--! Message: order items as a relation

-- 000007: Order.items is the order_items relation (ordered by position in
-- plugins/orderItemsOrder.ts), so a nested read such as the barista queue
-- (orders -> items -> coffee) is one SQL statement.

drop function if exists app_public.orders_items(app_public.orders);
comment on constraint order_items_order_id_fkey on app_public.order_items is
  E'@fieldName parentOrder\n@notNull\n@foreignSimpleFieldName items\n@behavior -connection +list';
