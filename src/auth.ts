import { createSecretKey, type KeyObject } from "node:crypto";
import jwt from "jsonwebtoken";
import { SafeError } from "postgraphile/grafast";
import { boundedCache, textBytes, type CacheBounds } from "../common/boundedCache.ts";
import { ACCOUNT_ROLES, type AccountRole, type Session, type Viewer } from "../common/services.ts";
import { bearerToken } from "./bearer.ts";

// Bearer tokens for /graphql: HS256 JWTs signed with JWT_SECRET. The role
// claim picks the Postgres role a request runs as; only the three sign-in
// roles are accepted, whatever a token says. The `sid` claim names the
// sign-in (refresh-token family) the token belongs to: a revoked sign-in's
// tokens are refused (src/db/revocations.ts). During a rotation the previous
// secret (JWT_SECRET_PREVIOUS) still verifies tokens; only the current one signs.

const ROLES: ReadonlySet<string> = new Set<AccountRole>(ACCOUNT_ROLES);
const AUDIENCE = "cafe-api";

/** A refused token: a SafeError, so its message and code reach the client. */
export class AuthError extends SafeError {
  constructor(message: string) {
    super(message, { code: "UNAUTHENTICATED" });
  }
}

// jsonwebtoken turns a string secret into a key on every call (first trying
// it as a public key, which throws): an eighth of the CPU of a small
// authenticated request. The key is made once per secret instead.
const keys = new Map<string, KeyObject>();
function keyFor(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) keys.set(secret, (key = createSecretKey(Buffer.from(secret, "utf8"))));
  return key;
}

export function signToken(secret: string, { userId, role, signInId }: Session, lifetimeSeconds: number): { token: string; expiresAt: Date } {
  const token = jwt.sign({ role, user_id: userId, sid: signInId }, keyFor(secret), {
    algorithm: "HS256",
    expiresIn: lifetimeSeconds,
    audience: AUDIENCE,
    subject: userId,
  });
  const { exp } = jwt.decode(token) as { exp: number };
  return { token, expiresAt: new Date(exp * 1000) };
}

/** Whether a sign-in has been revoked (logout, stolen refresh token, account disabled, ...). */
export type IsRevoked = (signInId: string) => boolean;

/** The Bearer token of an `Authorization` value; undefined when there is none (anonymous). */
function bearerOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  if (Array.isArray(header)) throw new AuthError("Send one Authorization header.");
  const token = bearerToken(header.trim());
  if (token === undefined) throw new AuthError("The Authorization header must be `Bearer <token>`.");
  return token;
}

/** Checks a token's signature, audience and expiry with each secret in turn; its viewer, not yet checked against the revoked sign-ins. */
function verifyToken(secrets: readonly string[], token: string): Viewer {
  let claims: jwt.JwtPayload | undefined;
  for (const secret of secrets) {
    try {
      claims = jwt.verify(token, keyFor(secret), { algorithms: ["HS256"], audience: AUDIENCE }) as jwt.JwtPayload;
      break;
    } catch (e) {
      // Expiry is checked after the signature: this key signed it, and it is too old.
      if (e instanceof jwt.TokenExpiredError) throw new AuthError("Your token has expired; sign in again.");
    }
  }
  if (!claims) throw new AuthError("Your token is not valid; sign in again.");
  const { role, user_id: userId, sid: signInId, exp } = claims as { role?: unknown; user_id?: unknown; sid?: unknown; exp?: unknown };
  if (typeof role !== "string" || !ROLES.has(role) || typeof userId !== "string" || typeof signInId !== "string" || typeof exp !== "number") {
    throw new AuthError("Your token is not valid; sign in again.");
  }
  return { role: role as AccountRole, userId, signInId, exp };
}

/**
 * Reads an `Authorization` value. No value: anonymous (null). A bad, expired
 * or revoked one throws AuthError. `secrets`: the current secret, then the
 * previous one while rotating (each verifies; none signs here).
 *
 * It remembers the tokens it has verified (a bounded cache,
 * "verified_tokens" in /metrics): a client sends the same token on
 * every request until it refreshes it, and checking its HMAC and parsing its
 * JSON again each time was ~6% of the CPU of a small authenticated read.
 * Only a token that verified is kept, keyed by its exact text, so a forged
 * or altered one is always checked in full; its expiry and its sign-in's
 * revocation are checked on every request, as before.
 */
export function cachedViewerFrom(secrets: readonly string[], isRevoked: IsRevoked, bounds: CacheBounds): (header: string | string[] | undefined) => Viewer | null {
  const verified = boundedCache<string, Viewer>("verified_tokens", { ...bounds, bytesOf: (v, token) => textBytes(token) + textBytes(v.userId) + textBytes(v.signInId) + 64 });
  return (header) => {
    const token = bearerOf(header);
    if (token === undefined) return null;
    let viewer = verified.get(token);
    // jsonwebtoken's test: expired from the second `exp` names.
    if (viewer && Math.floor(Date.now() / 1000) >= viewer.exp) {
      verified.delete(token);
      throw new AuthError("Your token has expired; sign in again.");
    }
    if (!viewer) verified.set(token, (viewer = Object.freeze(verifyToken(secrets, token))));
    if (isRevoked(viewer.signInId)) throw new AuthError("This sign-in has ended; sign in again.");
    return viewer;
  };
}

/** A role's time limits (src/db/roleLimits.ts: the DBA's app_private.role_limits). */
export type LimitsOf = (role: string) => { statement_timeout: string; lock_timeout: string };

/** The Postgres settings a request runs with: its role, its time limits and its claims. */
export function pgSettingsFor(viewer: Viewer | null, limitsOf: LimitsOf): Record<string, string> {
  if (!viewer) return { role: "cafe_anonymous", ...limitsOf("cafe_anonymous") };
  const role = `cafe_${viewer.role}`;
  return { role, ...limitsOf(role), "jwt.claims.user_id": viewer.userId, "jwt.claims.role": viewer.role, "jwt.claims.sid": viewer.signInId };
}
