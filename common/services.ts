/**
 * What the plugins need from the server they run in, handed to them through
 * the preset's schema options (`schema: { cafe }`, src/preset.ts):
 * schema plugins read `build.options.cafe`, middleware
 * `resolvedPreset.schema.cafe`. So plugins/ imports nothing from src/; both
 * import the facts kept here (roles, sessions).
 */

/** The sign-in roles: only these are accepted in a token, whatever it says. */
export const ACCOUNT_ROLES = ["customer", "barista", "admin"] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

/** Baristas and admins: the staff, who get higher query limits and, under AD_HOC_QUERIES=staff, ad-hoc documents. */
export function isStaff(viewer: Pick<Viewer, "role"> | null | undefined): boolean {
  return viewer?.role === "barista" || viewer?.role === "admin";
}

/** AD_HOC_QUERIES: who may send a document that is not trusted (and introspect). */
export const AD_HOC_POLICIES = ["any", "staff", "none"] as const;
export type AdHocPolicy = (typeof AD_HOC_POLICIES)[number];

/** Whether `policy` lets a caller (staff or not) do the gated thing: here, send an ad-hoc document. */
export function policyAllows(policy: AdHocPolicy, staff: boolean): boolean {
  return policy === "any" || (policy === "staff" && staff);
}

/** A verified caller (src/auth.ts reads it from a bearer token). */
export interface Viewer {
  role: AccountRole;
  userId: string;
  /** The sign-in (refresh-token family) the token was issued for. */
  signInId: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

/** A sign-in an access token is issued for. */
export interface Session {
  userId: string;
  role: AccountRole;
  signInId: string;
}

export interface PluginLogger {
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

/** A payment the customer's app confirms with its client secret (Stripe's PaymentIntent). */
export interface PaymentIntentView {
  id: string;
  clientSecret: string;
  /** Minor units. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  status: string;
}

/** The payment provider's intents, for startPayment (src/payments/stripeClient.ts). */
export interface PaymentIntentService {
  /** Makes the intent for an order; the same key finds the same intent again at the provider. */
  create(input: { orderId: string; amount: number; currency: string }, idempotencyKey: string): Promise<PaymentIntentView>;
  retrieve(id: string): Promise<PaymentIntentView>;
}

export interface CafeServices {
  /** Signs a short-lived access token for a session. */
  signSession(session: Session): { token: string; expiresAt: Date };
  logger: PluginLogger;
  /** Counts a GraphQL operation and observes its duration. */
  observeOperation(operationName: string | null | undefined, operationType: string, seconds: number): void;
  /** Records why the request being served is refused (a code): its access log counts it by source and reason instead of a line of its own. */
  refused?(code: string): void;
  /** The scope of the request being served (its access log line reads `operationName`), if any. */
  requestScope(): { operationName?: string; documentId?: string } | undefined;
  /** While tracing is on (src/tracing.ts): runs a GraphQL operation in its span. */
  operationSpan?<T>(attributes: Record<string, string | number | undefined>, fn: () => T): T;
  /**
   * This process's turn for one password check (bcrypt in Postgres) of a
   * caller (its source, inside TRUSTED_NETWORKS or not, and the account
   * when known), after `limits` (the caller's own, asked first; what it
   * throws is thrown): a release function once it may run, null when it is
   * refused (its share is taken, or lighter callers fill the queue;
   * src/passwordChecks.ts).
   */
  passwordCheckTurn(caller: { source: string; account?: string | null; trusted?: boolean }, limits?: () => Promise<unknown>): Promise<(() => void) | null>;
  /** The payment provider's intents; null without STRIPE_SECRET_KEY (startPayment then answers PAYMENTS_NOT_CONFIGURED). */
  paymentIntents: PaymentIntentService | null;
  /** Logs a failure the client sees only as a code. */
  logError(fields: object, message: string): void;
}

declare global {
  namespace Grafast {
    interface Context {
      viewer: Viewer | null;
      /** The caller as a source: its address (X-Forwarded-For only where TRUST_PROXY says so), an IPv6 one as its /64 (src/http/clientAddress.ts). */
      clientIp: string;
      /** The source is inside TRUSTED_NETWORKS (its per-source shares are TRUSTED_NETWORK_FACTOR times larger). */
      clientTrusted?: boolean;
      /** Waits until this process knows of the sign-ins revoked so far (src/db/revocations.ts). */
      revocationsCaughtUp?: () => Promise<void>;
      /** Set by common/mutationTransaction.ts while a mutation's one transaction is open: run after it commits, before the answer. */
      afterCommit?: Array<() => unknown>;
      /** Set with the mutation's one transaction (common/mutationTransaction.ts): the connections outside it, for a check that must not hold it open (a password check's limits, asked before its turn). */
      withPgClientOutside?: import("postgraphile/@dataplan/pg").WithPgClient;
      /** Awaited after every single-field mutation commits, before its answer: this process has heard every change committed so far (the live cache), so the caller's next read sees its own write. */
      onCommit?: () => void | Promise<void>;
    }
  }
  namespace GraphileBuild {
    interface SchemaOptions {
      cafe?: CafeServices;
    }
  }
}

/** The services of the preset a middleware event carries. */
export function servicesOf(resolvedPreset: GraphileConfig.ResolvedPreset | undefined): CafeServices | undefined {
  return resolvedPreset?.schema?.cafe;
}
