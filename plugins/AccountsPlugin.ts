import { extendSchema } from "postgraphile/utils";
import type { PgClient } from "postgraphile/@dataplan/pg";
import { context, lambda, object, SafeError, sideEffect, type FieldArgs } from "postgraphile/grafast";
import type { AccountRole, CafeServices } from "../common/services.ts";

interface SessionRow {
  user_id: string | null;
  role: AccountRole | null;
  refresh_token: string | null;
  sign_in_id: string | null;
}

/**
 * Accounts: login, register, refreshToken, logout, changePassword, and the
 * admins' addStaffAccount and disableAccount. Postgres checks passwords
 * (bcrypt via pgcrypto), throttles sign-ins and registrations, stores
 * refresh tokens hashed and rotates them, decides who may manage staff and
 * which sign-ins are revoked (app_hidden.*); the server only signs the
 * short-lived access token (`signSession`, from the preset's `schema.cafe`).
 */
export const AccountsPlugin = extendSchema((build) => {
  const executor = build.input.pgRegistry.pgExecutors.main!;
  const services: CafeServices | undefined = build.options.cafe;
  const payload = (row: SessionRow | undefined, failure: string) => {
    if (!row?.user_id || !row.role || !row.sign_in_id) throw new SafeError(failure, { code: "UNAUTHENTICATED" });
    if (!services) throw new Error("AccountsPlugin needs the preset's schema.cafe.signSession");
    const { token, expiresAt } = services.signSession({ userId: row.user_id, role: row.role, signInId: row.sign_in_id });
    return { token, role: row.role, expiresAt: expiresAt.toISOString(), refreshToken: row.refresh_token };
  };
  /**
   * Calls one app_hidden function in a transaction as the caller; `then`
   * shapes its rows. `noteFirst` (called with the client's address) is a
   * statement whose effect stays even when the call itself fails: the
   * call's error is raised after the commit. `revokes`: the call may revoke
   * sign-ins; it answers once this process refuses their tokens.
   * `checksPassword`: the call hashes a password (bcrypt). First the
   * caller's own limits are asked (app_hidden.assert_password_check_allowed,
   * a short transaction of its own): a caller they refuse never takes a
   * place. Then it waits for this process's turn (services.passwordCheckTurn,
   * shared fairly by source and signed-in account) before it takes a pool connection,
   * and is refused RATE_LIMITED when its share is taken. `email`: the
   * argument naming the account (else the signed-in one); `registration`:
   * the registration limit is asked too.
   */
  // `then` runs after the call's statements: a refusal must not roll back
  // what Postgres recorded (a failed attempt, a revoked token family), so
  // it is raised outside the transaction's callback, and the transaction
  // commits (here, or at the end of the mutation's one transaction).
  const call = <T>(
    fieldArgs: FieldArgs,
    argNames: string[],
    sqlText: string,
    then: (rows: any[]) => T,
    { noteFirst, revokes, checksPassword }: { noteFirst?: string; revokes?: boolean; checksPassword?: { email?: string; registration?: boolean } } = {},
  ) => {
    const $rows = sideEffect(
      {
        pg: executor.context(),
        values: object(Object.fromEntries(argNames.map((n) => [n, fieldArgs.getRaw(n)]))),
        clientIp: context().get("clientIp"),
        clientTrusted: context().get("clientTrusted"),
        viewer: context().get("viewer"),
        outside: context().get("withPgClientOutside"),
        caughtUp: context().get("revocationsCaughtUp"),
        afterCommit: context().get("afterCommit"),
      },
      async ({ pg, values, clientIp, clientTrusted, viewer, outside, caughtUp, afterCommit }) => {
        const params = argNames.map((n) => (values as Record<string, unknown>)[n]);
        const source = clientIp ?? "unknown";
        const statements = async (client: PgClient) => {
          if (!noteFirst) {
            const { rows } = await client.query({ text: sqlText, values: [...params, source] });
            return { rows: [...rows], error: null as unknown, caughtUp, afterCommit };
          }
          await client.query({ text: noteFirst, values: [source] });
          await client.query({ text: "savepoint call" });
          try {
            const { rows } = await client.query({ text: sqlText, values: [...params, source] });
            return { rows: [...rows], error: null as unknown, caughtUp, afterCommit };
          } catch (error) {
            await client.query({ text: "rollback to savepoint call" });
            return { rows: [] as any[], error, caughtUp, afterCommit };
          }
        };
        let release: (() => void) | null = null;
        if (checksPassword && services) {
          const email = checksPassword.email ? ((values as Record<string, unknown>)[checksPassword.email] as string | null) : null;
          const limits = () =>
            (outside ?? pg.withPgClient)(pg.pgSettings, (client) =>
              client.query({ text: "select app_hidden.assert_password_check_allowed($1, $2, $3)", values: [email, source, checksPassword.registration ?? false] }),
            );
          // Places are held by who pays: the source, and the signed-in account; never the account a sign-in names.
          release = await services.passwordCheckTurn({ source, account: viewer?.userId ?? null, trusted: clientTrusted ?? false }, limits);
          if (!release) {
            throw new SafeError("The server is busy checking passwords; try again in a moment.", { code: "RATE_LIMITED", retryAfterSeconds: 1 });
          }
        }
        try {
          return await pg.withPgClient(pg.pgSettings, (client) => client.withTransaction(statements));
        } finally {
          release?.();
        }
      },
    );
    return lambda($rows, async ({ rows, error, caughtUp, afterCommit }) => {
      // Inside a mutation's one transaction (common/mutationTransaction.ts)
      // nothing is committed yet: wait after the commit, before the answer.
      if (revokes && caughtUp) {
        if (afterCommit) afterCommit.push(caughtUp);
        else await caughtUp();
      }
      if (error) throw error;
      return then(rows);
    });
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
        "Exchanges an e-mail and password for a bearer token (15 minutes) and a refresh token. Repeated failures from one address, for one account or for any, refuse that address for a while (RATE_LIMITED); other addresses are not affected."
        login(email: String!, password: String!): AuthPayload!
        "Creates a customer account (e-mail unique ignoring case; a password of 10+ characters with letters and a digit or symbol) and signs it in. Tries per address are limited (RATE_LIMITED)."
        register(email: String!, password: String!, name: String!): AuthPayload!
        "A new access token and refresh token for an unused refresh token. Using a refresh token twice revokes every token of its sign-in."
        refreshToken(token: String!): AuthPayload!
        "Revokes the refresh token (and the sign-in it belongs to). True when it was known."
        logout(refreshToken: String!): Boolean!
        "Changes the signed-in account's password; every other sign-in of the account ends (its refresh and access tokens)."
        changePassword(oldPassword: String!, newPassword: String!): Boolean!
        "The chain's admin only. A barista or admin account (password rules as for register); returns its id, also its Barista id. \`storeId\`: the store they work at (a barista without one: the default store; an admin with one manages that store only, without one is an admin of the whole chain)."
        addStaffAccount(email: String!, name: String!, role: String!, password: String!, storeId: ID): ID!
        "Admin only. The account can no longer sign in, refresh or act: its tokens are refused at once. True when this call disabled it, false when it already was."
        disableAccount(email: String!): Boolean!
      }
    `,
    objects: {
      Mutation: {
        plans: {
          login(_: unknown, fieldArgs: FieldArgs) {
            return call(fieldArgs, ["email", "password"], "select s.* from app_hidden.authenticate($1, $2, $3) s", (rows) => payload(rows[0], "Wrong e-mail or password."), {
              checksPassword: { email: "email" },
            });
          },
          register(_: unknown, fieldArgs: FieldArgs) {
            return call(fieldArgs, ["email", "password", "name"], "select s.* from app_hidden.register($1, $2, $3, $4) s", (rows) => payload(rows[0], "Could not register."), {
              noteFirst: "select app_hidden.note_registration_attempt($1)",
              checksPassword: { email: "email", registration: true },
            });
          },
          refreshToken(_: unknown, fieldArgs: FieldArgs) {
            return call(
              fieldArgs,
              ["token"],
              "select s.* from app_hidden.refresh_session($1) s where $2::text is not null",
              (rows) => payload(rows[0], "That refresh token is not valid; sign in again."),
              { revokes: true },
            );
          },
          logout(_: unknown, fieldArgs: FieldArgs) {
            return call(fieldArgs, ["refreshToken"], "select app_hidden.logout($1) as ok where $2::text is not null", (rows) => rows[0]?.ok === true, {
              revokes: true,
            });
          },
          changePassword(_: unknown, fieldArgs: FieldArgs) {
            // A wrong current password is null (so its attempt is recorded), refused here.
            return call(
              fieldArgs,
              ["oldPassword", "newPassword"],
              "select app_hidden.change_password($1, $2, $3) as ok",
              (rows) => {
                if (rows[0]?.ok !== true) throw new SafeError("The current password is wrong.", { code: "UNAUTHENTICATED" });
                return true;
              },
              { revokes: true, checksPassword: {} },
            );
          },
          addStaffAccount(_: unknown, fieldArgs: FieldArgs) {
            return call(fieldArgs, ["email", "name", "role", "password", "storeId"], "select app_hidden.add_staff_account($1, $2, $3, $4, $6, $5::uuid) as id", (rows) => rows[0]?.id as string, {
              checksPassword: {},
            });
          },
          disableAccount(_: unknown, fieldArgs: FieldArgs) {
            return call(fieldArgs, ["email"], "select app_hidden.disable_account($1) as ok where $2::text is not null", (rows) => rows[0]?.ok === true, {
              revokes: true,
            });
          },
        },
      },
    },
  };
}, "AccountsPlugin");
