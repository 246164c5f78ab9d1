import { extendSchema } from "postgraphile/utils";
import { withPgClientTransaction } from "postgraphile/@dataplan/pg";
import { context, object, SafeError } from "postgraphile/grafast";
import type { FieldArgs } from "postgraphile/grafast";
import { signToken, type AccountRole } from "../src/auth.ts";

/**
 * `login(email, password): AuthPayload!`. Postgres checks the password
 * (app_hidden.authenticate, bcrypt via pgcrypto); the server signs the JWT.
 */
export const LoginPlugin = extendSchema((build) => {
  const executor = build.input.pgRegistry.pgExecutors.main!;
  return {
    typeDefs: /* GraphQL */ `
      type AuthPayload {
        "A JWT to send as \`Authorization: Bearer <token>\` on /graphql."
        token: String!
        "customer, barista or admin."
        role: String!
        expiresAt: Datetime!
      }
      extend type Mutation {
        "Exchanges an e-mail and password for a bearer token."
        login(email: String!, password: String!): AuthPayload!
      }
    `,
    plans: {
      Mutation: {
        login(_: unknown, fieldArgs: FieldArgs) {
          const $config = context().get("config");
          return withPgClientTransaction(
            executor,
            object({ email: fieldArgs.getRaw("email"), password: fieldArgs.getRaw("password"), config: $config }),
            async (client, { email, password, config }) => {
              const { rows } = await client.query<{ user_id: string | null; role: AccountRole | null }>({
                text: "select s.user_id, s.role from app_hidden.authenticate($1, $2) s",
                values: [email, password],
              });
              const session = rows[0];
              if (!session?.user_id || !session.role) {
                throw new SafeError("Wrong e-mail or password.", { code: "UNAUTHENTICATED" });
              }
              const { token, expiresAt } = signToken(config.JWT_SECRET, session.user_id, session.role, config.JWT_EXPIRES_IN_SECONDS);
              return { token, role: session.role, expiresAt: expiresAt.toISOString() };
            },
          );
        },
      },
    },
  };
});
