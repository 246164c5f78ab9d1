import { extendSchema } from "postgraphile/utils";
import { withPgClientTransaction } from "postgraphile/@dataplan/pg";
import { context, lambda, object, SafeError, type FieldArgs } from "postgraphile/grafast";
import { signToken, type AccountRole } from "../src/auth.ts";
import type { Config } from "../src/config.ts";

/**
 * Accounts: login, register, refreshToken, logout, changePassword.
 * Postgres checks passwords (bcrypt via pgcrypto), throttles sign-ins,
 * stores refresh tokens hashed and rotates them (app_hidden.*); the server
 * only signs the short-lived access token.
 */
interface SessionRow {
  user_id: string | null;
  role: AccountRole | null;
  refresh_token: string | null;
}

function payload(config: Config, row: SessionRow | undefined, failure: string) {
  if (!row?.user_id || !row.role) throw new SafeError(failure, { code: "UNAUTHENTICATED" });
  const { token, expiresAt } = signToken(config.JWT_SECRET, row.user_id, row.role, config.JWT_EXPIRES_IN_SECONDS);
  return { token, role: row.role, expiresAt: expiresAt.toISOString(), refreshToken: row.refresh_token };
}

export const AccountsPlugin = extendSchema((build) => {
  const executor = build.input.pgRegistry.pgExecutors.main!;
  /** Calls one app_hidden function in a transaction as the caller; `then` shapes its rows. */
  // `then` runs after the transaction commits: a refusal must not roll back
  // what Postgres recorded (a failed attempt, a revoked token family).
  const call = <T>(fieldArgs: FieldArgs, argNames: string[], sqlText: string, then: (rows: any[], config: Config) => T) => {
    const $rows = withPgClientTransaction(
      executor,
      object({
        values: object(Object.fromEntries(argNames.map((n) => [n, fieldArgs.getRaw(n)]))),
        config: context().get("config"),
        clientIp: context().get("clientIp"),
      }),
      async (client, { values, config, clientIp }) => {
        const params = argNames.map((n) => (values as Record<string, unknown>)[n]);
        const { rows } = await client.query({ text: sqlText, values: [...params, clientIp ?? "unknown"] });
        return { rows: [...rows], config: config as Config };
      },
    );
    return lambda($rows, ({ rows, config }) => then(rows, config));
  };

  return {
    typeDefs: /* GraphQL */ `
      type AuthPayload {
        "A JWT to send as \`Authorization: Bearer <token>\` on /graphql."
        token: String!
        "customer, barista or admin."
        role: String!
        expiresAt: Datetime!
        "Exchange it with refreshToken for a new AuthPayload before it expires (30 days); each one works once."
        refreshToken: String
      }
      extend type Mutation {
        "Exchanges an e-mail and password for a bearer token (15 minutes) and a refresh token. Repeated failures for one account or from one address are refused for a while (RATE_LIMITED)."
        login(email: String!, password: String!): AuthPayload!
        "Creates a customer account (e-mail unique ignoring case; a password of 10+ characters with letters and a digit or symbol) and signs it in."
        register(email: String!, password: String!, name: String!): AuthPayload!
        "A new access token and refresh token for an unused refresh token. Using a refresh token twice revokes every token of its sign-in."
        refreshToken(token: String!): AuthPayload!
        "Revokes the refresh token (and the sign-in it belongs to). True when it was known."
        logout(refreshToken: String!): Boolean!
        "Changes the signed-in account's password; every refresh token of the account is revoked."
        changePassword(oldPassword: String!, newPassword: String!): Boolean!
      }
    `,
    plans: {
      Mutation: {
        login(_: unknown, fieldArgs: FieldArgs) {
          return call(fieldArgs, ["email", "password"], "select s.* from app_hidden.authenticate($1, $2, $3) s", (rows, config) =>
            payload(config, rows[0], "Wrong e-mail or password."),
          );
        },
        register(_: unknown, fieldArgs: FieldArgs) {
          return call(fieldArgs, ["email", "password", "name"], "select s.* from app_hidden.register($1, $2, $3) s where $4::text is not null", (rows, config) =>
            payload(config, rows[0], "Could not register."),
          );
        },
        refreshToken(_: unknown, fieldArgs: FieldArgs) {
          return call(fieldArgs, ["token"], "select s.* from app_hidden.refresh_session($1) s where $2::text is not null", (rows, config) =>
            payload(config, rows[0], "That refresh token is not valid; sign in again."),
          );
        },
        logout(_: unknown, fieldArgs: FieldArgs) {
          return call(fieldArgs, ["refreshToken"], "select app_hidden.logout($1) as ok where $2::text is not null", (rows) => rows[0]?.ok === true);
        },
        changePassword(_: unknown, fieldArgs: FieldArgs) {
          return call(fieldArgs, ["oldPassword", "newPassword"], "select app_hidden.change_password($1, $2) as ok where $3::text is not null", (rows) => rows[0]?.ok === true);
        },
      },
    },
  };
});
