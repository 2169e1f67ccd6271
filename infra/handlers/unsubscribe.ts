/**
 * The one-click unsubscribe endpoint (a Lambda function URL, auth NONE; bundled by esbuild at program time:
 * infra/unsubscribe-endpoint.ts). Bulk sends carry `List-Unsubscribe: <URL?t=TOKEN>` and `List-Unsubscribe-Post:
 * List-Unsubscribe=One-Click` (infra/core/consent/unsubscribe.ts), since SendBulkEmail has no ListManagementOptions.
 *
 * - POST with the body `List-Unsubscribe=One-Click` (RFC 8058 §3.1; urlencoded or multipart): verifies the token,
 *   records its address in the stack's opt-out table (which the sender reads before every SendBulkEmail: SES
 *   filters only sends that carry ListManagementOptions, and bulk sends cannot), then opts it out of the topic in the
 *   SES contact list (which filters the plain sends). Idempotent: an address already opted out is left as it is (200
 *   again), one not yet in the list is created opted out. 200 only when both are recorded; otherwise 503 and the
 *   mail client's retry, or the user's next click, records what is missing.
 * - GET: a small page whose button POSTs the same (a link scanner that fetches the URL unsubscribes nobody).
 * - A token that is malformed or not signed with the stack's key: 400, and no SES call.
 * - More than SOURCE_LIMIT requests a minute from one source address (per function instance): 429.
 * Every AWS call is bounded in time; the key is read once per instance from the SSM SecureString parameter.
 * Logs hold no address: one JSON line per request with its outcome.
 *
 * Configuration (environment, set by the stack): SENDTIME_UNSUBSCRIBE = {"contactListName", "topicName",
 * "keyParameter", "optOutTable"}.
 */
import {
  CreateContactCommand,
  GetContactCommand,
  SESv2Client,
  TopicPreference,
  UpdateContactCommand,
} from "@aws-sdk/client-sesv2";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { unsubscribeKeyFromParameter } from "../core/consent/unsubscribe-endpoint";
import { verifyUnsubscribeToken } from "../core/consent/unsubscribe";
import { recordOptOut } from "./opt-out-table";
import { settingsFromEnv } from "./settings";

/** The client classes the handler uses (its bundled copies): tests mock them with aws-sdk-client-mock. */
export { SESv2Client, SSMClient };
/** The bundle's second entry point (handler `index.sesOptOutHandler`): SES's SUBSCRIPTION events into the opt-out table. */
export { sesOptOutHandler } from "./ses-opt-outs";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export const UNSUBSCRIBE_ENV = "SENDTIME_UNSUBSCRIBE";

/** Requests one source address may make per minute to one function instance. */
export const SOURCE_LIMIT = 10;
const WINDOW_MS = 60_000;

export interface UnsubscribeSettings {
  contactListName: string;
  topicName: string;
  keyParameter: string;
  /** The opt-out table's name. */
  optOutTable: string;
}

/** A Lambda function URL request (payload format 2.0), the fields used. */
export interface FunctionUrlRequest {
  requestContext?: { http?: { method?: string; sourceIp?: string } };
  queryStringParameters?: Record<string, string | undefined>;
  headers?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded?: boolean;
}

export interface FunctionUrlResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

interface State {
  settings: UnsubscribeSettings;
  region: string;
  env: NodeJS.ProcessEnv;
  ses: SESv2Client;
  ssm: SSMClient;
  key?: Buffer;
}

let state: State | undefined;
const recent = new Map<string, number[]>();

const client = { maxAttempts: 3, requestHandler: { connectionTimeout: 2_000, requestTimeout: 3_000 } };

export async function handler(request: FunctionUrlRequest): Promise<FunctionUrlResponse> {
  state ??= loadState(process.env);
  const method = request?.requestContext?.http?.method ?? "";
  const source = request?.requestContext?.http?.sourceIp ?? "unknown";
  if (method !== "GET" && method !== "POST")
    return done("method", page(405, "Use the link in the email."), { Allow: "GET, POST" });
  if (overLimit(source, Date.now()))
    return done("rate-limited", page(429, "Too many requests: try again in a minute."), { "Retry-After": "60" });
  const token = request.queryStringParameters?.t ?? "";
  let address: string | undefined;
  try {
    address = verifyUnsubscribeToken(await signingKey(state), token);
  } catch (e) {
    return done(
      "key-unavailable",
      page(503, "Unsubscribing is not available right now: try again later."),
      { "Retry-After": "30" },
      e,
    );
  }
  if (address === undefined) return done("bad-token", page(400, "This unsubscribe link is not valid."));
  if (method === "GET") return done("confirm", confirmPage(token));
  if (!isOneClick(request))
    return done("not-one-click", page(400, 'A one-click unsubscribe POST carries "List-Unsubscribe=One-Click".'));
  try {
    await recordOptOut(
      { tableName: state.settings.optOutTable, region: state.region, env: state.env },
      address,
      new Date(),
    );
  } catch (e) {
    return done(
      "table-error",
      page(503, "Unsubscribing failed for now: try again in a minute."),
      { "Retry-After": "60" },
      e,
    );
  }
  try {
    const outcome = await optOut(state, address);
    return done(outcome, page(200, "You are unsubscribed. You will get no more of these emails."));
  } catch (e) {
    const busy = (e as Error)?.name === "TooManyRequestsException";
    return done(
      busy ? "ses-busy" : "ses-error",
      page(503, "Unsubscribing failed for now: try again in a minute."),
      { "Retry-After": "60" },
      e,
    );
  }
}

/** Opts `address` out of the topic: created opted out, updated (every other preference kept), or left as it is. */
async function optOut(s: State, address: string): Promise<"opted-out" | "already-opted-out"> {
  const { contactListName: ContactListName, topicName: TopicName } = s.settings;
  const optedOut: TopicPreference = { TopicName, SubscriptionStatus: "OPT_OUT" };
  for (let attempt = 0; attempt < 2; attempt++) {
    let contact;
    try {
      contact = await s.ses.send(new GetContactCommand({ ContactListName, EmailAddress: address }));
    } catch (e) {
      if ((e as Error)?.name !== "NotFoundException") throw e;
      try {
        await s.ses.send(
          new CreateContactCommand({ ContactListName, EmailAddress: address, TopicPreferences: [optedOut] }),
        );
        return "opted-out";
      } catch (e2) {
        // Created between our read and write (a second click at once): read it again.
        if ((e2 as Error)?.name === "AlreadyExistsException") continue;
        throw e2;
      }
    }
    const preferences = contact.TopicPreferences ?? [];
    if (preferences.some((p) => p.TopicName === TopicName && p.SubscriptionStatus === "OPT_OUT"))
      return "already-opted-out";
    // UpdateContact replaces the contact's preferences: every other topic is passed on as it was.
    await s.ses.send(
      new UpdateContactCommand({
        ContactListName,
        EmailAddress: address,
        TopicPreferences: [...preferences.filter((p) => p.TopicName !== TopicName), optedOut],
        UnsubscribeAll: contact.UnsubscribeAll,
        AttributesData: contact.AttributesData,
      }),
    );
    return "opted-out";
  }
  throw new Error("the contact was created and read back as absent twice");
}

async function signingKey(s: State): Promise<Buffer> {
  if (s.key) return s.key;
  const out = await s.ssm.send(new GetParameterCommand({ Name: s.settings.keyParameter, WithDecryption: true }));
  const key = unsubscribeKeyFromParameter(out.Parameter?.Value ?? "");
  if (!key) throw new Error(`parameter ${s.settings.keyParameter} does not hold an unsubscribe key`);
  return (s.key = key);
}

/** RFC 8058's body, as application/x-www-form-urlencoded or multipart/form-data. */
function isOneClick(request: FunctionUrlRequest): boolean {
  const raw = request.body ?? "";
  const body = request.isBase64Encoded ? Buffer.from(raw, "base64").toString("utf8") : raw;
  if (new URLSearchParams(body).get("List-Unsubscribe") === "One-Click") return true;
  return /name="?List-Unsubscribe"?\r?\n(?:[^\r\n]+\r?\n)*\r?\nOne-Click\r?\n/.test(body);
}

/** A sliding minute per source address: at most SOURCE_LIMIT requests. */
function overLimit(source: string, now: number): boolean {
  const times = (recent.get(source) ?? []).filter((t) => t > now - WINDOW_MS);
  times.push(now);
  recent.set(source, times);
  if (recent.size > 10_000) for (const [k, v] of recent) if (v[v.length - 1] <= now - WINDOW_MS) recent.delete(k);
  return times.length > SOURCE_LIMIT;
}

function done(
  outcome: string,
  response: FunctionUrlResponse,
  headers: Record<string, string> = {},
  error?: unknown,
): FunctionUrlResponse {
  const line = { outcome, status: response.statusCode, ...(error ? { error: (error as Error)?.name ?? "Error" } : {}) };
  (response.statusCode >= 500 ? console.error : console.log)(JSON.stringify(line));
  return { ...response, headers: { ...response.headers, ...headers } };
}

const HTML = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
};

function page(statusCode: number, message: string, extra = ""): FunctionUrlResponse {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>Unsubscribe</title></head><body><p>${escapeHtml(message)}</p>${extra}</body></html>`;
  return { statusCode, headers: HTML, body };
}

/** The GET page: one button that POSTs the one-click body to this same URL. */
function confirmPage(token: string): FunctionUrlResponse {
  const form = `<form method="post" action="?t=${encodeURIComponent(token)}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`;
  return page(200, "Unsubscribe from these emails?", form);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loadState(env: NodeJS.ProcessEnv): State {
  const settings = settingsFromEnv<UnsubscribeSettings>(env, UNSUBSCRIBE_ENV, [
    "contactListName",
    "topicName",
    "keyParameter",
    "optOutTable",
  ]);
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || "";
  return {
    settings,
    region,
    env,
    ses: new SESv2Client({ region, ...client }),
    ssm: new SSMClient({ region, ...client }),
  };
}

/** Forget the loaded configuration, the key and the rate counts (tests change them between cases). */
export function resetForTests(): void {
  state = undefined;
  recent.clear();
}
