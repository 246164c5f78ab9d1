import { TYPES } from "postgraphile/@dataplan/pg";

const CONTRACT_INPUT_TYPES = new Set(["OrderItemInput", "CreateOrderInput", "ProfileInput"]);

/**
 * The contract's scalar and naming shapes, applied to everything generated:
 * - uuid columns and arguments are `ID` (the row's UUID as text; no Relay
 *   global ids), and the primary key is `id` rather than `rowId`;
 * - numeric (money, stock) is `Float`; the database keeps it exact;
 * - domains over text are `String`; `@typeName` names a composite type;
 * - a function tagged `@behavior +list` keeps its own name (`coffees`, not
 *   `coffeesList`): the contract's list fields are all such functions.
 */
export const ContractShapesPlugin: GraphileConfig.Plugin = {
  name: "ContractShapesPlugin",
  version: "1.0.0",
  inflection: {
    replace: {
      _attributeName(previous, _options, details) {
        return previous!({ ...details, skipRowId: true });
      },
      customQueryField(previous, _options, details) {
        // `@fieldName` on a root function names its field (e.g. coffee_list -> coffees).
        const explicit = details.resource.extensions?.tags?.fieldName;
        return typeof explicit === "string" ? explicit : previous!(details);
      },
      tableType(previous, _options, codec) {
        // `@typeName` on a composite type names its GraphQL type exactly
        // (sales_data would otherwise singularise to SalesDatum).
        const explicit = codec.extensions?.tags?.typeName;
        return typeof explicit === "string" ? explicit : previous!(codec);
      },
      inputType(previous, _options, typeName) {
        // The contract owns these input names (createOrder's and
        // updateCustomerProfile's); generated row inputs of the same name
        // (order_items, profiles), unused since generated mutations are off,
        // step aside.
        const name = previous!(typeName);
        return CONTRACT_INPUT_TYPES.has(name) ? `${typeName}RowInput` : name;
      },
      customQueryListField(_previous, _options, details) {
        return this.customQueryField(details);
      },
      computedAttributeListField(_previous, _options, details) {
        return this.computedAttributeField(details);
      },
    },
  },
  schema: {
    hooks: {
      init: {
        before: ["PgCodecs"],
        callback(_, build) {
          build.setGraphQLTypeForPgCodec(TYPES.numeric, ["input", "output"], "Float");
          build.setGraphQLTypeForPgCodec(TYPES.uuid, ["input", "output"], "ID");
          // Domains over text (e.g. allergen, a NOT NULL text) stay String.
          for (const codec of Object.values(build.input.pgRegistry.pgCodecs)) {
            if (codec.domainOfCodec === TYPES.text) build.setGraphQLTypeForPgCodec(codec, ["input", "output"], "String");
          }
          return _;
        },
      },
    },
  },
};
