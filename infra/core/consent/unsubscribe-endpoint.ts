/**
 * Facts of the one-click unsubscribe endpoint (infra/handlers/unsubscribe.ts) that the stack, the policy pack and the
 * launcher share. The signing key (infra/core/consent/unsubscribe.ts signs and verifies with it): 32 random bytes,
 * kept in the stack's SSM SecureString parameter (stack output unsubscribeKeyParameter) as base64url text. The
 * launcher reads the parameter to sign, the endpoint to verify; both turn its value into the key here. Pure.
 */
import { randomBytes } from "crypto";

/** HMAC-SHA256's block-sized key would be 64 bytes; 32 random bytes are the hash's own strength. */
export const UNSUBSCRIBE_KEY_BYTES = 32;

/** A new key's parameter value: generated once, when the stack creates the parameter. */
export function newUnsubscribeKeyValue(): string {
  return randomBytes(UNSUBSCRIBE_KEY_BYTES).toString("base64url");
}

/** The key in a parameter value, or undefined when the value is not UNSUBSCRIBE_KEY_BYTES of canonical base64url. */
export function unsubscribeKeyFromParameter(value: string): Buffer | undefined {
  const key = Buffer.from(value, "base64url");
  return key.length === UNSUBSCRIBE_KEY_BYTES && key.toString("base64url") === value ? key : undefined;
}

/** How the endpoint reads its signing key (GetParameter, with decryption): its role holds this on the key's parameter. */
export const UNSUBSCRIBE_KEY_READ_ACTION = "ssm:GetParameter";

/** The SES calls the endpoint makes, on its one contact list: its role holds these and no other SES action. */
export const UNSUBSCRIBE_SES_ACTIONS = ["ses:GetContact", "ses:CreateContact", "ses:UpdateContact"] as const;

/**
 * The opt-out table: one item per address opted out through the endpoint, keyed by the address as its token names it
 * (unsubscribeAddress: trimmed, lower-cased), with the time of the first opt-out. The sender looks entries up
 * there before it sends (SendBulkEmail has no ListManagementOptions, so SES does not filter bulk sends).
 */
export const OPT_OUT_KEY = "address";
export const OPT_OUT_SINCE = "opted_out_at";
/** What the endpoint may do on the opt-out table (an idempotent update) and what the sender may (read). */
export const OPT_OUT_WRITE_ACTIONS = ["dynamodb:UpdateItem"] as const;
export const OPT_OUT_READ_ACTIONS = ["dynamodb:GetItem", "dynamodb:BatchGetItem"] as const;
