/**
 * Reading a failed send back from the send dead-letter queue as a pointer, finding what it points to in the campaign's
 * plan, deciding from the ledger what may be sent again, and naming its redrive. Pure: no AWS SDK.
 *
 * A dead letter is a pointer, never a request (infra/core/send/ledger.ts DeadLetterPointer): redrive rebuilds the request
 * from the plan the launcher wrote, so what a message says beyond which send failed is never sent. Two writers share
 * the queue (deadLetterQueueUrl):
 * - the one sender, one message per failed entry: the pointer as its body, no message attributes;
 * - EventBridge Scheduler, when it could not start the sender: the body is the schedule's Target.Input (the sender
 *   input) and attributes name the schedule (SCHEDULE_ARN, SCHEDULED_TIME, TARGET_ARN, ERROR_CODE, ERROR_MESSAGE,
 *   IS_PAYLOAD_TRUNCATED, …; https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html).
 *   Only the schedule, its time and the recipient ids are read from it.
 * Anything else (an older `{input, error}` dead letter, a raw SES request, a body that is not JSON) is not a pointer.
 */
import { createHash } from "crypto";
import {
  ArnScope,
  CAMPAIGN_PREFIX,
  campaignGroupName,
  campaignIdProblem,
  CLEANUP_SCHEDULE_NAME,
  groupSchedulesArn,
  isValidSchedulerName,
  scheduleName,
} from "../../../infra/core/plan/naming";
import { scheduler, ses } from "../../../infra/core/plan/quotas";
import { endOfQuietWindow, REDRIVE_DELAY_MS } from "../../../infra/core/timing/promises";
import { DeadLetterPointer, Outcome, OUTCOMES, scheduleOfArn } from "../../../infra/core/send/ledger";
import { BulkPlanRow, isBulkPlanValue } from "../../../infra/core/plan/bulk-plan-row";
import * as smsBulk from "../../../infra/core/plan/sms-bulk-plan-row";
import { isSmsPlanRow, parsePlanRow, PlanRow } from "../../../infra/core/plan/plan-row";
import { SmsMessageType, smsSenderInput, SmsSenderInput } from "../../../infra/core/send/sms-input";
import { recipientSenderInput, senderInput, SenderInput } from "../../../infra/core/send/sender-input";
import { QuietTime } from "../../../infra/core/timing/quiet-time";
import { FindingsError } from "../../../infra/core/errors";

/** One SQS message as ReceiveMessage returns it (the fields read here). */
export interface DeadLetterMessage {
  MessageId?: string;
  ReceiptHandle?: string;
  Body?: string;
  MessageAttributes?: Record<string, { StringValue?: string; DataType?: string } | undefined>;
}

/** Where the stack is: its account's ARNs and the one sender every schedule targets (output senderStateMachineArn). */
export interface StackScope extends ArnScope {
  senderArn: string;
}

/** The scope of a stack from its sender's ARN (`arn:<partition>:states:<region>:<account>:stateMachine:<name>`). */
export function stackScopeOf(senderArn: string): StackScope | undefined {
  const m = /^arn:([a-z-]+):states:([a-z0-9-]+):(\d{12}):stateMachine:[0-9A-Za-z_-]{1,80}$/.exec(senderArn);
  return m ? { partition: m[1], region: m[2], accountId: m[3], senderArn } : undefined;
}

/** The ARN of schedule `name` in `group` (what Scheduler names the ledger's occurrences by). */
export const scheduleArn = (s: ArnScope, group: string, name: string) =>
  groupSchedulesArn(s, group).replace(/\*$/, name);

/** What a redrive takes from one dead letter: which send failed, never what it sent. */
export interface FailedSend {
  campaignId: string;
  group: string;
  /** The failed schedule's name (a plan row's, or a redrive's of one). */
  original: string;
  scheduleArn: string;
  scheduledTime: string;
  /** The recipient ids of the failed entries. */
  recipients: string[];
  /** Who wrote it: the sender (a pointer) or Scheduler (it could not start the sender). */
  source: "sender" | "scheduler";
  /** Why it failed, as far as the message says (the pointer's outcome and reason, Scheduler's error). */
  error: string;
}

/** A dead letter that cannot be redriven, and why (it is left in the queue). */
export interface Unreadable {
  campaignId?: string;
  reason: string;
}

const POINTER_FIELDS = ["campaign", "schedule_name", "scheduled_time", "recipients", "outcome", "reason"] as const;
const POINTER_OUTCOMES: readonly string[] = OUTCOMES.filter((o) => o !== "sent");

/** Reads one dead letter as a pointer, or says why it is not one. */
export function readDeadLetter(m: DeadLetterMessage, scope: StackScope): FailedSend | Unreadable {
  let body: unknown;
  try {
    body = JSON.parse(m.Body ?? "");
  } catch {
    return { reason: "the body is not JSON: not a dead-letter pointer of the sender nor Scheduler's dead letter" };
  }
  if (m.MessageAttributes?.SCHEDULE_ARN?.StringValue !== undefined) return fromScheduler(m, body, scope);
  return fromSender(body, scope);
}

/** The sender's pointer: exactly the pointer's fields, each of its type (anything more is not a pointer). */
function fromSender(body: unknown, scope: StackScope): FailedSend | Unreadable {
  if (!isObject(body)) return { reason: "the body is not a JSON object: not a dead-letter pointer" };
  const p = body as Partial<Record<keyof DeadLetterPointer, unknown>>;
  const campaignId = typeof p.campaign === "string" && !campaignIdProblem(p.campaign) ? p.campaign : undefined;
  const extra = Object.keys(body).filter((k) => !(POINTER_FIELDS as readonly string[]).includes(k));
  const shape = `a pointer is {${POINTER_FIELDS.join(", ")}} (infra/core/send/ledger.ts)`;
  if (extra.length)
    return {
      campaignId,
      reason: `not a dead-letter pointer: it carries ${extra.join(", ")}, which a pointer does not (an older dead letter or a request?); ${shape}`,
    };
  if (campaignId === undefined) return { reason: `not a dead-letter pointer: no valid campaign id; ${shape}` };
  const problem =
    scheduleProblem(p.schedule_name) ??
    timeProblem(p.scheduled_time) ??
    recipientsProblem(p.recipients) ??
    (typeof p.outcome === "string" && POINTER_OUTCOMES.includes(p.outcome)
      ? typeof p.reason === "string"
        ? undefined
        : "no reason"
      : `outcome ${JSON.stringify(p.outcome)} is not one of ${POINTER_OUTCOMES.join(", ")}`);
  if (problem) return { campaignId, reason: `not a dead-letter pointer: ${problem}; ${shape}` };
  const group = campaignGroupName(campaignId);
  const name = p.schedule_name as string;
  return {
    campaignId,
    group,
    original: name,
    scheduleArn: scheduleArn(scope, group, name),
    scheduledTime: p.scheduled_time as string,
    recipients: p.recipients as string[],
    source: "sender",
    error: [p.outcome, p.reason].filter(Boolean).join(": "),
  };
}

/** Scheduler's dead letter of a schedule whose sender it could not start: a pointer made of its attributes and ids. */
function fromScheduler(m: DeadLetterMessage, body: unknown, scope: StackScope): FailedSend | Unreadable {
  const attribute = (name: string) => m.MessageAttributes?.[name]?.StringValue;
  const arn = attribute("SCHEDULE_ARN")!;
  const schedule = scheduleOfArn(arn);
  const campaignId = schedule?.group.startsWith(CAMPAIGN_PREFIX)
    ? schedule.group.slice(CAMPAIGN_PREFIX.length)
    : undefined;
  if (!schedule || campaignId === undefined || campaignIdProblem(campaignId))
    return {
      reason: `schedule ${arn}: not a schedule of a campaign's group (arn:…:schedule/${CAMPAIGN_PREFIX}<id>/<name>)`,
    };
  const problem =
    (arn !== scheduleArn(scope, schedule.group, schedule.name)
      ? `not a schedule of this stack's account and Region (${scope.accountId}, ${scope.region})`
      : undefined) ??
    (schedule.name === CLEANUP_SCHEDULE_NAME
      ? "the campaign's housekeeping (it deletes the group), not a send"
      : undefined) ??
    (attribute("TARGET_ARN") !== scope.senderArn
      ? `target ${attribute("TARGET_ARN") ?? "(none)"} is not the stack's sender (${scope.senderArn}): an older schedule's dead letter, not redriven`
      : undefined) ??
    (attribute("IS_PAYLOAD_TRUNCATED") === "true"
      ? "Scheduler truncated the message's body (IS_PAYLOAD_TRUNCATED): its recipient ids cannot be read"
      : undefined) ??
    scheduleProblem(schedule.name) ??
    timeProblem(attribute("SCHEDULED_TIME"), "SCHEDULED_TIME attribute") ??
    recipientsProblem(isObject(body) ? body.recipients : undefined, "the sender input's recipients");
  if (problem) return { campaignId, reason: `${arn}: ${problem}` };
  return {
    campaignId,
    group: schedule.group,
    original: schedule.name,
    scheduleArn: arn,
    scheduledTime: attribute("SCHEDULED_TIME")!,
    recipients: (body as { recipients: string[] }).recipients,
    source: "scheduler",
    error: [attribute("ERROR_CODE"), attribute("ERROR_MESSAGE")].filter(Boolean).join(": ") || "unknown error",
  };
}

function scheduleProblem(name: unknown): string | undefined {
  if (typeof name !== "string" || !isValidSchedulerName(name))
    return `schedule_name ${JSON.stringify(name)} is not a schedule name`;
  if (name === CLEANUP_SCHEDULE_NAME) return "the campaign's housekeeping schedule, not a send";
  return undefined;
}

/**
 * Scheduler's `<aws.scheduler.scheduled-time>`, to the second in UTC (`2026-12-01T14:00:00Z`): the one spelling the
 * sender claims an occurrence under, so another spelling of the same instant cannot name an occurrence the ledger lacks.
 */
const SCHEDULED_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function timeProblem(time: unknown, what = "scheduled_time"): string | undefined {
  return typeof time === "string" && SCHEDULED_TIME.test(time) && !Number.isNaN(Date.parse(time))
    ? undefined
    : `${what} ${JSON.stringify(time)} is not a scheduled time as Scheduler writes it (YYYY-MM-DDTHH:MM:SSZ)`;
}

function recipientsProblem(ids: unknown, what = "recipients"): string | undefined {
  const ok =
    Array.isArray(ids) &&
    ids.length >= 1 &&
    ids.length <= ses.maxBulkEntries &&
    ids.every((r) => typeof r === "string" && r !== "") &&
    new Set(ids).size === ids.length;
  return ok ? undefined : `${what} must be 1 to ${ses.maxBulkEntries} distinct recipient ids`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The plan row a failed send points to: a recipient's row or a bulk line, where it was read, and its launch's. */
export type FoundRow<L> = (
  { kind: "bulk"; row: BulkPlanRow | smsBulk.SmsBulkPlanRow } | { kind: "recipient"; row: PlanRow }
) & {
  where: string;
  launch: L;
};

/**
 * Finds the plan row of each failed send among plan lines offered one at a time (a plan is streamed, never held).
 * A send points to a row when its schedule is the row's, or a redrive of it (`<row>-r<N>`), or — one entry of a bulk
 * line — a redrive named after that entry's recipient-step. Every recipient of the send must be in that row.
 * The first row found wins: offer the newest launch's plan first.
 */
export class PlanSearch<L> {
  private readonly byRecipient = new Map<string, FailedSend[]>();
  private readonly byName = new Map<string, FailedSend[]>();
  private readonly found = new Map<FailedSend, FoundRow<L>>();
  private readonly named = new Map<FailedSend, string>();

  constructor(readonly sends: readonly FailedSend[]) {
    for (const s of sends) {
      for (const r of s.recipients) push(this.byRecipient, r, s);
      push(this.byName, s.original.replace(REDRIVE_SUFFIX, ""), s);
    }
  }

  /** Sends whose row is not found yet. */
  get pending(): number {
    return this.sends.length - this.found.size;
  }

  /** One plan line (`where`: the object and line, for messages); a FindingsError when it is not a plan line. */
  offer(line: string, where: string, launch: L): void {
    if (line === "") return;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(line);
    } catch {
      throw new FindingsError(`${where}: not a plan line (not JSON)`);
    }
    const bulk = isBulkPlanValue(value);
    const name = value?.schedule_name;
    const ids = bulk
      ? Array.isArray(value.entries)
        ? value.entries.map((e) => (e as { recipient_id?: unknown })?.recipient_id)
        : []
      : [value?.recipient_id];
    if (typeof name !== "string" || !Number.isInteger(value.step) || !ids.every((id) => typeof id === "string"))
      throw new FindingsError(`${where}: not a plan line (needs schedule_name, step and recipient ids)`);
    for (const s of this.byName.get(name) ?? []) if (!this.named.has(s)) this.named.set(s, where);
    for (const id of ids as string[])
      for (const s of this.byRecipient.get(id) ?? [])
        if (!this.found.has(s) && pointsTo(s, name, value.step as number, id, bulk))
          this.found.set(s, this.row(line, value, where, launch, bulk));
  }

  /** The send's row, or why it has none (it is refused: a send not in the plan is never sent). */
  result(s: FailedSend, searched: string): FoundRow<L> | { reason: string } {
    const f = this.found.get(s);
    if (!f) {
      const where = this.named.get(s);
      return {
        reason: where
          ? `refused: ${s.original}'s plan row (${where}) holds none of the recipients ${s.recipients.join(", ")}`
          : `refused: no schedule ${s.original} (nor one it redrives) holding ${s.recipients.join(", ")} is in the campaign's plan (${searched})`,
      };
    }
    const ids = new Set(f.kind === "bulk" ? f.row.entries.map((e) => e.recipient_id) : [f.row.recipient_id]);
    const missing = s.recipients.filter((r) => !ids.has(r));
    if (missing.length)
      return {
        reason: `refused: recipients ${missing.join(", ")} are not in plan row ${f.row.schedule_name} (${f.where})`,
      };
    // One entry per pointer keeps each recipient's redrive one schedule (its name and Description): two pointers of
    // one occurrence naming overlapping sets would otherwise each get one, and a recipient in both two mails.
    if (s.source === "sender" && s.recipients.length > 1)
      return {
        reason: `refused: the sender writes one dead letter per failed entry; this one names ${s.recipients.length} recipients`,
      };
    return f;
  }

  private row(line: string, value: unknown, where: string, launch: L, bulk: boolean): FoundRow<L> {
    try {
      return bulk
        ? { kind: "bulk", row: smsBulk.parseAnyBulkPlanRow(line, value), where, launch }
        : { kind: "recipient", row: parsePlanRow(line), where, launch };
    } catch (e) {
      throw new FindingsError(`${where}: ${(e as Error).message}`);
    }
  }
}

const REDRIVE_SUFFIX = /-r(\d+)$/;

function push<K, V>(m: Map<K, V[]>, k: K, v: V) {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** Whether failed send `s` is of plan row `name` (step `step`) holding recipient `id`: the row's schedule or a redrive. */
function pointsTo(s: FailedSend, name: string, step: number, id: string, bulk: boolean): boolean {
  if (s.original === name) return true;
  const n = Number(REDRIVE_SUFFIX.exec(s.original)?.[1]);
  if (!(n >= 1 && n <= MAX_REDRIVE_GENERATIONS)) return false;
  if (redriveName(name, n) === s.original) return true;
  return bulk && s.recipients.length === 1 && redriveName(scheduleName(id, step), n) === s.original;
}

/** An entry's outcome as the ledger's occurrence item records it (`outcomes`: recipient id → {outcome, reason}). */
export interface RecordedOutcome {
  outcome?: string;
  reason?: string;
}

/** One recipient of a failed send, with what the ledger says of it. */
export interface RecipientOutcome {
  recipient: string;
  outcome: Outcome;
  reason: string;
}

/** Which recipients of a failed send may be sent again, from the ledger's outcomes (undefined: no occurrence item). */
export interface ResendDecision {
  resend: RecipientOutcome[];
  /** Sent, or skipped for good (opted out, capped, cancelled): never sent again. */
  settled: RecipientOutcome[];
  /** SES may have sent them: sent again only with --resend-unknown (then in `resend`). */
  unknown: RecipientOutcome[];
}

/**
 * The ledger decides, never the message: `not-sent` and `skipped` because the campaign was paused are sent again (a
 * send a pause held, as its missed-time policy says: paused-sends.ts), `unknown` only when asked (a recipient may get it twice), `sent` and every other skip never. A recipient the ledger
 * has no outcome for (no occurrence item: the sender may still have run) counts as unknown. Scheduler's dead letter of
 * an occurrence the sender did run (the ledger has it) re-sends only the entries with no outcome: the sender's own
 * dead letters point to the others that failed.
 */
export function decideResends(
  s: Pick<FailedSend, "recipients" | "source">,
  outcomes: ReadonlyMap<string, RecordedOutcome> | undefined,
  resendUnknown: boolean,
): ResendDecision {
  const d: ResendDecision = { resend: [], settled: [], unknown: [] };
  const unknown = (o: RecipientOutcome) => (resendUnknown ? d.resend : d.unknown).push(o);
  for (const recipient of s.recipients) {
    const o = outcomes?.get(recipient);
    const outcome = (OUTCOMES as readonly string[]).includes(o?.outcome ?? "") ? (o!.outcome as Outcome) : undefined;
    const reason = o?.reason ?? "";
    if (o === undefined) unknown({ recipient, outcome: "unknown", reason: "no outcome recorded" });
    else if (s.source === "scheduler")
      d.settled.push({
        recipient,
        outcome: outcome ?? "unknown",
        reason: "the sender ran it: its own dead letter covers it",
      });
    else if (outcome === undefined)
      unknown({
        recipient,
        outcome: "unknown",
        reason: `outcome ${JSON.stringify(o.outcome)} is not one of ${OUTCOMES.join(", ")}`,
      });
    else if (outcome === "not-sent" || (outcome === "skipped" && reason === "paused"))
      d.resend.push({ recipient, outcome, reason });
    else if (outcome === "unknown") unknown({ recipient, outcome, reason });
    else d.settled.push({ recipient, outcome, reason });
  }
  return d;
}

/** What every redriven schedule's sender input carries from the stack (the fan-out's parameters of the same name). */
export interface SenderFields {
  fromAddress: string;
  configurationSetName: string;
  listManagement?: { contactListName: string; topicName: string };
  /** A text's MessageType (the stack's smsMessageType), PROMOTIONAL when not given. */
  smsMessageType?: SmsMessageType;
}

/**
 * The sender input of a redrive of `recipients` of `found`: what the fan-out builds for that plan row
 * (sender-input.ts), a bulk line's restricted to those entries in the line's order. Opt-outs and the cap are not
 * checked here: the sender applies both to every entry when it sends.
 */
export function redriveInput<L>(
  t: SenderFields,
  campaignId: string,
  found: FoundRow<L>,
  recipients: string[],
): SenderInput | SmsSenderInput {
  // A text's row: the request the fan-out builds for it (sms-input.ts), its body and legal window as planned.
  if (found.kind === "recipient" && isSmsPlanRow(found.row))
    return smsSenderInput(campaignId, found.row, [found.row], t.smsMessageType);
  if (found.kind === "recipient") return recipientSenderInput(t, campaignId, found.row);
  const keep = new Set(recipients);
  // A bulk line of texts (sms-bulk-plan-row.ts): the fan-out's SMS input of the entries redriven, in the line's order.
  const kept = found.row.entries.filter((e) => keep.has(e.recipient_id));
  if (smsBulk.isSmsBulkPlanRow(found.row))
    return smsSenderInput(campaignId, found.row, kept as smsBulk.SmsBulkEntry[], t.smsMessageType);
  return senderInput(t, campaignId, { ...found.row, entries: kept as BulkPlanRow["entries"] });
}

/**
 * The name a redrive counts `-r<N>` on from: the plan row's, except for one entry of a bulk line, whose up to 50
 * entries cannot share one name: the recipient-step's own (`<id>-<step>`, naming.ts scheduleName).
 */
export function redriveBase<L>(s: FailedSend, found: FoundRow<L>): string {
  return found.kind === "bulk" && s.recipients.length === 1
    ? scheduleName(s.recipients[0], found.row.step)
    : found.row.schedule_name;
}

/**
 * Which send a redrive re-sends, the same for every copy of the message: `<schedule ARN> @ <scheduled time>`, and for
 * part of a bulk line which entries (`entry <recipient-step>`, or `entries <n> <hash of the ids>`).
 */
export function redriveIdentity<L>(s: FailedSend, found: FoundRow<L>): string {
  const occurrence = `${s.scheduleArn} @ ${s.scheduledTime}`;
  if (found.kind === "recipient" || s.recipients.length === found.row.entries.length) return occurrence;
  if (s.recipients.length === 1) return `${occurrence} entry ${scheduleName(s.recipients[0], found.row.step)}`;
  const hash = createHash("sha256")
    .update([...s.recipients].sort().join("\n"), "utf8")
    .digest("hex")
    .slice(0, 16);
  return `${occurrence} entries ${s.recipients.length} ${hash}`;
}

/** How many `-r<N>` names a redrive tries for one send before it gives up (each taken by another send). */
export const MAX_REDRIVE_GENERATIONS = 20;

/**
 * The N-th candidate name of a send's redrive: `<original>-r<N>`, where `<original>` is the failed schedule's name
 * without its own `-r<M>` (a redrive of a redrive counts on: a1-1-r1 fails, a1-1-r2 follows). A name over 64
 * characters keeps its start and a hash of the whole, so it stays stable and unique.
 */
export function redriveName(original: string, n: number): string {
  const base = original.replace(/-r\d+$/, "");
  const suffix = `-r${n}`;
  if (base.length + suffix.length <= scheduler.nameMaxLength) return base + suffix;
  const hash = createHash("sha256").update(base, "utf8").digest("hex").slice(0, 8);
  return `${base.slice(0, scheduler.nameMaxLength - suffix.length - hash.length - 1)}.${hash}${suffix}`;
}

/** What a redriven schedule's Description says: which send it re-sends (a second redrive of it reads this back). */
export const redriveDescription = (identity: string) => `sendtime redrive of ${identity}`;

/** When a send redriven at `nowMs` goes: REDRIVE_DELAY_MS later, up to the next whole minute (at() has minutes). */
export function redriveAt(nowMs: number): number {
  return Math.ceil((nowMs + REDRIVE_DELAY_MS) / 60_000) * 60_000;
}

/**
 * What quiet time did to a redrive: `none` (the campaign has none), `free` (its time is not quiet), `delayed` (moved
 * to the first time whose whole window is free), `not-checked` (a bulk line keeps no recipient's zone).
 */
export type RedriveQuiet = "none" | "free" | "delayed" | "not-checked";

/**
 * The time of a redrive created at `nowMs`: redriveAt, then the campaign's quiet time in the recipient's zone over
 * the schedule's window (promises.ts endOfQuietWindow). A quiet redrive is delayed whatever the campaign's policy:
 * it is late already, and the operator asked for it to be sent.
 */
export function redriveTime<L>(
  nowMs: number,
  found: FoundRow<L>,
  quiet: QuietTime | null,
  windowMinutes: number | undefined,
): RedriveTime {
  return outOfQuiet(redriveAt(nowMs), found, quiet, windowMinutes);
}

/** When a redrive goes, and what quiet time did to it. */
export interface RedriveTime {
  atMs: number;
  quiet: RedriveQuiet;
}

/** A redrive at `atMs`, or at the end of the campaign's quiet time in the recipient's zone (as redriveTime). */
export function outOfQuiet<L>(
  atMs: number,
  found: FoundRow<L>,
  quiet: QuietTime | null,
  windowMinutes: number | undefined,
): RedriveTime {
  if (!quiet) return { atMs, quiet: "none" };
  if (found.kind === "bulk") return { atMs, quiet: "not-checked" };
  const end = endOfQuietWindow(quiet, found.row.timezone, atMs, windowMinutes ?? 1);
  return end ? { atMs: Math.ceil(end.utcMs / 60_000) * 60_000, quiet: "delayed" } : { atMs, quiet: "free" };
}
