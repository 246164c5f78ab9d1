import { extendSchema } from "postgraphile/utils";

/** Declares `@complexity(value: Int!)`, which ComplexityDirectivePlugin puts on fields. */
export const ComplexityDirectiveDefinitionPlugin = extendSchema(
  {
    typeDefs: /* GraphQL */ `
      directive @complexity(value: Int!) on FIELD_DEFINITION
    `,
  },
  "ComplexityDirectiveDefinitionPlugin",
);
