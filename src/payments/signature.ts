import { createHmac, timingSafeEqual } from "node:crypto";

// The payment callback's signature, in one place: the route checks it, the
// tests' provider and `npm run pay` (scripts/pay.ts) make it.
// `X-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes>`.

/** The raw HMAC-SHA256 of the bytes, keyed with the secret. */
export function hmacSha256(secret: string, body: Buffer | string): Buffer {
  return createHmac("sha256", secret).update(body).digest();
}

/** The X-Signature header value for these bytes: `sha256=<hex>`. */
export function signatureHeader(body: Buffer | string, secret: string): string {
  return `sha256=${hmacSha256(secret, body).toString("hex")}`;
}

/** Whether an X-Signature header matches the bytes under any of the secrets (every one is checked: the time does not tell which matched). */
export function signatureMatches(header: string | undefined, body: Buffer, secrets: string[]): boolean {
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header?.trim() ?? "");
  if (!match) return false;
  const given = Buffer.from(match[1]!, "hex");
  let ok = false;
  for (const secret of secrets) ok = timingSafeEqual(given, hmacSha256(secret, body)) || ok;
  return ok;
}
