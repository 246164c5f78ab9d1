--! Previous: sha1:0883b702d03aa0f3d12412f92c0048e52d6bc535
--! Hash: sha1:6d7d65001cd8502b92bcb48bbe412112dfe2cbd5
--! Message: queue index

-- 000011: the barista queue (orders PREPARING or BREWING, oldest first) is
-- an index scan, whatever the size of the order history.

drop index if exists app_public.orders_queue_idx;
create index orders_queue_idx on app_public.orders (time_ordered, id) where status in ('PREPARING', 'BREWING');
