import type { PgCodecWithAttributes, PgResource, PgCondition } from "postgraphile/@dataplan/pg";
import type { SQL } from "postgraphile/pg-sql2";
import { makeAssertAllowed } from "postgraphile-plugin-connection-filter/dist/utils.js";

// A computed column that returns one row of a table (a function `t_f(t,
// ...optional)` returning `some_table`) filters like a one-to-one relation
// when its SQL comment asks for it with the behavior the connection-filter
// plugin gives scalar computed columns:
//
//   comment on function app_public.ingredients_stock_item(...) is E'@behavior +filter:proc:filterBy\n...';
//
// The table's filter then gets `<field>: <Table>Filter` (the row the function
// returns matches) and `<field>Exists: Boolean`, each an EXISTS over the
// function called with the row (its optional arguments defaulted). The
// connection-filter plugin filters only by scalar computed columns; this is
// the row case, so that a relation a migration turned into a function (a
// store's stock item, the default store's when no store is named) keeps the
// filter clients already send.

// Registered by the connection-filter plugin (its scalar computed columns).
const BEHAVIOR = "filter:proc:filterBy" as keyof GraphileBuild.BehaviorStrings;

type RowFunction = PgResource<string, PgCodecWithAttributes, any, readonly any[], any>;

export const ComputedRowFilterPlugin: GraphileConfig.Plugin = {
  name: "ComputedRowFilterPlugin",
  version: "1.0.0",
  after: ["PgConnectionArgFilterComputedAttributesPlugin", "PgConnectionArgFilterBackwardRelationsPlugin"],
  schema: {
    hooks: {
      GraphQLInputObjectType_fields(fields, build, context) {
        const { pgCodec: codec, isPgConnectionFilter } = context.scope as { pgCodec?: PgCodecWithAttributes; isPgConnectionFilter?: boolean };
        if (!isPgConnectionFilter || !codec?.attributes || codec.isAnonymous) return fields;
        const { sql, inflection, graphql } = build;
        // The connection-filter plugin's own check: null and {} refused unless its options allow them.
        const assertAllowed = makeAssertAllowed(build);
        let extended = fields;
        for (const resource of Object.values(build.input.pgRegistry.pgResources) as RowFunction[]) {
          const parameters = resource.parameters as readonly { codec: unknown; optional?: boolean }[] | undefined;
          if (!parameters?.length || parameters[0]!.codec !== codec || !resource.isUnique || resource.isMutation || !resource.codec.attributes || typeof resource.from !== "function") continue;
          if (parameters.slice(1).some((p) => !p.optional)) continue;
          if (!build.behavior.pgResourceMatches(resource, BEHAVIOR)) continue;
          const FilterType = build.getTypeByName(inflection.filterType(inflection.tableType(resource.codec)));
          if (!FilterType) continue;
          const fieldName = inflection.computedAttributeField({ resource });
          const from = resource.from as (...args: { placeholder: SQL }[]) => SQL;
          // The function called with the filtered row, as a FROM item; a
          // null row (none) is one row of nulls there, so it must not match.
          const rowOf = ($where: PgCondition, equals?: boolean) => {
            const $sub = $where.existsPlan({ tableExpression: from({ placeholder: $where.alias }), alias: resource.name, ...(equals === undefined ? null : { equals }) });
            $sub.where(sql`not (${$sub.alias} is null)`);
            return $sub;
          };
          extended = build.extend(
            extended,
            {
              [fieldName]: context.fieldWithHooks(
                { fieldName, isPgConnectionFilterField: true } as any,
                {
                  description: `Filter by the object’s \`${fieldName}\` relation.`,
                  type: FilterType,
                  apply($where: PgCondition, value: unknown) {
                    assertAllowed(value, "object");
                    if (value == null) return;
                    const $sub = rowOf($where);
                    // As the plugin's relation filters: no condition inside, no filter.
                    $sub.ignoreUnlessAmended();
                    return $sub;
                  },
                } as any,
              ),
              [`${fieldName}Exists`]: context.fieldWithHooks(
                { fieldName: `${fieldName}Exists`, isPgConnectionFilterField: true } as any,
                {
                  description: `A related \`${fieldName}\` exists.`,
                  type: graphql.GraphQLBoolean,
                  apply($where: PgCondition, value: unknown) {
                    assertAllowed(value, "scalar");
                    if (value == null) return;
                    rowOf($where, value as boolean);
                  },
                } as any,
              ),
            },
            `ComputedRowFilterPlugin: ${fieldName} on ${codec.name}'s filter`,
          );
        }
        return extended;
      },
    },
  },
};
