import { extendSchema } from "postgraphile/utils";
import { TYPES, listOfCodec, type PgCodec } from "postgraphile/@dataplan/pg";
import { lambda, type Step } from "postgraphile/grafast";
import type { FieldArgs } from "postgraphile/grafast";
import { oneTransactionPerMutation } from "../common/mutationTransaction.ts";

/**
 * The contract's mutations. Each calls one SQL function that holds the rules,
 * in its object's section of the migrations (create_order in
 * `450 placing an order`, update_order_status and cancel_order in
 * `460 moving and cancelling orders`, ...); this file only maps GraphQL arguments to its
 * parameters. The function's row comes back in the same SQL statement as
 * the fields the client selected; what else the client selected (an order's
 * lines) is read in the same transaction (mutationTransaction.ts).
 */
const MutationsSchemaPlugin = extendSchema((build) => {
  const { pgResources } = build.input.pgRegistry;
  const fn = (name: string) => {
    const resource = pgResources[name];
    if (!resource) throw new Error(`SQL function app_public.${name} is missing (run the migrations)`);
    return resource;
  };
  const createOrder = fn("create_order");
  const updateOrderStatus = fn("update_order_status");
  const cancelOrder = fn("cancel_order");
  const updateCustomerProfile = fn("update_customer_profile");
  const createCoffee = fn("create_coffee");
  const updateCoffeePrice = fn("update_coffee_price");
  const markOrderPaid = fn("mark_order_paid");
  const settleRefund = fn("settle_refund");
  const setCoffeeAvailable = fn("set_coffee_available");
  const restockIngredient = fn("restock_ingredient");
  const setStockAlertLevel = fn("set_stock_alert_level");
  const addStore = fn("add_store");
  const assignStaff = fn("assign_staff");
  const updateStore = fn("update_store");
  const setStorePrice = fn("set_store_price");
  const setOptionAvailable = fn("set_option_available");
  const addOptionGroup = fn("add_option_group");
  const addOption = fn("add_option");
  const uuidList = listOfCodec(TYPES.uuid);
  const methodCodec = markOrderPaid.parameters![1]!.codec;
  const statusCodec = pgResources.orders!.codec.attributes.status.codec;
  const roastCodec = pgResources.coffees!.codec.attributes.roast.codec;
  const categoryCodec = pgResources.coffees!.codec.attributes.category.codec;
  // Named, so an omitted optional argument falls back to the SQL default.
  const arg = (name: string, step: Step, pgCodec: PgCodec) => ({ name, step, pgCodec });

  return {
    typeDefs: /* GraphQL */ `
      input OrderItemInput {
        coffeeId: ID!
        "1 to 20 (app_private.settings max_quantity_per_line)."
        quantity: Int!
        specialInstructions: String
        "The options chosen (Coffee.optionGroups). Absent: each group's default options. Given: exactly these, within each group's minSelections and maxSelections."
        optionIds: [ID!]
      }

      input CreateOrderInput {
        items: [OrderItemInput!]!
        notes: String
      }

      "Absent fields are left as they are; null clears username or avatar."
      input ProfileInput {
        name: String
        username: String
        avatar: String
      }

      "A store's settings to change: absent fields are left as they are; null puts a setting back to the chain's."
      input StoreSettingsPatch {
        name: String
        timeZone: String
        address: String
        isOpen: Boolean
        pendingOrderExpirySeconds: Int
        maxOpenOrdersPerCustomer: Int
        maxOpenCupsPerCustomer: Int
        maxStockSharePercent: Float
        stockShareCooldownSeconds: Int
      }

      extend type Mutation {
        "Exactly one form: \`input\`, or \`coffeeId\` + \`quantity\` (+ \`notes\`). \`customerId\` is for staff ordering for a known customer; without it a staff order belongs to the walk-in customer. \`storeId\`: the store it is for (absent: the default store); staff sell at their own stores only."
        createOrder(input: CreateOrderInput, coffeeId: ID, quantity: Int, notes: String, customerId: ID, storeId: ID): Order!
        "Staff only. Moves an order along the rules of order_status_transitions; PAID comes from a payment, never from here."
        updateOrderStatus(id: ID!, status: OrderStatus!): Order!
        "True when this call cancelled the order, false when it was already cancelled."
        cancelOrder(id: ID!): Boolean!
        "The signed-in customer's name, username and avatar."
        updateCustomerProfile(input: ProfileInput!): Customer!
        "Admin only. Optional fields default to: roast MEDIUM, category ESPRESSO, the house roaster, on sale."
        createCoffee(
          name: String!
          price: Float!
          roast: RoastLevel
          category: CoffeeCategory
          roasterId: ID
          description: String
          imageUrl: String
          available: Boolean
          limitedTimeOffer: Boolean
        ): Coffee!
        "Admin only. Kept in the price history (coffeePriceChanges); existing orders keep their prices."
        updateCoffeePrice(id: ID!, newPrice: Float!): Coffee!
        "Staff only: payment taken at the till. PENDING -> PAID and the same jobs as a provider's payment, once."
        markOrderPaid(id: ID!, method: PaymentMethod!): Order!
        "Admin only: the refund was paid back."
        settleRefund(id: ID!): Refund!
        "Put a coffee on sale or take it off: without \`storeId\` on the chain's menu (the chain's admin), with it at that store only (its admins)."
        setCoffeeAvailable(id: ID!, available: Boolean!, storeId: ID): Coffee!
        "Admins of the store (absent: the default store): add stock (a negative amount writes stock off); kept in the stock movements."
        restockIngredient(ingredientId: ID!, amount: Float!, reason: String, storeId: ID): StockItem!
        "Admins of the store (absent: the default store): the level at or below which lowStockItems lists an ingredient there."
        setStockAlertLevel(ingredientId: ID!, alertLevel: Float!, storeId: ID): StockItem!
        "The chain's admin: a new store, open, with the chain's settings and an empty stock row for every ingredient the default store counts."
        addStore(name: String!, timeZone: String!): Store!
        "The chain's admin: the member of staff (a barista, or an admin who then manages that store) works at the store too. True when assigned now, false when they already worked there."
        assignStaff(accountId: ID!, storeId: ID!): Boolean!
        "Admins of the store: its name, time zone, whether it is open, and its own settings."
        updateStore(id: ID!, patch: StoreSettingsPatch!): Store!
        "Admins of the store: the coffee's price there; null puts it back to the chain's price."
        setStorePrice(storeId: ID!, coffeeId: ID!, price: Float): Coffee!
        "Staff of the store (baristas too): the option on offer there or not (we ran out of oat milk)."
        setOptionAvailable(storeId: ID!, optionId: ID!, available: Boolean!): Option!
        "The chain's admin: a new option group, offered by these coffees."
        addOptionGroup(name: String!, minSelections: Int!, maxSelections: Int!, coffeeIds: [ID!]!): OptionGroup!
        "The chain's admin: a new option. ingredientId with ingredientAmount adds that amount to a serving; ingredientId alone takes the place of the ingredient of the group's default option; recipeFactor scales the whole recipe."
        addOption(groupId: ID!, name: String!, priceDelta: Float!, isDefault: Boolean, ingredientId: ID, ingredientAmount: Float, recipeFactor: Float): Option!
      }
    `,
    objects: {
      Mutation: {
        plans: {
          createOrder(_: unknown, fieldArgs: FieldArgs) {
            const $input = fieldArgs.getRaw("input");
            const $items = lambda($input, (input: any) =>
              input == null
                ? null
                : (input.items ?? []).map((i: any) => ({
                    coffee_id: i.coffeeId,
                    quantity: i.quantity,
                    special_instructions: i.specialInstructions ?? null,
                    option_ids: i.optionIds ?? null,
                  })),
            );
            const $inputNotes = lambda($input, (input: any) => input?.notes ?? null);
            return createOrder.execute(
              [
                arg("p_items", $items, TYPES.jsonb),
                arg("p_input_notes", $inputNotes, TYPES.text),
                arg("p_coffee_id", fieldArgs.getRaw("coffeeId"), TYPES.uuid),
                arg("p_quantity", fieldArgs.getRaw("quantity"), TYPES.int),
                arg("p_notes", fieldArgs.getRaw("notes"), TYPES.text),
                arg("p_customer_id", fieldArgs.getRaw("customerId"), TYPES.uuid),
                arg("p_store_id", fieldArgs.getRaw("storeId"), TYPES.uuid),
              ],
              "mutation",
            );
          },
          updateOrderStatus(_: unknown, fieldArgs: FieldArgs) {
            return updateOrderStatus.execute([arg("p_id", fieldArgs.getRaw("id"), TYPES.uuid), arg("p_status", fieldArgs.getRaw("status"), statusCodec)], "mutation");
          },
          cancelOrder(_: unknown, fieldArgs: FieldArgs) {
            return cancelOrder.execute([arg("p_id", fieldArgs.getRaw("id"), TYPES.uuid)], "mutation");
          },
          updateCustomerProfile(_: unknown, fieldArgs: FieldArgs) {
            // A JSON patch keeps "absent" (unchanged) apart from "null" (clear).
            const $patch = lambda(fieldArgs.getRaw("input"), (input: any) => ({ ...input }));
            return updateCustomerProfile.execute([arg("p_patch", $patch, TYPES.jsonb)], "mutation");
          },
          createCoffee(_: unknown, fieldArgs: FieldArgs) {
            return createCoffee.execute(
              [
                arg("p_name", fieldArgs.getRaw("name"), TYPES.text),
                arg("p_price", fieldArgs.getRaw("price"), TYPES.numeric),
                arg("p_roast", fieldArgs.getRaw("roast"), roastCodec),
                arg("p_category", fieldArgs.getRaw("category"), categoryCodec),
                arg("p_roaster_id", fieldArgs.getRaw("roasterId"), TYPES.uuid),
                arg("p_description", fieldArgs.getRaw("description"), TYPES.text),
                arg("p_image_url", fieldArgs.getRaw("imageUrl"), TYPES.text),
                arg("p_available", fieldArgs.getRaw("available"), TYPES.boolean),
                arg("p_limited_time_offer", fieldArgs.getRaw("limitedTimeOffer"), TYPES.boolean),
              ],
              "mutation",
            );
          },
          markOrderPaid(_: unknown, fieldArgs: FieldArgs) {
            return markOrderPaid.execute([arg("p_id", fieldArgs.getRaw("id"), TYPES.uuid), arg("p_method", fieldArgs.getRaw("method"), methodCodec)], "mutation");
          },
          settleRefund(_: unknown, fieldArgs: FieldArgs) {
            return settleRefund.execute([arg("p_id", fieldArgs.getRaw("id"), TYPES.uuid)], "mutation");
          },
          setCoffeeAvailable(_: unknown, fieldArgs: FieldArgs) {
            return setCoffeeAvailable.execute(
              [arg("p_id", fieldArgs.getRaw("id"), TYPES.uuid), arg("p_available", fieldArgs.getRaw("available"), TYPES.boolean), arg("p_store_id", fieldArgs.getRaw("storeId"), TYPES.uuid)],
              "mutation",
            );
          },
          restockIngredient(_: unknown, fieldArgs: FieldArgs) {
            return restockIngredient.execute(
              [
                arg("p_ingredient_id", fieldArgs.getRaw("ingredientId"), TYPES.uuid),
                arg("p_amount", fieldArgs.getRaw("amount"), TYPES.numeric),
                arg("p_reason", fieldArgs.getRaw("reason"), TYPES.text),
                arg("p_store_id", fieldArgs.getRaw("storeId"), TYPES.uuid),
              ],
              "mutation",
            );
          },
          setStockAlertLevel(_: unknown, fieldArgs: FieldArgs) {
            return setStockAlertLevel.execute(
              [
                arg("p_ingredient_id", fieldArgs.getRaw("ingredientId"), TYPES.uuid),
                arg("p_alert_level", fieldArgs.getRaw("alertLevel"), TYPES.numeric),
                arg("p_store_id", fieldArgs.getRaw("storeId"), TYPES.uuid),
              ],
              "mutation",
            );
          },
          addStore(_: unknown, fieldArgs: FieldArgs) {
            return addStore.execute([arg("p_name", fieldArgs.getRaw("name"), TYPES.text), arg("p_time_zone", fieldArgs.getRaw("timeZone"), TYPES.text)], "mutation");
          },
          assignStaff(_: unknown, fieldArgs: FieldArgs) {
            return assignStaff.execute([arg("p_account_id", fieldArgs.getRaw("accountId"), TYPES.uuid), arg("p_store_id", fieldArgs.getRaw("storeId"), TYPES.uuid)], "mutation");
          },
          updateStore(_: unknown, fieldArgs: FieldArgs) {
            // A JSON patch keeps "absent" (unchanged) apart from "null" (the chain's setting).
            const $patch = lambda(fieldArgs.getRaw("patch"), (patch: any) => Object.fromEntries(Object.entries(patch ?? {}).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v])));
            return updateStore.execute([arg("p_id", fieldArgs.getRaw("id"), TYPES.uuid), arg("p_patch", $patch, TYPES.jsonb)], "mutation");
          },
          setStorePrice(_: unknown, fieldArgs: FieldArgs) {
            return setStorePrice.execute(
              [arg("p_store_id", fieldArgs.getRaw("storeId"), TYPES.uuid), arg("p_coffee_id", fieldArgs.getRaw("coffeeId"), TYPES.uuid), arg("p_price", fieldArgs.getRaw("price"), TYPES.numeric)],
              "mutation",
            );
          },
          setOptionAvailable(_: unknown, fieldArgs: FieldArgs) {
            return setOptionAvailable.execute(
              [
                arg("p_store_id", fieldArgs.getRaw("storeId"), TYPES.uuid),
                arg("p_option_id", fieldArgs.getRaw("optionId"), TYPES.uuid),
                arg("p_available", fieldArgs.getRaw("available"), TYPES.boolean),
              ],
              "mutation",
            );
          },
          addOptionGroup(_: unknown, fieldArgs: FieldArgs) {
            return addOptionGroup.execute(
              [
                arg("p_name", fieldArgs.getRaw("name"), TYPES.text),
                arg("p_min_selections", fieldArgs.getRaw("minSelections"), TYPES.int),
                arg("p_max_selections", fieldArgs.getRaw("maxSelections"), TYPES.int),
                arg("p_coffee_ids", fieldArgs.getRaw("coffeeIds"), uuidList),
              ],
              "mutation",
            );
          },
          addOption(_: unknown, fieldArgs: FieldArgs) {
            return addOption.execute(
              [
                arg("p_group_id", fieldArgs.getRaw("groupId"), TYPES.uuid),
                arg("p_name", fieldArgs.getRaw("name"), TYPES.text),
                arg("p_price_delta", fieldArgs.getRaw("priceDelta"), TYPES.numeric),
                arg("p_is_default", fieldArgs.getRaw("isDefault"), TYPES.boolean),
                arg("p_ingredient_id", fieldArgs.getRaw("ingredientId"), TYPES.uuid),
                arg("p_ingredient_amount", fieldArgs.getRaw("ingredientAmount"), TYPES.numeric),
                arg("p_recipe_factor", fieldArgs.getRaw("recipeFactor"), TYPES.numeric),
              ],
              "mutation",
            );
          },
          updateCoffeePrice(_: unknown, fieldArgs: FieldArgs) {
            return updateCoffeePrice.execute([arg("p_id", fieldArgs.getRaw("id"), TYPES.uuid), arg("p_new_price", fieldArgs.getRaw("newPrice"), TYPES.numeric)], "mutation");
          },
        },
      },
    },
  };
}, "MutationsPlugin");

export const MutationsPlugin: GraphileConfig.Plugin = {
  ...MutationsSchemaPlugin,
  grafast: { middleware: oneTransactionPerMutation },
};
