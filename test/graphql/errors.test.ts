import { GraphQLError } from "graphql";
import { SafeError } from "postgraphile/grafast";
import { maskError } from "../../src/errors.ts";
import { SQLSTATE_CODES } from "../../common/errorCatalogue.ts";
import { isDatabaseUnavailable } from "../../src/db/dbHealth.ts";

// The masked-error policy: refusals raised in SQL keep their message and get
// a stable code; anything unexpected reaches the client as an id to quote,
// never as its message, stack or SQL.

function pgError(code: string, message: string, detail?: string) {
  return Object.assign(new Error(message), { code, detail, severity: "ERROR", where: "PL/pgSQL function app_private.secret_internal()" });
}

function throughMask(original: Error) {
  return maskError(new GraphQLError(original.message, { originalError: original, path: ["field"] }));
}

test.each(Object.entries(SQLSTATE_CODES))("SQLSTATE %s becomes extensions.code %s", (sqlstate, code) => {
  const masked = throughMask(pgError(sqlstate, "A rule said no."));
  expect(masked.extensions.code).toBe(code);
  expect(masked.path).toEqual(["field"]);
});

test("an INVALID_TRANSITION carries the from and to states of the SQL error's detail", () => {
  const masked = throughMask(pgError("CT001", "An order cannot move from COMPLETED to PENDING (as barista).", '{"from":"COMPLETED","to":"PENDING","role":"barista"}'));
  expect(masked.extensions).toEqual({ code: "INVALID_TRANSITION", details: { from: "COMPLETED", to: "PENDING", role: "barista" } });
});

test("an unexpected error is masked: no message, no stack, no SQL; an id the log carries too", () => {
  const secret = pgError("XX000", 'relation "app_private.accounts" password_hash leaked at line 42');
  const masked = throughMask(secret);
  expect(masked.extensions.code).toBe("INTERNAL_SERVER_ERROR");
  expect(masked.extensions.errorId).toMatch(/^[0-9a-f-]{36}$/);
  expect(masked.message).toBe(`An internal error occurred (reference ${masked.extensions.errorId}).`);
  const json = JSON.stringify(masked.toJSON());
  expect(json).not.toMatch(/password|app_private|line 42|stack|PL\/pgSQL/);
});

test("a plain JavaScript error (a bug) is masked the same way", () => {
  const masked = throughMask(new TypeError("Cannot read properties of undefined (reading 'items')"));
  expect(masked.extensions.code).toBe("INTERNAL_SERVER_ERROR");
  expect(masked.message).not.toMatch(/items|undefined/);
});

test("a SafeError keeps its message and code (they are meant for clients)", () => {
  const masked = throughMask(new SafeError("Wrong e-mail or password.", { code: "UNAUTHENTICATED" }));
  expect(masked.message).toBe("Wrong e-mail or password.");
  expect(masked.extensions.code).toBe("UNAUTHENTICATED");
});

test("the database being down is SERVICE_UNAVAILABLE, not an internal error", () => {
  const masked = throughMask(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
  expect(masked.extensions.code).toBe("SERVICE_UNAVAILABLE");
  expect(masked.message).not.toMatch(/127\.0\.0\.1/);
});

test("down is a connection that cannot be had or was cut; a statement's own failure (a timeout too) is not", () => {
  const down = [
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
    Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" }),
    pgError("57P01", "terminating connection due to administrator command"),
    new Error("Connection terminated unexpectedly"),
  ];
  const notDown = [
    pgError("57014", "canceling statement due to statement timeout"),
    pgError("55P03", "canceling statement due to lock timeout"),
    pgError("23505", "duplicate key value violates unique constraint"),
    new Error("Invalid payload"),
    // busy, not down (test/http/database-busy.test.ts): the pool stayed full, the server has too many clients
    pgError("53300", "sorry, too many clients already"),
    new Error("timeout exceeded when trying to connect"),
  ];
  expect(down.map(isDatabaseUnavailable)).toEqual(down.map(() => true));
  expect(notDown.map(isDatabaseUnavailable)).toEqual(notDown.map(() => false));
});

test("parse and validation errors are shown, with a code", () => {
  expect(maskError(new GraphQLError('Syntax Error: Unexpected Name "x".')).extensions.code).toBe("GRAPHQL_PARSE_FAILED");
  expect(maskError(new GraphQLError('Cannot query field "nope" on type "Query".')).extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
});
