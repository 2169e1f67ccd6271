/**
 * The stack's configuration (namespace `sendtime:`), typed and validated. A bad value stops `pulumi up` with one
 * line naming the key, the value and what is allowed.
 */
import { JOURNEY_CONFIG_KEYS } from "./core/journeys/journeys-definition";
import { CAP_PERIODS, FrequencyCap } from "./core/send/frequency-cap";
import { Guardrails, parseGuardrails } from "./core/send/guardrails";
import { SES_NAME } from "./core/plan/naming";
import {
  batchSecondsWithOneSlowRow,
  pacedConcurrency,
  pacing,
  scheduler,
  stepFunctions,
  worstCaseRowSeconds,
} from "./core/plan/quotas";
import { isEmailAddress } from "./core/send/email";
import { InputError } from "./core/errors";
import { parseSmsConfig, SmsConfig } from "./core/sms/sms-config";
import { nearest } from "./core/text/nearest";

/** A bad `sendtime:` stack config value: the message names the key and what is allowed. */
export class ConfigError extends InputError {}

export interface StackConfig {
  /** SES identity to send from: a domain (`example.com`) or one address. */
  senderIdentity: string;
  /** FromEmailAddress of every send; must belong to senderIdentity. */
  fromAddress: string;
  /** CreateSchedule quota of the account and Region (requests per second). */
  createScheduleTps: number;
  /** Distributed Map MaxConcurrency: fan-out child executions at once. */
  maxConcurrency: number;
  /** Plan rows per child execution (at most; 256 KB fills first for large rows). */
  batchSize: number;
  /** CreateSchedule calls at once inside one child (inline Map, at most 40). */
  innerConcurrency: number;
  /** The account's schedule quota in the Region: exported for the launcher, which refuses plans above it. */
  maxSchedules: number;
  /** Percentage of plan rows whose batch may fail before the whole fan-out fails. */
  toleratedFailurePercentage: number;
  /** Flexible time window used when a launch does not size its own. */
  defaultWindowMinutes: number;
  /** How long Scheduler keeps retrying a send before dead-lettering it. */
  maxEventAgeSeconds: number;
  /** How many times Scheduler retries a failed send. */
  maxRetryAttempts: number;
  /** Days plans and fan-out results (they hold addresses) are kept in the bucket. */
  recipientRetentionDays: number;
  /** Days the fan-out's logs are kept. */
  logRetentionDays: number;
  /** Where alarms are emailed; none means subscribe to the topic yourself. */
  alarmEmail?: string;
  /** One-click unsubscribe (RFC 8058) through an SES contact list and topic. */
  unsubscribe?: { contactList: string; topic: string };
  /** Customer-managed KMS key for the bucket and the dead-letter queue; none means AWS-managed encryption. */
  kmsKeyArn?: string;
  /** Custom domain for open and click tracking links; none means SES's own tracking domain. */
  trackingDomain?: string;
  /** At most `max` sends per address per UTC `per` across campaigns, checked at send time; none means no cap. */
  frequencyCap?: FrequencyCap;
  /** Pause a campaign on its bounce or complaint rate, and every campaign on the account's; none (`none`): no guardrails. */
  guardrails?: Guardrails;
  /**
   * The folder of templates the stack deploys (one SES template per subfolder), relative to the project; undefined
   * (`none`) deploys none: templates are kept in SES, and the roles may send any of the account's.
   */
  templatesDir?: string;
  /** Text messages (End User Messaging SMS): the pool, its throughput and the SMS resources; none means no SMS. */
  sms?: SmsConfig;
}

/** A value CloudWatch Logs accepts for retention. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

/**
 * Rows per child by default: 400 rows fit the 256 KB batch limit for the plan rows campaigns usually have, and larger
 * rows make smaller batches by bytes (the row sizes and the cost arithmetic: docs/benchmarks.md, "The fan-out").
 */
export const DEFAULT_BATCH_SIZE = 400;

/** Where the stack's templates are unless `sendtime:templatesDir` says otherwise (`none`: no templates deployed). */
export const DEFAULT_TEMPLATES_DIR = "templates";

const DOMAIN =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key\/[0-9a-f-]{36}|alias\/[A-Za-z0-9/_-]+)$/;

/**
 * Reads and validates every key. `get` returns the raw string of `sendtime:<key>` or undefined. `presentKeys`, the
 * keys the stack sets (`namespace:key`), are checked for misspellings: a `sendtime:` key this function never reads
 * is an error naming the closest known key (Pulumi itself would silently ignore it).
 */
export function parseStackConfig(
  read: (key: string) => string | undefined,
  presentKeys: string[] = [],
): { config: StackConfig } {
  const known: string[] = [];
  const get = (key: string) => {
    if (!known.includes(key)) known.push(key);
    return read(key);
  };
  const config = parseKeys(get);
  // Journeys' keys are read and validated by infra/core/journeys/journeys-definition.ts.
  rejectUnknownKeys(presentKeys, [...known, ...JOURNEY_CONFIG_KEYS]);
  return { config };
}

/** The key readers every section uses: each failure is one line naming the key, the value and what is allowed. */
class KeyReader {
  constructor(private readonly get: (key: string) => string | undefined) {}

  fail(key: string, value: string, allowed: string): never {
    throw new ConfigError(`sendtime:${key} = "${value}" is not valid: ${allowed}`);
  }

  required(key: string, example: string): string {
    const v = this.get(key);
    if (v === undefined || v.trim() === "")
      throw new ConfigError(`sendtime:${key} is required (e.g. pulumi config set ${key} ${example})`);
    return v.trim();
  }

  optional(key: string): string | undefined {
    const v = this.get(key);
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  }

  int(key: string, def: number, min: number, max: number): number {
    const raw = this.get(key);
    if (raw === undefined || raw.trim() === "") return def;
    const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!(n >= min && n <= max)) this.fail(key, raw, `a whole number from ${min} to ${max}`);
    return n;
  }
}

function parseKeys(get: (key: string) => string | undefined): StackConfig {
  const r = new KeyReader(get);
  const config = {
    ...parseSender(r),
    ...parseFanOut(r),
    ...parseDelivery(r),
    ...parseOptions(r),
    guardrails: parseGuardrails(r.optional("guardrails")),
    sms: parseSms(r.optional("sms")),
  };
  const templatesDir = r.optional("templatesDir") ?? DEFAULT_TEMPLATES_DIR;
  // Relative to the project, inside it: the same folder on every machine that runs `pulumi up`.
  if (templatesDir.startsWith("/") || /^[A-Za-z]:|\\/.test(templatesDir) || templatesDir.split("/").includes(".."))
    r.fail(
      "templatesDir",
      templatesDir,
      "a folder inside the project, as a relative path with / (templates, email/templates), or none",
    );
  return { ...config, templatesDir: templatesDir === "none" ? undefined : templatesDir };
}

function parseSender(r: KeyReader): Pick<StackConfig, "senderIdentity" | "fromAddress"> {
  const senderIdentity = r.required("senderIdentity", "example.com");
  if (!DOMAIN.test(senderIdentity) && !isEmailAddress(senderIdentity)) {
    r.fail("senderIdentity", senderIdentity, "a domain (example.com) or an email address (news@example.com)");
  }
  const fromAddress = r.required(
    "fromAddress",
    `news@${senderIdentity.includes("@") ? senderIdentity.split("@")[1] : senderIdentity}`,
  );
  if (!isEmailAddress(fromAddress)) r.fail("fromAddress", fromAddress, "an email address such as news@example.com");
  if (!belongsToIdentity(fromAddress, senderIdentity)) {
    r.fail(
      "fromAddress",
      fromAddress,
      `an address of the sender identity "${senderIdentity}" (SES sends only from verified identities)`,
    );
  }
  return { senderIdentity, fromAddress };
}

/** The fan-out's pace: defaults follow the CreateSchedule quota; a batch must finish inside EXPRESS's limit. */
function parseFanOut(
  r: KeyReader,
): Pick<
  StackConfig,
  | "createScheduleTps"
  | "maxConcurrency"
  | "batchSize"
  | "innerConcurrency"
  | "maxSchedules"
  | "toleratedFailurePercentage"
> {
  const createScheduleTps = r.int("createScheduleTps", scheduler.createScheduleTps, 1, 1_000_000);
  const paced = pacedConcurrency(createScheduleTps);
  const innerConcurrency = r.int("innerConcurrency", paced.innerConcurrency, 1, stepFunctions.inlineMapMaxConcurrency);
  const maxConcurrency = r.int("maxConcurrency", paced.maxConcurrency, 1, stepFunctions.distributedMapMaxConcurrency);
  const batchSize = r.int("batchSize", DEFAULT_BATCH_SIZE, 1, 10_000);
  const batchSeconds = batchSecondsWithOneSlowRow(batchSize, innerConcurrency);
  if (batchSeconds > stepFunctions.expressMaxSeconds) {
    const rounds = Math.floor((stepFunctions.expressMaxSeconds - worstCaseRowSeconds()) / pacing.callSeconds);
    r.fail(
      "batchSize",
      String(batchSize),
      `with innerConcurrency ${innerConcurrency} a batch takes ${Math.round(batchSeconds)} s at ${pacing.callSeconds} s a call with one row retried to its limit (${worstCaseRowSeconds()} s), over the ${stepFunctions.expressMaxSeconds} s EXPRESS limit; use at most ${rounds * innerConcurrency}`,
    );
  }
  const maxSchedules = r.int("maxSchedules", scheduler.maxSchedules, 1, 1_000_000_000);
  const toleratedFailurePercentage = r.int("toleratedFailurePercentage", 5, 0, 100);
  return { createScheduleTps, maxConcurrency, batchSize, innerConcurrency, maxSchedules, toleratedFailurePercentage };
}

/** Sending windows, Scheduler's retries and how long data and logs are kept. */
function parseDelivery(
  r: KeyReader,
): Pick<
  StackConfig,
  "defaultWindowMinutes" | "maxEventAgeSeconds" | "maxRetryAttempts" | "recipientRetentionDays" | "logRetentionDays"
> {
  const { min: wMin, max: wMax } = scheduler.flexibleWindowMinutes;
  const defaultWindowMinutes = r.int("defaultWindowMinutes", 15, wMin, wMax);
  const maxEventAgeSeconds = r.int(
    "maxEventAgeSeconds",
    7_200,
    scheduler.maxEventAgeSeconds.min,
    scheduler.maxEventAgeSeconds.max,
  );
  const maxRetryAttempts = r.int("maxRetryAttempts", 5, scheduler.maxRetryAttempts.min, scheduler.maxRetryAttempts.max);
  const recipientRetentionDays = r.int("recipientRetentionDays", 30, 1, 3_650);
  const logRetentionDays = r.int("logRetentionDays", 30, 1, 3_653);
  if (!LOG_RETENTION_DAYS.includes(logRetentionDays)) {
    r.fail(
      "logRetentionDays",
      String(logRetentionDays),
      `one of CloudWatch Logs' values: ${LOG_RETENTION_DAYS.join(", ")}`,
    );
  }
  return { defaultWindowMinutes, maxEventAgeSeconds, maxRetryAttempts, recipientRetentionDays, logRetentionDays };
}

/** The optional features: alarm email, one-click unsubscribe, a KMS key, a tracking domain, a frequency cap. */
function parseOptions(
  r: KeyReader,
): Pick<StackConfig, "alarmEmail" | "unsubscribe" | "kmsKeyArn" | "trackingDomain" | "frequencyCap"> {
  const alarmEmail = r.optional("alarmEmail");
  if (alarmEmail !== undefined && !isEmailAddress(alarmEmail)) r.fail("alarmEmail", alarmEmail, "an email address");

  const contactList = r.optional("unsubscribeContactList");
  const topic = r.optional("unsubscribeTopic");
  if ((contactList === undefined) !== (topic === undefined)) {
    const [set, missing] =
      contactList === undefined
        ? ["unsubscribeTopic", "unsubscribeContactList"]
        : ["unsubscribeContactList", "unsubscribeTopic"];
    throw new ConfigError(`sendtime:${set} is set but sendtime:${missing} is not: one-click unsubscribe needs both`);
  }
  for (const [key, value] of [
    ["unsubscribeContactList", contactList],
    ["unsubscribeTopic", topic],
  ] as const) {
    if (value !== undefined && !SES_NAME.test(value)) r.fail(key, value, "1–64 characters of A-Z a-z 0-9 _ -");
  }

  const kmsKeyArn = r.optional("kmsKeyArn");
  if (kmsKeyArn !== undefined && !KMS_KEY_ARN.test(kmsKeyArn)) {
    r.fail("kmsKeyArn", kmsKeyArn, "a KMS key or alias ARN (arn:aws:kms:<region>:<account>:key/<id>)");
  }

  const trackingDomain = r.optional("trackingDomain");
  if (trackingDomain !== undefined && !DOMAIN.test(trackingDomain)) {
    r.fail("trackingDomain", trackingDomain, "a host name such as track.example.com (no scheme, path or port)");
  }

  const frequencyCap = parseFrequencyCap(r.optional("frequencyCap"), (key, value, allowed) =>
    r.fail(key, value, allowed),
  );
  return {
    alarmEmail,
    unsubscribe: contactList && topic ? { contactList, topic } : undefined,
    kmsKeyArn,
    trackingDomain,
    frequencyCap,
  };
}

/** `sendtime:sms`, its problems as the other keys' (a ConfigError: one line, no stack trace). */
function parseSms(raw: string | undefined): SmsConfig | undefined {
  try {
    return parseSmsConfig(raw);
  } catch (e) {
    if (e instanceof InputError) throw new ConfigError(e.message);
    throw e;
  }
}

/** `{"max": 2, "per": "day"}`: max a whole number 1–1000, per one of CAP_PERIODS, nothing else. */
function parseFrequencyCap(
  raw: string | undefined,
  fail: (key: string, value: string, allowed: string) => never,
): FrequencyCap | undefined {
  if (raw === undefined) return undefined;
  const allowed = `JSON {"max": N, "per": P} with N a whole number from 1 to ${MAX_CAP} and P one of ${CAP_PERIODS.join(", ")} (UTC periods)`;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return fail("frequencyCap", raw, allowed);
  }
  const o = v as Record<string, unknown>;
  const ok =
    o !== null &&
    typeof o === "object" &&
    !Array.isArray(o) &&
    Object.keys(o).every((k) => k === "max" || k === "per") &&
    Number.isInteger(o.max) &&
    (o.max as number) >= 1 &&
    (o.max as number) <= MAX_CAP &&
    CAP_PERIODS.includes(o.per as FrequencyCap["per"]);
  if (!ok) return fail("frequencyCap", raw, allowed);
  return { max: o.max as number, per: o.per as FrequencyCap["per"] };
}

/** Sends per address and period; more is no cap worth a DynamoDB write per send. */
const MAX_CAP = 1000;

const NAMESPACE = "sendtime:";

function rejectUnknownKeys(presentKeys: string[], known: string[]): void {
  for (const full of presentKeys) {
    if (!full.startsWith(NAMESPACE)) continue;
    const key = full.slice(NAMESPACE.length);
    if (known.includes(key)) continue;
    const closest = nearest(key, known);
    const hint = closest ? `: did you mean ${NAMESPACE}${closest}?` : ` (settings: ${known.join(", ")})`;
    throw new ConfigError(`${full} is not a sendtime setting${hint}`);
  }
}

/** SES sends from an address of a verified domain (or its subdomains) or from the verified address itself. */
function belongsToIdentity(address: string, identity: string): boolean {
  if (identity.includes("@")) return address.toLowerCase() === identity.toLowerCase();
  const domain = address.split("@")[1].toLowerCase();
  const id = identity.toLowerCase();
  return domain === id || domain.endsWith("." + id);
}
