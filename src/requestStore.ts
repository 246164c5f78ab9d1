/**
 * The store a request is for, as the client names it: the `X-Store-Id`
 * header over HTTP, `connectionParams.storeId` over graphql-ws. The API hands
 * it to Postgres as `cafe.store_id` for the request's transactions;
 * `app_hidden.store_or_default()` reads it where an argument names no store
 * and refuses an unknown or closed store (BAD_USER_INPUT, migration
 * 000019-request-store.sql). The live cache keys its answers by it.
 */
export const STORE_HEADER = "x-store-id";

/** The text the client sent (the first when repeated), or undefined when none; the SQL checks it is a store's id. */
export function requestStoreOf(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first !== "string") return undefined;
  // A NUL byte cannot go into a setting (PostgreSQL's protocol refuses it); without it the value is still checked, and refused, in SQL.
  const text = first.replace(/\0/g, "").trim();
  return text === "" ? undefined : text.slice(0, 100);
}
