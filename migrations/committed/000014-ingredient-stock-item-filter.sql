--! Previous: sha1:ebd83dad30976a9e8bb968adaaf183e8cae598e2
--! Hash: sha1:2d83829c6bfe6e950a4e53e7f842be33779f4c93
--! Message: ingredient stock item filter

-- Ingredient.stockItem became a function of the store (000002); its filter
-- (`IngredientFilter.stockItem`, `stockItemExists`) filters by the default
-- store's stock item again, as it did before the chain
-- (plugins/ComputedRowFilterPlugin.ts reads the behavior).
comment on function app_public.ingredients_stock_item(app_public.ingredients, uuid) is E'@notNull\n@behavior +filter:proc:filterBy\nThe ingredient''s stock at the store (absent: the default store). Staff only.';
