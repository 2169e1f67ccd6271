/**
 * What sending costs to orchestrate, per million recipient-steps (emails): the fan-out, Scheduler's invocations, the
 * one sender's executions (sender-definition.ts) and what each execution asks of DynamoDB — the occurrence ledger's
 * claim (PutItem), the campaign-state read before the round of SES calls (a strongly consistent GetItem; one round
 * when nothing is retried) and the record of every entry's outcome (UpdateItem of the same item); with a frequency
 * cap, one admission (UpdateItem) per entry; with the unsubscribe endpoint, one opt-out look-up (BatchGetItem,
 * eventually consistent) per execution.
 *
 * Request units are computed from the items' billed sizes by DynamoDB's rules ("Item sizes and formats", DynamoDB
 * Developer Guide: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * an attribute is the UTF-8 bytes of its name plus its value; a string its UTF-8 bytes, a number 1 byte per two
 * significant digits plus 1; a map or list 3 bytes plus its elements, each element 1 byte more (a map element also
 * its name). The guide states no overhead for a string set: it is counted as the sum of its strings.
 * Pure: no AWS SDK, no I/O.
 */
import { CapPeriod, FrequencyCap } from "../send/frequency-cap";
import {
  LEDGER_KEY,
  LEDGER_TTL_ATTRIBUTE,
  LEDGER_TTL_DAYS,
  OCCURRENCE_ATTRIBUTES,
  occurrenceKey,
  Outcome,
} from "../send/ledger";
import { ArnScope, campaignGroupName, groupSchedulesArn } from "./naming";
import { dynamodbPricing, fanOutCostPerMillionRows, stepFunctionsPricing } from "./quotas";

/**
 * Seconds one sender execution is billed: an assumption, not a measurement (no AWS here). A grouped execution makes
 * its claim, state read, SendBulkEmail of up to 50 entries and record one after another; a per-recipient one makes
 * the same calls in the same order with one entry (its admission Map and opt-out look-up are one call either way),
 * so nothing in the definition shows it shorter: both are billed this long.
 */
export const SENDER_SECONDS = 1;
/** Scheduler's price per invocation after its free tier (about $1 per million). */
export const INVOCATION_PRICE = 1 / 1_000_000;
/** Express bills duration in steps of 100 ms. */
const EXPRESS_BILLING_STEP_SECONDS = 0.1;

/** A DynamoDB attribute value, as the low-level API writes it. */
export type AttributeValue =
  | { S: string }
  | { N: string }
  | { SS: string[] }
  | { BOOL: boolean }
  | { NULL: true }
  | { L: AttributeValue[] }
  | { M: Record<string, AttributeValue> };
export type Item = Record<string, AttributeValue>;

const utf8Bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Significant digits of a number's text: its sign, point and leading and trailing zeros left out. */
function significantDigits(n: string): number {
  return n.replace(/^[-+]/, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "").length;
}

/** The billed bytes of one value (without its attribute's name). */
export function valueBytes(v: AttributeValue): number {
  if ("S" in v) return utf8Bytes(v.S);
  if ("N" in v) return Math.ceil(significantDigits(v.N) / 2) + 1;
  if ("SS" in v) return v.SS.reduce((sum, s) => sum + utf8Bytes(s), 0);
  if ("BOOL" in v || "NULL" in v) return 1;
  if ("L" in v) return 3 + v.L.reduce((sum, e) => sum + 1 + valueBytes(e), 0);
  return 3 + Object.entries(v.M).reduce((sum, [name, e]) => sum + 1 + utf8Bytes(name) + valueBytes(e), 0);
}

/** The billed bytes of an item: every attribute's name and value. */
export function itemBytes(item: Item): number {
  return Object.entries(item).reduce((sum, [name, v]) => sum + utf8Bytes(name) + valueBytes(v), 0);
}

/** Write request units of a write whose item is `bytes` (an update: the larger of before and after). */
export function writeUnits(...bytes: number[]): number {
  return Math.max(1, Math.ceil(Math.max(...bytes) / dynamodbPricing.writeUnitBytes));
}

/** Read request units of reading an item of `bytes` (0: not there, the minimum). */
export function readUnits(bytes: number, consistent: boolean): number {
  return Math.max(1, Math.ceil(bytes / dynamodbPricing.readUnitBytes)) / (consistent ? 1 : 2);
}

/** One invocation of one schedule, as the sender sees it. */
export interface Occurrence {
  scheduleArn: string;
  /** Scheduler's `<aws.scheduler.scheduled-time>`: ISO 8601 to the second, `2026-12-01T14:00:00Z`. */
  scheduledTime: string;
  /** The campaign's tag (email-events.ts campaignTag). */
  campaign: string;
  /** Step Functions' `$states.context.Execution.StartTime`: ISO 8601 with milliseconds, `2026-12-01T14:00:00.210Z`. */
  startTime: string;
  /** `$states.context.Execution.Id`: an EXPRESS execution's ARN (`…:express:<state machine>:<id>:<id>`). */
  executionId: string;
}

/** An EXPRESS execution's ARN as the sender's claim stores it: its length is what the claim's size depends on. */
export function expressExecutionArn(scope: ArnScope, stateMachine: string): string {
  const id = "00000000-0000-0000-0000-000000000000";
  return `arn:${scope.partition}:states:${scope.region}:${scope.accountId}:express:${stateMachine}:${id}:${id}`;
}

/** A schedule's ARN in a campaign's group. */
export function scheduleArn(scope: ArnScope, campaignId: string, scheduleName: string): string {
  return groupSchedulesArn(scope, campaignGroupName(campaignId)).replace(/\*$/, scheduleName);
}

/** The occurrence item the sender's claim puts (sender-claim.ts claimStates). */
export function claimItem(o: Occurrence): Item {
  const expiresAt = Math.floor(Date.parse(o.scheduledTime) / 1000) + LEDGER_TTL_DAYS * 86_400;
  return {
    [LEDGER_KEY]: { S: occurrenceKey(o.scheduleArn, o.scheduledTime) },
    [OCCURRENCE_ATTRIBUTES.campaign]: { S: o.campaign },
    [OCCURRENCE_ATTRIBUTES.claimedAt]: { S: o.startTime },
    [OCCURRENCE_ATTRIBUTES.claimedBy]: { S: o.executionId },
    [LEDGER_TTL_ATTRIBUTE]: { N: String(expiresAt) },
  };
}

export interface EntryOutcome {
  recipient: string;
  outcome: Outcome;
  /** Empty for a sent entry. */
  reason: string;
}

/** The occurrence item once the record has set `outcomes` (sender-settle.ts endStates). */
export function recordItem(o: Occurrence, outcomes: EntryOutcome[]): Item {
  const map: Record<string, AttributeValue> = {};
  for (const e of outcomes) map[e.recipient] = { M: { outcome: { S: e.outcome }, reason: { S: e.reason } } };
  return { ...claimItem(o), [OCCURRENCE_ATTRIBUTES.outcomes]: { M: map } };
}

/** The cap table's period key and expiry of a scheduled time (frequency-cap.ts PERIOD). */
function capPeriod(per: CapPeriod, scheduledTime: string): { key: string; expiresAt: number } {
  const key = scheduledTime.slice(0, per === "day" ? 10 : 7);
  const start = Date.parse(per === "day" ? `${key}T00:00:00Z` : `${key}-01T00:00:00Z`) / 1000;
  return { key, expiresAt: start + (per === "day" ? 2 : 33) * 86_400 };
}

/**
 * The cap's item of `address` after `admitted` admissions in the period (frequency-cap.ts admissionArguments):
 * `sends` and the set of admitted occurrences, each taken as long as this one.
 */
export function capItem(cap: FrequencyCap, address: string, o: Occurrence, admitted: number): Item {
  const period = capPeriod(cap.per, o.scheduledTime);
  return {
    pk: { S: `${address.toLowerCase()}#${period.key}` },
    sends: { N: String(admitted) },
    schedules: { SS: Array.from({ length: admitted }, () => `${o.scheduleArn}@${o.scheduledTime}`) },
    expires_at: { N: String(period.expiresAt) },
  };
}

/** The write units of one entry's admission at its costliest: the cap's last one, the item at its largest. */
export function admissionUnits(cap: FrequencyCap, address: string, o: Occurrence): number {
  const before = cap.max > 1 ? itemBytes(capItem(cap, address, o, cap.max - 1)) : 0;
  return writeUnits(before, itemBytes(capItem(cap, address, o, cap.max)));
}

/** What the stack's sender does besides the ledger: a cap (its table), the opt-out look-up (the unsubscribe endpoint). */
export interface SenderStack {
  cap?: FrequencyCap;
  optOuts: boolean;
}

/** Request units one sender execution takes when every entry is sent in the first round. */
export interface ExecutionUnits {
  claimWru: number;
  recordWru: number;
  stateRru: number;
  capWru: number;
  optOutRru: number;
  /** The occurrence item's bytes once recorded. */
  recordBytes: number;
}

export function executionUnits(
  o: Occurrence,
  entries: { recipient: string; email: string }[],
  stack: SenderStack,
): ExecutionUnits {
  const claim = itemBytes(claimItem(o));
  const record = itemBytes(
    recordItem(
      o,
      entries.map((e) => ({ recipient: e.recipient, outcome: "sent", reason: "" })),
    ),
  );
  const cap = stack.cap;
  // The opt-out look-up asks each distinct address once; an opted-out item is a few dozen bytes, an absent one the minimum.
  const addresses = new Set(entries.map((e) => e.email.toLowerCase())).size;
  return {
    claimWru: writeUnits(claim),
    // An update is billed on the larger of the item before (the claim) and after (with every outcome).
    recordWru: writeUnits(claim, record),
    // The campaign's item is absent (live) or a few dozen bytes: the minimum of a strongly consistent read.
    stateRru: readUnits(0, true),
    capWru: cap ? entries.reduce((sum, e) => sum + admissionUnits(cap, e.email, o), 0) : 0,
    optOutRru: stack.optOuts ? addresses * readUnits(0, false) : 0,
    recordBytes: record,
  };
}

/** The request units of a plan's executions, added up. */
export class UnitTally {
  executions = 0;
  entries = 0;
  claimWru = 0;
  recordWru = 0;
  stateRru = 0;
  capWru = 0;
  optOutRru = 0;
  largestRecordBytes = 0;

  add(u: ExecutionUnits, entries: number): void {
    this.executions++;
    this.entries += entries;
    this.claimWru += u.claimWru;
    this.recordWru += u.recordWru;
    this.stateRru += u.stateRru;
    this.capWru += u.capWru;
    this.optOutRru += u.optOutRru;
    this.largestRecordBytes = Math.max(this.largestRecordBytes, u.recordBytes);
  }
}

/** Dollars of one EXPRESS execution billed `seconds` (rounded up to 100 ms) at one 64 MB chunk. */
export function expressExecutionDollars(seconds: number = SENDER_SECONDS): number {
  const p = stepFunctionsPricing;
  const billed = Math.ceil(seconds / EXPRESS_BILLING_STEP_SECONDS - 1e-9) * EXPRESS_BILLING_STEP_SECONDS;
  return p.expressRequest + billed * p.expressMemoryGb * p.expressGbSecond;
}

/** A plan as the cost sees it: its schedules for its entries, its lines' size and the fan-out's shape. */
export interface PlanShape {
  schedules: number;
  entries: number;
  lineBytes: number;
  batchSize: number;
  innerConcurrency: number;
}

/** Dollars per million recipient-steps, by part. `total` is the target's parts; the cap and opt-outs come apart. */
export interface Orchestration {
  fanOut: number;
  invocations: number;
  sender: number;
  ledgerWrites: number;
  ledgerReads: number;
  total: number;
  /** With a frequency cap: its admissions (one UpdateItem per entry). */
  cap: number;
  /** With the unsubscribe endpoint: the opt-out look-ups (not a part of the target). */
  optOuts: number;
}

/**
 * The orchestration of a plan per million recipient-steps. `sends.senderExecutions`: every schedule starts the sender
 * (the one door; before it, only bulk schedules did); `sends.units`: the executions' DynamoDB units (none before it).
 */
export function orchestrationPerMillion(
  plan: PlanShape,
  sends: { senderExecutions: boolean; units?: UnitTally },
): Orchestration {
  const scale = 1_000_000 / plan.entries;
  const schedules = plan.schedules * scale;
  const fanOut = (fanOutCostPerMillionRows(plan, plan.lineBytes) * schedules) / 1_000_000;
  const invocations = schedules * INVOCATION_PRICE;
  const sender = sends.senderExecutions ? schedules * expressExecutionDollars() : 0;
  const u = sends.units;
  const d = dynamodbPricing;
  // Units scale with the plan's entries (the tally is of the same plan).
  const per = (units: number) => (u ? units * (1_000_000 / u.entries) : 0);
  const ledgerWrites = per(u ? u.claimWru + u.recordWru : 0) * d.writeRequestUnit;
  const ledgerReads = per(u ? u.stateRru : 0) * d.readRequestUnit;
  return {
    fanOut,
    invocations,
    sender,
    ledgerWrites,
    ledgerReads,
    total: fanOut + invocations + sender + ledgerWrites + ledgerReads,
    cap: per(u ? u.capWru : 0) * d.writeRequestUnit,
    optOuts: per(u ? u.optOutRru : 0) * d.readRequestUnit,
  };
}

/** The ledger's dollars (claims, records, state reads) per occurrence and per recipient of a tally. */
export function ledgerDollars(u: UnitTally): { perOccurrence: number; perRecipient: number } {
  const d = dynamodbPricing;
  const total = (u.claimWru + u.recordWru) * d.writeRequestUnit + u.stateRru * d.readRequestUnit;
  return { perOccurrence: total / u.executions, perRecipient: total / u.entries };
}

/**
 * Texts (issue 37): what a million SMS sends cost to orchestrate, beside the carrier's and AWS's message prices (those
 * are per message part and are not orchestration: docs/cost.md states them apart). The parts are the email ones (the
 * fan-out, Scheduler, the one sender, the ledger) with two differences: the sender makes one SendTextMessage call per
 * text (SendBulkEmail takes 50), so its billed duration grows with the texts of an execution; and the SMS
 * configuration set's events are ingested into CloudWatch Logs (the report's source), per text whatever the grouping.
 */
export const SMS_COST_ASSUMPTIONS = {
  /** Seconds one SendTextMessage call adds to an execution. */
  callSeconds: 0.1,
  /** Texts of one execution sent at once (1: one after another). */
  concurrency: 1,
  /** Events the log group receives per text: TEXT_SUCCESSFUL (accepted by the carrier) and TEXT_DELIVERED. */
  eventsPerText: 2,
} as const;

/** CloudWatch Logs ingestion, Standard log class, us-east-1: $0.50 per GB (docs/cost.md says where and when read). */
export const LOGS_INGESTION_PER_GB = 0.5;
/** Bytes CloudWatch Logs counts per event beside its message (PutLogEvents: the message's UTF-8 bytes plus 26). */
export const LOG_EVENT_OVERHEAD_BYTES = 26;
const GB = 1_000_000_000;

/**
 * The bytes of one SMS event record as the configuration set writes it (the End User Messaging SMS user guide's
 * example record, "SMS example log", with sendtime's Context: campaign, step and variant), compact JSON.
 */
export function smsEventBytes(context: { campaign: string; step: string; variant?: string }): number {
  const record = {
    eventType: "TEXT_SUCCESSFUL",
    eventVersion: "1.0",
    eventTimestamp: 1686975103470,
    isFinal: true,
    originationPhoneNumber: "+12065550152",
    destinationPhoneNumber: "+14255550156",
    isInternationalSend: false,
    isoCountryCode: "US",
    mcc: "310",
    mnc: "800",
    messageId: "862a8790-60c0-4430-9b2b-658bdexample",
    messageRequestTimestamp: 1686975103170,
    messageEncoding: "GSM",
    messageType: "PROMOTIONAL",
    messageStatus: "SUCCESSFUL",
    messageStatusDescription: "Message has been accepted by phone carrier",
    context,
    totalMessageParts: 1,
    totalMessagePrice: 0.00581,
    totalCarrierFee: 0.00302,
  };
  return utf8Bytes(JSON.stringify(record));
}

/** Dollars per million texts, by part; `total` is every part, `withoutEventLogs` all but the Logs ingestion. */
export interface SmsOrchestration extends Omit<Orchestration, "cap" | "optOuts"> {
  logsIngestion: number;
  withoutEventLogs: number;
  /** Seconds one execution is assumed billed (before rounding up to 100 ms). */
  executionSeconds: number;
}

/**
 * The orchestration of texts per million: `plan` and `units` as for email (the same ledger items), each execution
 * billed SENDER_SECONDS plus `callSeconds` per round of `concurrency` texts, and `eventsPerText` events of `eventBytes` ingested per text.
 */
export function smsOrchestrationPerMillion(
  plan: PlanShape,
  units: UnitTally,
  o: { eventBytes: number; callSeconds?: number; concurrency?: number; eventsPerText?: number },
): SmsOrchestration {
  const callSeconds = o.callSeconds ?? SMS_COST_ASSUMPTIONS.callSeconds;
  const eventsPerText = o.eventsPerText ?? SMS_COST_ASSUMPTIONS.eventsPerText;
  const email = orchestrationPerMillion(plan, { senderExecutions: true, units });
  const concurrency = o.concurrency ?? SMS_COST_ASSUMPTIONS.concurrency;
  const executionSeconds = SENDER_SECONDS + Math.ceil(plan.entries / plan.schedules / concurrency) * callSeconds;
  const sender = plan.schedules * (1_000_000 / plan.entries) * expressExecutionDollars(executionSeconds);
  const logsIngestion =
    (1_000_000 * eventsPerText * (o.eventBytes + LOG_EVENT_OVERHEAD_BYTES) * LOGS_INGESTION_PER_GB) / GB;
  const withoutEventLogs = email.fanOut + email.invocations + sender + email.ledgerWrites + email.ledgerReads;
  return {
    fanOut: email.fanOut,
    invocations: email.invocations,
    sender,
    ledgerWrites: email.ledgerWrites,
    ledgerReads: email.ledgerReads,
    logsIngestion,
    withoutEventLogs,
    total: withoutEventLogs + logsIngestion,
    executionSeconds,
  };
}
