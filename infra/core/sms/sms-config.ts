/**
 * The stack's SMS settings (`sendtime:sms`), what the stack makes of them and the sending numbers' throughput.
 * Pure: the config's checks, the names, the event types and the permission statements; no Pulumi, no SDK.
 */
import { jsonObjectSetting, settingFailure } from "../config/json-setting";
import { DEFAULT_SMS_MESSAGE_TYPE, SmsMessageType } from "../send/sms-input";

export interface SmsConfig {
  /** The pool texts are sent from (its numbers and registrations are made outside the stack). */
  poolArn: string;
  /** An SMS configuration set of the account; none: the stack creates `sendtime-<stack>-sms`. */
  configurationSetName?: string;
  /** An opt-out list of the account; none: the stack creates `sendtime-<stack>-sms`. */
  optOutListName?: string;
  /** Message parts per second the pool sustains (its numbers' throughput added up). */
  mps: number;
  /** The message type of every text unless a launch says otherwise. */
  messageType: SmsMessageType;
}

/**
 * Message parts per second of one number, by type, as AWS End User Messaging SMS states them for the US: a toll-free
 * number 3, a 10DLC number 1 by default (more with a higher registration score), a short code 100.
 */
export const SMS_MPS = { tollFree: 3, tenDlc: 1, shortCode: 100 } as const;

/** The pace a launch assumes when neither `--sms-mps` nor the stack's `smsMps` says: one 10DLC number. */
export const DEFAULT_SMS_MPS = SMS_MPS.tenDlc;

/** At most this many parts per second: more than any pool of short codes sends. */
export const MAX_SMS_MPS = 10_000;

/**
 * The event types the configuration set logs: the funnel's (sent, delivered, failed by reason). Queued and pending
 * are in-between states with no outcome (logged, they would double the log's volume). A send to an opted-out number
 * is refused by SendTextMessage itself (ConflictException, DESTINATION_PHONE_NUMBER_OPTED_OUT): the sender records it
 * as `skipped: opted-out`; no event type stands for it.
 */
export const SMS_FUNNEL_EVENT_TYPES = [
  "TEXT_SENT",
  "TEXT_SUCCESSFUL",
  "TEXT_DELIVERED",
  "TEXT_BLOCKED",
  "TEXT_CARRIER_BLOCKED",
  "TEXT_CARRIER_UNREACHABLE",
  "TEXT_INVALID",
  "TEXT_INVALID_MESSAGE",
  "TEXT_PROTECT_BLOCKED",
  "TEXT_SPAM",
  "TEXT_TTL_EXPIRED",
  "TEXT_UNKNOWN",
  "TEXT_UNREACHABLE",
] as const;

/** The sms-voice service, which assumes the event destination's role. */
export const SMS_VOICE_SERVICE = "sms-voice.amazonaws.com";

/** The one action the sender's role holds on the pool and the configuration set. */
export const SMS_SEND_ACTION = "sms-voice:SendTextMessage";

/** What the event destination's role may do on its log group's streams (AWS's "IAM policy for Amazon CloudWatch"). */
export const SMS_EVENT_LOG_ACTIONS = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"] as const;

const POOL_ARN = /^arn:aws[a-z-]*:sms-voice:[a-z0-9-]+:\d{12}:pool\/[A-Za-z0-9_-]+$/;
/** Names of configuration sets and opt-out lists: 1–64 of A-Z a-z 0-9 _ - (the API's pattern). */
const SMS_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const KEYS = ["poolArn", "configurationSetName", "optOutListName", "mps", "messageType"];
const KEY = "sendtime:sms";
const ALLOWED = `JSON {"poolArn": "arn:aws:sms-voice:<region>:<account>:pool/<id>", "mps": N, "configurationSetName"?: S, "optOutListName"?: S, "messageType"?: "PROMOTIONAL"|"TRANSACTIONAL"} (N message parts per second, 1 to ${MAX_SMS_MPS}: 1 a 10DLC number, 3 a toll-free number, 100 a short code; S 1–64 of A-Z a-z 0-9 _ -)`;

/** `sendtime:sms`: absent → no SMS; else an object of the keys above, each checked. One line for a bad one. */
export function parseSmsConfig(raw: string | undefined): SmsConfig | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const fail = settingFailure(KEY, raw, ALLOWED);
  const o = jsonObjectSetting(raw, KEYS, fail);
  if (typeof o.poolArn !== "string" || !POOL_ARN.test(o.poolArn))
    fail("poolArn must be a pool's ARN, arn:aws:sms-voice:<region>:<account>:pool/<id>");
  // A number, or a whole number written as a string (YAML's "3"), never 0 or a fraction.
  const mps = typeof o.mps === "string" && /^\d+$/.test(o.mps) ? Number(o.mps) : o.mps;
  if (!Number.isInteger(mps) || (mps as number) < 1 || (mps as number) > MAX_SMS_MPS)
    fail(`mps must be a whole number of message parts per second from 1 to ${MAX_SMS_MPS}`);
  for (const k of ["configurationSetName", "optOutListName"] as const)
    if (o[k] !== undefined && (typeof o[k] !== "string" || !SMS_NAME.test(o[k] as string)))
      fail(`${k} must be 1–64 characters of A-Z a-z 0-9 _ -`);
  const messageType = o.messageType ?? DEFAULT_SMS_MESSAGE_TYPE;
  if (messageType !== "PROMOTIONAL" && messageType !== "TRANSACTIONAL")
    fail("messageType must be PROMOTIONAL or TRANSACTIONAL");
  return {
    poolArn: o.poolArn as string,
    ...(o.configurationSetName !== undefined ? { configurationSetName: o.configurationSetName as string } : {}),
    ...(o.optOutListName !== undefined ? { optOutListName: o.optOutListName as string } : {}),
    mps: mps as number,
    messageType: messageType as SmsMessageType,
  };
}

/** The name of the configuration set and of the opt-out list the stack creates when the config names none. */
export const smsResourceName = (stack: string) => `sendtime-${stack}-sms`;

/** The log group SMS events are written to. */
export const smsEventLogGroupName = (stack: string) => `/sendtime/${stack}/sms-events`;

/** The ARN of an SMS configuration set (the sender's permission names it; the API takes its name). */
export function smsConfigurationSetArn(s: { partition: string; region: string; accountId: string }, name: string) {
  return `arn:${s.partition}:sms-voice:${s.region}:${s.accountId}:configuration-set/${name}`;
}

/** The sender's one SMS statement: SendTextMessage on the pool and the configuration set, nothing else. */
export function smsSendStatement(g: { poolArn: string; configurationSetArn: string }) {
  return {
    Sid: "SendText",
    Effect: "Allow" as const,
    Action: SMS_SEND_ACTION,
    Resource: [g.poolArn, g.configurationSetArn],
  };
}
