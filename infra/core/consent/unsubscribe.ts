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
import { base64urlInto, HmacSha256, paddedLength } from "../crypto/hmac-sha256";

const CONTEXT = "sendtime-unsubscribe:v1:";

/**
 * The template variable that holds each bulk entry's unsubscribe link; the fan-out (and sender-input.ts) make the
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
  return new UnsubscribeSigner(key).token(email);
}

const CONTEXT_BYTES = Buffer.byteLength(CONTEXT);
// Read once: the CLI's transpiler (esbuild, CommonJS) makes each use of an import a getter call (bulk.ts says more).
const padded = paddedLength;
const base64url = base64urlInto;
/** The base64url of a 32-byte MAC: 43 characters. */
const MAC_CHARS = 43;
/** An unsigned token's end: its signature, 32 zero bytes. */
const UNSIGNED = `.${Buffer.alloc(32).toString("base64url")}`;

/**
 * Tokens for one key, as unsubscribeToken makes them, for a launcher that signs one per recipient: the HMAC runs in
 * JavaScript from the key's precomputed blocks (hmac-sha256.ts says why) and the token is made in one scratch buffer
 * with one native call (its text). Without a key (a dry run, which never has the stack's) tokens are unsigned: their
 * signature is 32 zero bytes (`AAAA…A`), the same length as a real one, and never valid.
 */
export class UnsubscribeSigner {
  private readonly hmac?: HmacSha256;
  /** CONTEXT, then the address and its padding; grown for a long address. */
  private scratch = Buffer.alloc(256);
  private text = Buffer.alloc(512);

  constructor(key: Buffer | undefined) {
    if (key) this.hmac = new HmacSha256(key);
    this.scratch.write(CONTEXT, 0, "latin1");
  }

  token(email: string): string {
    const address = unsubscribeAddress(email);
    // A UTF-16 unit is at most 3 bytes of UTF-8; room for the padding and the MAC after it.
    const most = CONTEXT_BYTES + 3 * address.length;
    if (padded(most) + 32 > this.scratch.length) {
      this.scratch = Buffer.alloc(2 * (padded(most) + 32));
      this.scratch.write(CONTEXT, 0, "latin1");
    }
    if (Math.ceil((4 * most) / 3) + 1 + MAC_CHARS > this.text.length)
      this.text = Buffer.alloc(2 * (Math.ceil((4 * most) / 3) + 1 + MAC_CHARS));
    const s = this.scratch;
    const end = CONTEXT_BYTES + s.write(address, CONTEXT_BYTES, "utf8");
    const t = this.text;
    let at = base64url(s, CONTEXT_BYTES, end, t, 0);
    if (!this.hmac) return t.toString("latin1", 0, at) + UNSIGNED;
    t[at++] = 0x2e; // "."
    // The MAC goes after the padded message, then into the text.
    const macAt = padded(end);
    this.hmac.mac(s, end, s, macAt);
    at = base64url(s, macAt, macAt + 32, t, at);
    return t.toString("latin1", 0, at);
  }
}

/** Characters of a token's address part at most (the base64url of 300 bytes): longer is refused, never signed. */
export const MAX_TOKEN_ADDRESS_CHARS = 400;
const TOKEN = new RegExp(`^([A-Za-z0-9_-]{1,${MAX_TOKEN_ADDRESS_CHARS}})\\.([A-Za-z0-9_-]{${MAC_CHARS}})$`);

/** The address a token opts out, or undefined when it is malformed or not signed with `key`. */
export function verifyUnsubscribeToken(key: Buffer, token: string): string | undefined {
  const m = TOKEN.exec(token);
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
  return unsubscribeLink(baseUrl, unsubscribeToken(key, email));
}

/** The link carrying `token` at the endpoint `baseUrl`. */
export function unsubscribeLink(baseUrl: string, token: string): string {
  const url = new URL(baseUrl);
  url.searchParams.set("t", token);
  return url.toString();
}

/** The two headers RFC 8058 asks for, in SES's MessageHeader shape. */
export function unsubscribeHeaders(link: string): { Name: string; Value: string }[] {
  return [
    { Name: "List-Unsubscribe", Value: `<${link}>` },
    { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" },
  ];
}
