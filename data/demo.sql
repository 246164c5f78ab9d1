-- The demo café: loaded into an empty database by `npm start` (unless
-- DEMO_DATA=false) and by the tests, in one query() call. Runs as the
-- database owner, which the triggers treat as a DBA ('dba'), so orders may be
-- inserted in any status. Every demo password is `coffee`.
--
-- Well-known ids (the tests rely on them):
--   alice@example.com    customer  00000000-0000-4000-8000-00000000a11c
--   bob@example.com      customer  00000000-0000-4000-8000-000000000b0b
--   barista@example.com  barista   00000000-0000-4000-8000-0000000ba415
--   admin@example.com    admin     00000000-0000-4000-8000-0000000ad314
--   walk-in customer               00000000-0000-4000-8000-00000000da1c
--   alice's PENDING order          00000000-0000-4000-8000-0000000a0001
--   alice's PREPARING order        00000000-0000-4000-8000-0000000a0002
--   bob's PENDING order            00000000-0000-4000-8000-0000000b0001
-- The demo chain has two stores, each with its own barista and stock:
--   Baixa (the default store)      5707e000-0000-4000-8000-000000000001
--     barista@example.com works there; admin@example.com is the chain's admin
--   Ribeira                        5707e000-0000-4000-8000-000000000002
--     ribeira.barista@example.com  barista   00000000-0000-4000-8000-0000000ba417
--     ribeira.manager@example.com  admin of Ribeira only 00000000-0000-4000-8000-0000000ad315
-- Roasters are 10000000-..., suppliers 20000000-..., ingredients 30000000-...,
-- coffees 40000000-... (see below). Timestamps are relative to now().

--------------------------------------------------------------------------------
-- Roasters and suppliers
--------------------------------------------------------------------------------

insert into app_public.roasters (id, name, location, sustainability_rating) values
  ('10000000-0000-4000-8000-000000000001', 'House Roastery', 'In house, Lisbon', 8.0),
  ('10000000-0000-4000-8000-000000000002', 'Northern Lights Coffee', 'Oslo, Norway', 9.2),
  ('10000000-0000-4000-8000-000000000003', 'Volcán Azul', 'Antigua, Guatemala', 8.7),
  ('10000000-0000-4000-8000-000000000004', 'Harbour Street Roasters', 'Bristol, UK', 7.4),
  ('10000000-0000-4000-8000-000000000005', 'Kaffa Forest Collective', 'Jimma, Ethiopia', 9.6);

insert into app_public.suppliers (id, name, contact) values
  ('20000000-0000-4000-8000-000000000001', 'Green Bean Importers', 'orders@greenbean.example'),
  ('20000000-0000-4000-8000-000000000002', 'Direct Trade Partners', '+351 21 000 0000'),
  ('20000000-0000-4000-8000-000000000003', 'Dairy & Co', 'sales@dairyco.example');

--------------------------------------------------------------------------------
-- Ingredients
--------------------------------------------------------------------------------

insert into app_public.ingredients (id, name, organic, allergens) values
  ('30000000-0000-4000-8000-000000000001', 'Espresso beans', true, '{}'),
  ('30000000-0000-4000-8000-000000000002', 'Filter beans', true, '{}'),
  ('30000000-0000-4000-8000-000000000003', 'Whole milk', false, '{milk}'),
  ('30000000-0000-4000-8000-000000000004', 'Oat milk', true, '{gluten}'),
  ('30000000-0000-4000-8000-000000000005', 'Almond milk', false, '{nuts}'),
  ('30000000-0000-4000-8000-000000000006', 'Soy milk', false, '{soy}'),
  ('30000000-0000-4000-8000-000000000007', 'Dark chocolate', true, '{milk,soy}'),
  ('30000000-0000-4000-8000-000000000008', 'Caramel syrup', false, '{milk}'),
  ('30000000-0000-4000-8000-000000000009', 'Vanilla syrup', false, '{}'),
  ('30000000-0000-4000-8000-000000000010', 'Pumpkin spice', true, '{}'),
  ('30000000-0000-4000-8000-000000000011', 'Cinnamon', true, '{}'),
  ('30000000-0000-4000-8000-000000000012', 'Peppermint syrup', false, '{}'),
  ('30000000-0000-4000-8000-000000000013', 'Ice', false, '{}'),
  ('30000000-0000-4000-8000-000000000014', 'Whipped cream', false, '{milk}'),
  ('30000000-0000-4000-8000-000000000015', 'Hazelnut syrup', false, '{nuts}'),
  ('30000000-0000-4000-8000-000000000016', 'Matcha', true, '{}'),
  ('30000000-0000-4000-8000-000000000017', 'Cold brew concentrate', true, '{}'),
  ('30000000-0000-4000-8000-000000000018', 'Cocoa powder', true, '{}');

--------------------------------------------------------------------------------
-- Coffees: every category and every roast; names unique ignoring case
--------------------------------------------------------------------------------

insert into app_public.coffees (id, name, price, roast, category, description, image_url, limited_time_offer, available, roaster_id) values
  ('40000000-0000-4000-8000-000000000001', 'House Espresso', 2.50, 'DARK', 'ESPRESSO', 'A double shot of our house blend: cocoa, molasses, a long finish.', 'https://images.example.com/coffee/house-espresso.jpg', false, true, '10000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000002', 'Ristretto', 2.60, 'MEDIUM_DARK', 'ESPRESSO', 'A short, syrupy pull with dark cherry notes.', 'https://images.example.com/coffee/ristretto.jpg', false, true, '10000000-0000-4000-8000-000000000004'),
  ('40000000-0000-4000-8000-000000000003', 'Caffè Latte', 3.80, 'MEDIUM', 'MILK_BASED', 'Espresso and steamed milk with a thin layer of foam.', 'https://images.example.com/coffee/latte.jpg', false, true, '10000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000004', 'Flat White', 3.60, 'MEDIUM', 'MILK_BASED', 'A double ristretto with velvety microfoam.', 'https://images.example.com/coffee/flat-white.jpg', false, true, '10000000-0000-4000-8000-000000000002'),
  ('40000000-0000-4000-8000-000000000005', 'Cappuccino', 3.50, 'MEDIUM_DARK', 'MILK_BASED', 'Equal parts espresso, milk and foam, dusted with cocoa.', 'https://images.example.com/coffee/cappuccino.jpg', false, true, '10000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000006', 'Mocha', 4.20, 'DARK', 'MILK_BASED', 'Espresso, dark chocolate and steamed milk.', 'https://images.example.com/coffee/mocha.jpg', false, true, '10000000-0000-4000-8000-000000000004'),
  ('40000000-0000-4000-8000-000000000007', 'Ethiopian Pour-Over', 4.50, 'LIGHT', 'FILTER', 'Hand-poured Yirgacheffe: jasmine, bergamot and lemon.', 'https://images.example.com/coffee/pour-over.jpg', false, true, '10000000-0000-4000-8000-000000000005'),
  ('40000000-0000-4000-8000-000000000008', 'Batch Brew', 2.90, 'MEDIUM', 'FILTER', 'Today''s filter coffee, brewed by the jug.', 'https://images.example.com/coffee/batch-brew.jpg', false, true, '10000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000009', 'Cold Brew', 4.00, 'MEDIUM', 'COLD', 'Steeped for 18 hours; smooth, chocolatey, low in acidity.', 'https://images.example.com/coffee/cold-brew.jpg', false, true, '10000000-0000-4000-8000-000000000002'),
  ('40000000-0000-4000-8000-000000000010', 'Iced Caramel Latte', 4.60, 'MEDIUM_DARK', 'COLD', 'Espresso, caramel and cold milk over ice.', 'https://images.example.com/coffee/iced-caramel-latte.jpg', false, true, '10000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000011', 'Pumpkin Spice Latte', 4.90, 'MEDIUM', 'SEASONAL', 'Autumn in a cup: pumpkin spice, cinnamon, espresso and milk.', 'https://images.example.com/coffee/pumpkin-spice-latte.jpg', true, true, '10000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000012', 'Peppermint Mocha', 4.90, 'DARK', 'SEASONAL', 'Mocha with peppermint syrup and whipped cream.', 'https://images.example.com/coffee/peppermint-mocha.jpg', true, true, '10000000-0000-4000-8000-000000000004'),
  ('40000000-0000-4000-8000-000000000013', 'Guatemala Huehuetenango', 4.80, 'LIGHT', 'FEATURED', 'Single origin of the month: red apple, panela, milk chocolate.', 'https://images.example.com/coffee/huehuetenango.jpg', false, true, '10000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000014', 'Nordic Light Roast', 4.40, 'LIGHT', 'FEATURED', 'Very light and bright: blueberry, honey, black tea.', 'https://images.example.com/coffee/nordic-light.jpg', false, true, '10000000-0000-4000-8000-000000000002'),
  ('40000000-0000-4000-8000-000000000015', 'Hazelnut Latte', 4.30, 'MEDIUM', 'MILK_BASED', 'Caffè latte with hazelnut syrup.', 'https://images.example.com/coffee/hazelnut-latte.jpg', true, true, '10000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000016', 'Matcha Cortado', 4.10, 'LIGHT', 'FEATURED', 'Ceremonial matcha cut with a little oat milk. Back next spring.', 'https://images.example.com/coffee/matcha-cortado.jpg', false, false, '10000000-0000-4000-8000-000000000005'),
  ('40000000-0000-4000-8000-000000000017', 'Americano', 2.80, 'DARK', 'ESPRESSO', 'A double espresso lengthened with hot water.', 'https://images.example.com/coffee/americano.jpg', false, true, '10000000-0000-4000-8000-000000000001');

-- What each cup costs the café, and where the beans come from (admins only).
insert into app_private.coffee_costs (coffee_id, cost, supplier_id) values
  ('40000000-0000-4000-8000-000000000001', 0.55, '20000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000002', 0.60, '20000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000003', 0.95, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000004', 0.90, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000005', 0.85, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000006', 1.25, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000007', 1.40, '20000000-0000-4000-8000-000000000002'),
  ('40000000-0000-4000-8000-000000000008', 0.50, '20000000-0000-4000-8000-000000000002'),
  ('40000000-0000-4000-8000-000000000009', 0.95, '20000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000010', 1.30, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000011', 1.45, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000012', 1.50, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000013', 1.60, '20000000-0000-4000-8000-000000000002'),
  ('40000000-0000-4000-8000-000000000014', 1.35, '20000000-0000-4000-8000-000000000001'),
  ('40000000-0000-4000-8000-000000000015', 1.15, '20000000-0000-4000-8000-000000000003'),
  ('40000000-0000-4000-8000-000000000016', 1.70, '20000000-0000-4000-8000-000000000002'),
  ('40000000-0000-4000-8000-000000000017', 0.60, '20000000-0000-4000-8000-000000000001');

-- Recipes, per serving: grams of beans and solids, millilitres of liquids.
-- The Americano has no recipe on file (its inventory is null).
insert into app_public.recipe_lines (coffee_id, ingredient_id, quantity, seasonal) values
  -- House Espresso, Ristretto
  ('40000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000002', '30000000-0000-4000-8000-000000000001', 18, false),
  -- Caffè Latte
  ('40000000-0000-4000-8000-000000000003', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000003', '30000000-0000-4000-8000-000000000003', 220, false),
  -- Flat White
  ('40000000-0000-4000-8000-000000000004', '30000000-0000-4000-8000-000000000001', 20, false),
  ('40000000-0000-4000-8000-000000000004', '30000000-0000-4000-8000-000000000003', 130, false),
  -- Cappuccino
  ('40000000-0000-4000-8000-000000000005', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000005', '30000000-0000-4000-8000-000000000003', 150, false),
  ('40000000-0000-4000-8000-000000000005', '30000000-0000-4000-8000-000000000018', 1, false),
  -- Mocha
  ('40000000-0000-4000-8000-000000000006', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000006', '30000000-0000-4000-8000-000000000003', 200, false),
  ('40000000-0000-4000-8000-000000000006', '30000000-0000-4000-8000-000000000007', 25, false),
  -- Ethiopian Pour-Over, Batch Brew
  ('40000000-0000-4000-8000-000000000007', '30000000-0000-4000-8000-000000000002', 15, false),
  ('40000000-0000-4000-8000-000000000008', '30000000-0000-4000-8000-000000000002', 12, false),
  -- Cold Brew
  ('40000000-0000-4000-8000-000000000009', '30000000-0000-4000-8000-000000000017', 120, false),
  ('40000000-0000-4000-8000-000000000009', '30000000-0000-4000-8000-000000000013', 100, false),
  -- Iced Caramel Latte
  ('40000000-0000-4000-8000-000000000010', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000010', '30000000-0000-4000-8000-000000000003', 180, false),
  ('40000000-0000-4000-8000-000000000010', '30000000-0000-4000-8000-000000000008', 20, false),
  ('40000000-0000-4000-8000-000000000010', '30000000-0000-4000-8000-000000000013', 100, false),
  -- Pumpkin Spice Latte
  ('40000000-0000-4000-8000-000000000011', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000011', '30000000-0000-4000-8000-000000000003', 200, false),
  ('40000000-0000-4000-8000-000000000011', '30000000-0000-4000-8000-000000000010', 5, true),
  ('40000000-0000-4000-8000-000000000011', '30000000-0000-4000-8000-000000000011', 1, true),
  ('40000000-0000-4000-8000-000000000011', '30000000-0000-4000-8000-000000000014', 30, false),
  -- Peppermint Mocha
  ('40000000-0000-4000-8000-000000000012', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000012', '30000000-0000-4000-8000-000000000003', 200, false),
  ('40000000-0000-4000-8000-000000000012', '30000000-0000-4000-8000-000000000007', 25, false),
  ('40000000-0000-4000-8000-000000000012', '30000000-0000-4000-8000-000000000012', 15, true),
  ('40000000-0000-4000-8000-000000000012', '30000000-0000-4000-8000-000000000014', 30, false),
  -- Guatemala Huehuetenango, Nordic Light Roast
  ('40000000-0000-4000-8000-000000000013', '30000000-0000-4000-8000-000000000002', 16, false),
  ('40000000-0000-4000-8000-000000000014', '30000000-0000-4000-8000-000000000002', 16, false),
  -- Hazelnut Latte
  ('40000000-0000-4000-8000-000000000015', '30000000-0000-4000-8000-000000000001', 18, false),
  ('40000000-0000-4000-8000-000000000015', '30000000-0000-4000-8000-000000000003', 200, false),
  ('40000000-0000-4000-8000-000000000015', '30000000-0000-4000-8000-000000000015', 20, false),
  -- Matcha Cortado (off sale)
  ('40000000-0000-4000-8000-000000000016', '30000000-0000-4000-8000-000000000016', 4, false),
  ('40000000-0000-4000-8000-000000000016', '30000000-0000-4000-8000-000000000004', 60, false);

--------------------------------------------------------------------------------
-- Stock. Four items are at or below their alert level (oat milk, almond milk,
-- pumpkin spice, whipped cream) yet none is empty, so every coffee on sale can
-- still be ordered. Everything else holds hundreds of servings. Ice is made
-- in house and not counted (no stock row: never short).
--------------------------------------------------------------------------------

insert into app_public.stock_items (ingredient_id, current_stock, alert_level, unit) values
  ('30000000-0000-4000-8000-000000000001', 20000, 2000, 'g'),   -- espresso beans: 1000+ shots
  ('30000000-0000-4000-8000-000000000002', 10000, 1000, 'g'),   -- filter beans: 600+ cups
  ('30000000-0000-4000-8000-000000000003', 100000, 10000, 'ml'), -- whole milk: 450+ lattes
  ('30000000-0000-4000-8000-000000000004', 1500, 2000, 'ml'),   -- oat milk: LOW
  ('30000000-0000-4000-8000-000000000005', 800, 1000, 'ml'),    -- almond milk: LOW
  ('30000000-0000-4000-8000-000000000006', 4000, 1000, 'ml'),
  ('30000000-0000-4000-8000-000000000007', 8000, 1000, 'g'),
  ('30000000-0000-4000-8000-000000000008', 6000, 500, 'ml'),
  ('30000000-0000-4000-8000-000000000009', 3000, 300, 'ml'),
  ('30000000-0000-4000-8000-000000000010', 150, 200, 'g'),      -- pumpkin spice: LOW (30 lattes)
  ('30000000-0000-4000-8000-000000000011', 400, 50, 'g'),
  ('30000000-0000-4000-8000-000000000012', 6000, 500, 'ml'),
  ('30000000-0000-4000-8000-000000000014', 1500, 1500, 'g'),    -- whipped cream: LOW, at the level (50 toppings)
  ('30000000-0000-4000-8000-000000000015', 6000, 500, 'ml'),
  ('30000000-0000-4000-8000-000000000016', 500, 100, 'g'),
  ('30000000-0000-4000-8000-000000000017', 40000, 3000, 'ml'),
  ('30000000-0000-4000-8000-000000000018', 1000, 100, 'g');

--------------------------------------------------------------------------------
-- Options (000018-options.sql): option groups 50000000-..., options 60000000-...
-- On every MILK_BASED coffee a Size (Small and Large scale the recipe) and a
-- Milk (Oat takes the place of the whole milk; Skimmed is poured from the
-- whole milk's stock: no ingredient of its own); on every espresso-based
-- coffee (ESPRESSO and MILK_BASED, and any other whose recipe pulls espresso)
-- up to two extra shots of 9 g each.
--------------------------------------------------------------------------------

insert into app_public.option_groups (id, name, min_selections, max_selections) values
  ('50000000-0000-4000-8000-000000000001', 'Size', 1, 1),
  ('50000000-0000-4000-8000-000000000002', 'Milk', 1, 1),
  ('50000000-0000-4000-8000-000000000003', 'Extra shot', 0, 2);

insert into app_public.options (id, group_id, name, price_delta, is_default, ingredient_id, ingredient_amount, recipe_factor, position) values
  ('60000000-0000-4000-8000-000000000001', '50000000-0000-4000-8000-000000000001', 'Small', -0.30, false, null, null, 0.75, 1),
  ('60000000-0000-4000-8000-000000000002', '50000000-0000-4000-8000-000000000001', 'Regular', 0, true, null, null, null, 2),
  ('60000000-0000-4000-8000-000000000003', '50000000-0000-4000-8000-000000000001', 'Large', 0.50, false, null, null, 1.5, 3),
  ('60000000-0000-4000-8000-000000000004', '50000000-0000-4000-8000-000000000002', 'Whole', 0, true, '30000000-0000-4000-8000-000000000003', null, null, 1),
  ('60000000-0000-4000-8000-000000000005', '50000000-0000-4000-8000-000000000002', 'Oat', 0.40, false, '30000000-0000-4000-8000-000000000004', null, null, 2),
  ('60000000-0000-4000-8000-000000000006', '50000000-0000-4000-8000-000000000002', 'Skimmed', 0, false, null, null, null, 3),
  ('60000000-0000-4000-8000-000000000007', '50000000-0000-4000-8000-000000000003', 'Extra shot', 0.60, false, '30000000-0000-4000-8000-000000000001', 9, null, 1),
  ('60000000-0000-4000-8000-000000000008', '50000000-0000-4000-8000-000000000003', 'Second extra shot', 0.60, false, '30000000-0000-4000-8000-000000000001', 9, null, 2);

insert into app_public.coffee_option_groups (coffee_id, group_id, position)
select c.id, g.id, g.position
from app_public.coffees c
cross join (values ('50000000-0000-4000-8000-000000000001'::uuid, 1), ('50000000-0000-4000-8000-000000000002'::uuid, 2)) g(id, position)
where c.category = 'MILK_BASED'
union all
select c.id, '50000000-0000-4000-8000-000000000003', 3
from app_public.coffees c
where c.category in ('ESPRESSO', 'MILK_BASED')
   or exists (select 1 from app_public.recipe_lines rl where rl.coffee_id = c.id and rl.ingredient_id = '30000000-0000-4000-8000-000000000001');

--------------------------------------------------------------------------------
-- People: accounts, customers and their profiles, staff
--------------------------------------------------------------------------------

-- Regulars, registered long ago (a new account may not order scarce stock
-- for new_account_scarce_stock_seconds).
insert into app_private.accounts (id, email, password_hash, role, created_at) values
  ('00000000-0000-4000-8000-00000000a11c', 'alice@example.com', public.crypt('coffee', public.gen_salt('bf', 8)), 'customer', now() - interval '1 year'),
  ('00000000-0000-4000-8000-000000000b0b', 'bob@example.com', public.crypt('coffee', public.gen_salt('bf', 8)), 'customer', now() - interval '1 year'),
  ('00000000-0000-4000-8000-0000000ba415', 'barista@example.com', public.crypt('coffee', public.gen_salt('bf', 8)), 'barista', now() - interval '1 year'),
  ('00000000-0000-4000-8000-0000000ad314', 'admin@example.com', public.crypt('coffee', public.gen_salt('bf', 8)), 'admin', now() - interval '1 year'),
  ('00000000-0000-4000-8000-0000000ba417', 'ribeira.barista@example.com', public.crypt('coffee', public.gen_salt('bf', 8)), 'barista', now() - interval '1 year'),
  ('00000000-0000-4000-8000-0000000ad315', 'ribeira.manager@example.com', public.crypt('coffee', public.gen_salt('bf', 8)), 'admin', now() - interval '1 year');

insert into app_public.customers (id, name, points, is_walk_in) values
  ('00000000-0000-4000-8000-00000000a11c', 'Alice Martin', 42, false),
  ('00000000-0000-4000-8000-000000000b0b', 'Bob Chen', 7, false),
  ('00000000-0000-4000-8000-00000000da1c', 'Walk-in customer', 0, true);

insert into app_public.profiles (customer_id, username, avatar) values
  ('00000000-0000-4000-8000-00000000a11c', 'alice', 'https://images.example.com/avatars/alice.png'),
  ('00000000-0000-4000-8000-000000000b0b', 'bob', 'https://images.example.com/avatars/bob.png');

-- Staff ids are their account ids; Jo Okafor works the bar but has no account.
-- Morgan Lee is the chain's admin (chain_wide); Rita Sousa manages Ribeira.
insert into app_public.baristas (id, name, is_admin, chain_wide) values
  ('00000000-0000-4000-8000-0000000ba415', 'Sam Rivera', false, false),
  ('00000000-0000-4000-8000-0000000ad314', 'Morgan Lee', true, true),
  ('00000000-0000-4000-8000-0000000ba416', 'Jo Okafor', false, false),
  ('00000000-0000-4000-8000-0000000ba417', 'Rui Costa', false, false),
  ('00000000-0000-4000-8000-0000000ad315', 'Rita Sousa', true, false);

--------------------------------------------------------------------------------
-- The chain: the default store (made by the migrations) and Ribeira, each
-- with its own staff (one insert into store_staff each) and, below, stock.
-- Ribeira has no pumpkin spice: it takes the Pumpkin Spice Latte off its menu.
--------------------------------------------------------------------------------

update app_public.stores set name = 'Baixa', address = 'Rua Augusta 120, Lisbon'
 where id = '5707e000-0000-4000-8000-000000000001';
insert into app_public.stores (id, name, time_zone, address) values
  ('5707e000-0000-4000-8000-000000000002', 'Ribeira', 'Europe/Lisbon', 'Cais da Ribeira 22, Porto');

insert into app_public.store_staff (store_id, staff_id) values
  ('5707e000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-0000000ba415'),
  ('5707e000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-0000000ba416'),
  ('5707e000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-0000000ba417'),
  ('5707e000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-0000000ad315');

insert into app_public.store_coffees (store_id, coffee_id, available) values
  ('5707e000-0000-4000-8000-000000000002', '40000000-0000-4000-8000-000000000011', false);

-- Ribeira's shelf: smaller than Baixa's, every ingredient Baixa counts.
insert into app_public.stock_items (store_id, ingredient_id, current_stock, alert_level, unit)
select '5707e000-0000-4000-8000-000000000002', s.ingredient_id,
       case s.ingredient_id when '30000000-0000-4000-8000-000000000010' then 0 else s.current_stock / 2 end,
       s.alert_level / 2, s.unit
from app_public.stock_items s where s.store_id = '5707e000-0000-4000-8000-000000000001';

--------------------------------------------------------------------------------
-- Reviews
--------------------------------------------------------------------------------

insert into app_public.reviews (coffee_id, customer_id, rating, comment, created_at) values
  -- Caffè Latte (the most reviewed)
  ('40000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-00000000a11c', 5, 'Silky and not too hot. My daily order.', now() - interval '2 days'),
  ('40000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000b0b', 4, 'Good latte, a bit milky for me.', now() - interval '6 days'),
  ('40000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-00000000a11c', 4, 'Solid, as always.', now() - interval '15 days'),
  ('40000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000b0b', 3, 'Foam was flat today.', now() - interval '25 days'),
  ('40000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-00000000a11c', 5, 'Lovely latte art, too.', now() - interval '33 days'),
  -- House Espresso
  ('40000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000b0b', 5, 'Proper espresso. Thick crema.', now() - interval '1 day'),
  ('40000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-00000000a11c', 4, null, now() - interval '9 days'),
  ('40000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000b0b', 4, 'A little bitter at the end, still great.', now() - interval '19 days'),
  -- Ethiopian Pour-Over
  ('40000000-0000-4000-8000-000000000007', '00000000-0000-4000-8000-00000000a11c', 5, 'Tastes like jasmine tea. Wonderful.', now() - interval '3 days'),
  ('40000000-0000-4000-8000-000000000007', '00000000-0000-4000-8000-000000000b0b', 4, 'Bright and clean.', now() - interval '12 days'),
  -- Pumpkin Spice Latte
  ('40000000-0000-4000-8000-000000000011', '00000000-0000-4000-8000-00000000a11c', 5, 'Autumn is here!', now() - interval '4 days'),
  ('40000000-0000-4000-8000-000000000011', '00000000-0000-4000-8000-000000000b0b', 2, 'Too sweet for me.', now() - interval '5 days'),
  ('40000000-0000-4000-8000-000000000011', '00000000-0000-4000-8000-00000000a11c', 4, 'Less cream next time, please.', now() - interval '13 days'),
  -- Cold Brew
  ('40000000-0000-4000-8000-000000000009', '00000000-0000-4000-8000-000000000b0b', 5, 'Smooth, no bitterness at all.', now() - interval '8 days'),
  ('40000000-0000-4000-8000-000000000009', '00000000-0000-4000-8000-00000000a11c', 3, 'Nice, but too much ice.', now() - interval '17 days'),
  -- Guatemala Huehuetenango
  ('40000000-0000-4000-8000-000000000013', '00000000-0000-4000-8000-00000000a11c', 5, 'Red apple, really.', now() - interval '2 days'),
  ('40000000-0000-4000-8000-000000000013', '00000000-0000-4000-8000-000000000b0b', 4, 'Sweet and juicy for a light roast.', now() - interval '10 days'),
  -- Others
  ('40000000-0000-4000-8000-000000000006', '00000000-0000-4000-8000-000000000b0b', 4, 'Rich and chocolatey.', now() - interval '20 days'),
  ('40000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-00000000a11c', 4, 'Strong and smooth.', now() - interval '11 days'),
  ('40000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000b0b', 5, 'Best flat white in town.', now() - interval '4 days'),
  ('40000000-0000-4000-8000-000000000005', '00000000-0000-4000-8000-000000000b0b', 3, 'Too much foam.', now() - interval '7 days'),
  ('40000000-0000-4000-8000-000000000012', '00000000-0000-4000-8000-00000000a11c', 4, 'Christmas came early.', now() - interval '1 day'),
  ('40000000-0000-4000-8000-000000000014', '00000000-0000-4000-8000-000000000b0b', 5, 'Blueberries! In coffee!', now() - interval '3 days'),
  ('40000000-0000-4000-8000-000000000016', '00000000-0000-4000-8000-00000000a11c', 5, 'Please bring it back.', now() - interval '40 days');

--------------------------------------------------------------------------------
-- Orders in every status. Lines are priced at today's prices and totals are
-- their exact sums. Orders PAID or later were paid a minute after ordering and
-- their stock was taken then (inventory_taken_at), so they reserve nothing;
-- PENDING orders reserve their ingredients; CANCELLED ones never took any.
--------------------------------------------------------------------------------

create temporary table demo_orders (
  id uuid primary key,
  customer_id uuid not null,
  status app_public.order_status not null,
  barista_id uuid,
  payment_method text,
  notes text,
  ago interval not null,
  lines jsonb not null
);

insert into demo_orders (id, customer_id, status, barista_id, payment_method, notes, ago, lines) values
  -- Alice
  ('00000000-0000-4000-8000-0000000a0001', '00000000-0000-4000-8000-00000000a11c', 'PENDING', null, null, 'I''ll pick it up at 9.', interval '10 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000003", "quantity": 1, "special": "oat milk please"}, {"coffee": "40000000-0000-4000-8000-000000000001", "quantity": 1}]'),
  ('00000000-0000-4000-8000-0000000a0002', '00000000-0000-4000-8000-00000000a11c', 'PREPARING', null, 'provider', null, interval '25 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000004", "quantity": 2, "special": "extra hot"}]'),
  ('00000000-0000-4000-8000-0000000a0003', '00000000-0000-4000-8000-00000000a11c', 'READY', '00000000-0000-4000-8000-0000000ba415', 'provider', null, interval '40 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000007", "quantity": 1}]'),
  ('00000000-0000-4000-8000-0000000a0004', '00000000-0000-4000-8000-00000000a11c', 'COMPLETED', '00000000-0000-4000-8000-0000000ba415', 'provider', null, interval '2 days',
   '[{"coffee": "40000000-0000-4000-8000-000000000013", "quantity": 2}, {"coffee": "40000000-0000-4000-8000-000000000011", "quantity": 1, "special": "no whipped cream"}]'),
  ('00000000-0000-4000-8000-0000000a0005', '00000000-0000-4000-8000-00000000a11c', 'COMPLETED', '00000000-0000-4000-8000-0000000ba416', 'card_present', 'Birthday treat', interval '10 days',
   '[{"coffee": "40000000-0000-4000-8000-000000000013", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000006", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000003", "quantity": 1}]'),
  ('00000000-0000-4000-8000-0000000a0006', '00000000-0000-4000-8000-00000000a11c', 'CANCELLED', null, null, null, interval '5 days',
   '[{"coffee": "40000000-0000-4000-8000-000000000009", "quantity": 1}]'),
  -- Bob
  ('00000000-0000-4000-8000-0000000b0001', '00000000-0000-4000-8000-000000000b0b', 'PENDING', null, null, null, interval '5 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000009", "quantity": 2}]'),
  ('00000000-0000-4000-8000-0000000b0002', '00000000-0000-4000-8000-000000000b0b', 'PAID', null, 'provider', null, interval '8 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000005", "quantity": 1, "special": "no cocoa"}]'),
  ('00000000-0000-4000-8000-0000000b0003', '00000000-0000-4000-8000-000000000b0b', 'BREWING', '00000000-0000-4000-8000-0000000ba415', 'provider', 'Table 4', interval '15 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000010", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000002", "quantity": 2}]'),
  ('00000000-0000-4000-8000-0000000b0004', '00000000-0000-4000-8000-000000000b0b', 'PREPARING', null, 'provider', null, interval '12 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000014", "quantity": 1}]'),
  ('00000000-0000-4000-8000-0000000b0005', '00000000-0000-4000-8000-000000000b0b', 'COMPLETED', '00000000-0000-4000-8000-0000000ba415', 'provider', null, interval '1 day',
   '[{"coffee": "40000000-0000-4000-8000-000000000014", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000001", "quantity": 2}]'),
  ('00000000-0000-4000-8000-0000000b0006', '00000000-0000-4000-8000-000000000b0b', 'COMPLETED', '00000000-0000-4000-8000-0000000ba416', 'provider', null, interval '12 days',
   '[{"coffee": "40000000-0000-4000-8000-000000000003", "quantity": 3}]'),
  ('00000000-0000-4000-8000-0000000b0007', '00000000-0000-4000-8000-000000000b0b', 'COMPLETED', '00000000-0000-4000-8000-0000000ba415', 'provider', null, interval '9 days',
   '[{"coffee": "40000000-0000-4000-8000-000000000009", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000012", "quantity": 1, "special": "extra peppermint"}]'),
  ('00000000-0000-4000-8000-0000000b0008', '00000000-0000-4000-8000-000000000b0b', 'CANCELLED', null, null, 'Changed my mind', interval '3 days',
   '[{"coffee": "40000000-0000-4000-8000-000000000015", "quantity": 1}]'),
  -- The walk-in customer (orders taken at the counter)
  ('00000000-0000-4000-8000-0000000d0001', '00000000-0000-4000-8000-00000000da1c', 'COMPLETED', '00000000-0000-4000-8000-0000000ba416', 'cash', null, interval '3 hours',
   '[{"coffee": "40000000-0000-4000-8000-000000000008", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000003", "quantity": 1}]'),
  ('00000000-0000-4000-8000-0000000d0002', '00000000-0000-4000-8000-00000000da1c', 'COMPLETED', '00000000-0000-4000-8000-0000000ba415', 'card_present', null, interval '11 days',
   '[{"coffee": "40000000-0000-4000-8000-000000000013", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000017", "quantity": 2}]'),
  ('00000000-0000-4000-8000-0000000d0003', '00000000-0000-4000-8000-00000000da1c', 'BREWING', '00000000-0000-4000-8000-0000000ba416', 'cash', 'Takeaway', interval '6 minutes',
   '[{"coffee": "40000000-0000-4000-8000-000000000011", "quantity": 1}, {"coffee": "40000000-0000-4000-8000-000000000005", "quantity": 1, "special": "oat milk"}]');

insert into app_public.orders (id, customer_id, status, barista_id, notes, total, time_ordered, estimated_ready_time,
                               paid_at, payment_method, inventory_taken_at)
select d.id, d.customer_id, d.status, d.barista_id, d.notes,
       (select sum((l ->> 'quantity')::integer * c.price)
          from jsonb_array_elements(d.lines) l
          join app_public.coffees c on c.id = (l ->> 'coffee')::uuid),
       now() - d.ago,
       case when d.status <> 'CANCELLED' then now() - d.ago + interval '8 minutes' end,
       case when d.status not in ('PENDING', 'CANCELLED') then now() - d.ago + interval '1 minute' end,
       case when d.status not in ('PENDING', 'CANCELLED') then d.payment_method end,
       case when d.status not in ('PENDING', 'CANCELLED') then now() - d.ago + interval '1 minute' end
from demo_orders d
order by d.ago desc;

insert into app_public.order_items (order_id, position, coffee_id, quantity, unit_price, special_instructions)
select d.id, l.ordinality, c.id, (l.value ->> 'quantity')::integer, c.price, l.value ->> 'special'
from demo_orders d
cross join lateral jsonb_array_elements(d.lines) with ordinality l
join app_public.coffees c on c.id = (l.value ->> 'coffee')::uuid
order by d.id, l.ordinality;

-- The notification each paid order sent when its payment arrived.
insert into app_public.notifications (customer_id, order_id, kind, message, created_at)
select o.customer_id, o.id, 'payment_received',
       format('Thanks! We received %s for your order; it is being prepared.', o.total), o.paid_at
from app_public.orders o
where o.paid_at is not null and not exists (select 1 from app_public.customers c where c.id = o.customer_id and c.is_walk_in);

drop table demo_orders;
