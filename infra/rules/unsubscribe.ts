/**
 * One-click unsubscribe (RFC 8058) for sends that cannot use SES's ListManagementOptions (SendBulkEmail has none):
 * each recipient's mail carries its own signed link to sendtime's endpoint, in `List-Unsubscribe` with
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`, and in the template variable `{{unsubscribe_url}}`.
 *
 * A token is `<address, base64url>.<HMAC-SHA256(key, "sendtime-unsubscribe:v1:" + address), base64url>`: it names the
 * address it opts out (trimmed, lower-cased, as the importer compares them) and cannot be made for another without
 * the key. The launcher signs (the key from the stack's SSM parameter); the endpoint verifies with the same key.
 * Pure: no AWS, no I/O.
 */
import { createHmac, timingSafeEqual } from "crypto";

const CONTEXT = "sendtime-unsubscribe:v1:";

/**
 * The template variable that holds each bulk entry's unsubscribe link; the fan-out (and bulk-request.ts) make the
 * entry's List-Unsubscribe pair from it, so a bulk plan line carries the link once.
 */
export const UNSUBSCRIBE_TEMPLATE_KEY = "unsubscribe_url";

/** The form of an address a token names: trimmed and lower-cased. */
export function unsubscribeAddress(email: string): string {
  return email.trim().toLowerCase();
}

function mac(key: Buffer, address: string): Buffer {
  return createHmac("sha256", key)
    .update(CONTEXT + address, "utf8")
    .digest();
}

/** The token for `email`, signed with `key`. */
export function unsubscribeToken(key: Buffer, email: string): string {
  const address = unsubscribeAddress(email);
  return `${Buffer.from(address, "utf8").toString("base64url")}.${mac(key, address).toString("base64url")}`;
}

/** The address a token opts out, or undefined when it is malformed or not signed with `key`. */
export function verifyUnsubscribeToken(key: Buffer, token: string): string | undefined {
  const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return undefined;
  const address = Buffer.from(m[1], "base64url").toString("utf8");
  if (
    address === "" ||
    address !== unsubscribeAddress(address) ||
    Buffer.from(address, "utf8").toString("base64url") !== m[1]
  )
    return undefined;
  const given = Buffer.from(m[2], "base64url");
  // Only the canonical spelling: the last character's two spare bits would let four tokens verify as one.
  if (given.toString("base64url") !== m[2]) return undefined;
  const expected = mac(key, address);
  return given.length === expected.length && timingSafeEqual(given, expected) ? address : undefined;
}

/** The link for `email` at the endpoint `baseUrl` (the stack output unsubscribeUrl). */
export function unsubscribeUrl(baseUrl: string, key: Buffer, email: string): string {
  const url = new URL(baseUrl);
  url.searchParams.set("t", unsubscribeToken(key, email));
  return url.toString();
}

/** The two headers RFC 8058 asks for, in SES's MessageHeader shape. */
export function unsubscribeHeaders(link: string): { Name: string; Value: string }[] {
  return [
    { Name: "List-Unsubscribe", Value: `<${link}>` },
    { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" },
  ];
}
