/**
 * The launcher's core: plans every valid recipient × step of a CSV into plan.jsonl, every other row into rejects.csv,
 * streaming. A row goes through the pipeline
 *
 *   check it (recipient-rows.ts) → decide its zone and each step's send (decisions.ts: base rule → missed time
 *     → quiet time) → hold it out or not (audience.ts) → write its plan lines, a reject or a holdout line
 *     (plan-row format: infra/core/plan/plan-row.ts; files: plan-files.ts) → count it
 *
 * and the counts become the summary: rows = planned + rejected + held out. Every per-recipient decision is made
 * here, once, and recorded in the plan.
 */
import { PROGRESS_EVERY_ROWS, RowProgress } from "../recipients/row-progress";
import { Readable } from "stream";
import { scheduleName } from "../../../infra/core/plan/naming";
import { atExpression } from "../../../infra/core/plan/schedule-expression";
import { PlanLineParts, planLineFromParts, planLineParts } from "../../../infra/core/plan/plan-row";
import { OutputLock, PlanFiles, PlanPaths, PlanSink, quotedNoteLines, zoneFields } from "./plan-files";
import { Audience, AudienceSplit, HOLDOUT, NO_VARIANT, templatesByVariant } from "../recipients/audience";
import { AmbiguousZonePolicy, PlannedSends, SendDecider, StepDecision, ZoneDecisions } from "./decisions";
import { MissedPolicy } from "./missed";
import { QuietTime, describeQuietTime } from "../../../infra/core/timing/quiet-time";
import { Columns, recipientColumns, STEP_KEY } from "../recipients/recipient-columns";
import { isReject, RecipientChecker, RecipientRow, Reject, RejectReason } from "../recipients/recipient-rows";
import { TemplateDataJson } from "../recipients/row-size";
import { countLines, CsvEncoding, openRecipientCsv } from "../recipients/recipients";
import { sizingSpanDays } from "../../../infra/core/timing/recurrence";
import { BaseRule, describeRule } from "../../../infra/core/timing/send-rules";
import { Step, stepOffset } from "../../../infra/core/timing/send-time";
import { lackingText, TemplateDataCheck, TemplateSet } from "../templates/campaign-templates";
import {
  EffectiveTps,
  fanOutSeconds,
  minimumWindowMinutes,
  missedCutoff,
  peakTpsWith,
  quietCheckWindowMinutes,
} from "./window";
import { BulkLines, BulkSigning, BulkStats } from "./bulk";
import { unsubscribeAddress } from "../../../infra/core/consent/unsubscribe";
import { OptOutKind } from "../../../infra/core/consent/ses-subscription";
import { InferSource, ZoneAliases, ZoneSource, zoneSourceOf } from "../../../infra/core/zones/zone-names";
import { emptyBySource, UnknownZoneValue } from "./row-zones";

export interface PlanRequest {
  campaignId: string;
  /** The recipient CSV's path, or its name in messages when `input` is given. */
  file: string;
  /** The output folder, locked by the caller for this run (OutputLock.acquire). */
  out: OutputLock;
  /** The list as a stream read once (e.g. from S3), with its size in bytes; without it, `file` is read from disk. */
  input?: { stream: Readable; bytes: number };
  /** Where the plan lines go as they are written (an upload), besides plan.jsonl; `localPlan: false` leaves that out. */
  planSink?: PlanSink;
  localPlan?: boolean;
  /** When step 1 is sent (a row's send_at replaces it). */
  rule: BaseRule;
  /** Every step, each with its SES template (`{variant}` in it is replaced by the recipient's variant). */
  steps: (Step & { template: string })[];
  defaultZone: string;
  quiet?: QuietTime;
  /** Variants and holdout; none when both are empty. */
  audience: Audience;
  missed: { policy: MissedPolicy; graceMinutes: number };
  /** Safety margin after the fan-out's estimated end before a send counts as reachable. */
  marginMinutes: number;
  now: number;
  /** CreateSchedule rate the fan-out is expected to sustain, for its ETA. */
  createTps: number;
  rate: EffectiveTps;
  /**
   * How the list is read and checked; strictZones rejects rows with no usable zone instead of defaulting them (or
   * mapping them through the zone table); zoneAliases (`--zone-alias X=ZONE`) are read before that table.
   */
  recipients: {
    encoding: CsvEncoding;
    allowDuplicateEmails: boolean;
    strictZones: boolean;
    zoneAliases?: ZoneAliases;
    inferZone?: readonly InferSource[];
    ambiguousZone?: AmbiguousZonePolicy;
  };
  /** A window chosen by the caller instead of a computed one; `source` says where it came from. */
  window?: { minutes: number; source: string };
  /**
   * Bulk sends (--bulk, one-time rules only): recipients of a step who share its instant and variant share schedules
   * of up to 50 entries (bulk.ts), each entry signed with `signing`. The window holds emails at `rates.emails` and
   * schedules (invocations) at `rates.invocations`; `rate` is then the emails' rate.
   */
  bulk?: {
    signing: BulkSigning;
    rates: { emails: EffectiveTps; invocations: EffectiveTps };
    /** The stack's SES contact list, read at launch (none in a dry run: not checked). */
    contactList?: ContactListCheck;
  };
  /** The templates folder, read: a row whose data lacks a variable its templates need is rejected. None: no check. */
  templates?: TemplateSet;
  /** The uses of those templates the check cannot read (campaign-templates.ts uncheckedForms), for the summary. */
  templatesNotChecked?: string[];
  /** Rows read so far, of the local file's row bound (none for a streamed list: its bound is far too loose for an ETA). */
  progress?: RowProgress;
}

/**
 * The addresses opted out in the stack's SES contact list, read by a real --bulk launch (SendBulkEmail carries no
 * ListManagementOptions, so SES would not drop them): a row whose address, as the opt-out table keys it
 * (unsubscribeAddress), is here is rejected `opted-out` before it is planned.
 */
export interface ContactListCheck {
  contactListName: string;
  topicName: string;
  /** Address → "topic" (opted out of the topic) or "all" (unsubscribed from every topic of the list). */
  optedOut: ReadonlyMap<string, OptOutKind>;
}

export interface PlanSummary {
  campaignId: string;
  rows: number;
  recipientsPlanned: number;
  schedules: number;
  steps: { step: number; offset: string; template: string; schedules: number }[];
  rejected: { total: number; byReason: Partial<Record<RejectReason, number>> };
  /**
   * Rows planned with a zone taken from the default, re-cased or trimmed, or mapped (an abbreviation, a Windows name,
   * a UTC offset, an alias); the same rows by source; the values most often not IANA names (every row decided).
   */
  zones: {
    defaultTimezone: string;
    defaulted: number;
    canonicalised: number;
    mapped: number;
    bySource: Record<ZoneSource, number>;
    unknown: UnknownZoneValue[];
  };
  missed: {
    policy: MissedPolicy;
    graceMinutes: number;
    cutoff: string;
    skipped: number;
    sentNow: number;
    movedToNextDay: number;
  };
  /** The base rule, in words. */
  sendTime: string;
  /**
   * Recurring sends: each schedule's StartDate (the cutoff), the latest EndDate of any of them, and the days after the
   * start the window was sized on (firstSend and lastSend are then the first and last occurrence in those days).
   */
  recurring: { startDate: string; lastEndDate: string | null; sizedOnDays: number } | null;
  /** Sends moved (delayed) or dropped (skipped) by quiet time; null without quiet time. */
  quiet: { rule: string; policy: string; delayed: number; skipped: number } | null;
  /** Recipients and schedules per variant, and the holdout; null without variants or holdout. */
  audience: {
    variants: { name: string; percent: number; step1Template: string; recipients: number; schedules: number }[];
    holdout: { percent: number; recipients: number };
  } | null;
  heldOut: number;
  window: {
    minutes: number;
    source: string;
    effectiveTps: number;
    effectiveTpsSource: string;
    fits: boolean;
    requiredTps?: number;
    /** With a window given by the caller: the smallest that holds the rate, and the peak rate with the given one. */
    minimumMinutes?: number;
    peakTps?: number;
    /**
     * With quiet time: the window every send's quiet check covered (no minute of [t, t + this) is quiet); the
     * schedules' window is at most this, or the plan is not launched.
     */
    quietCheckedMinutes?: number;
  };
  /**
   * Steps not planned for some recipients because their send came within MIN_GAP_MINUTES of an earlier step's
   * ("too-close") or before it ("out-of-order"; promises.ts droppedSends).
   */
  collisions: { step: number; with: number; recipients: number; reason: "too-close" | "out-of-order" }[];
  /** Planned rows whose id differs from an earlier row's only in case or surrounding spaces. */
  idsDifferingOnlyInCase: number;
  /** Uses of the templates the data check could not read, one line each ("template t: body.html:3: …"); absent when none. */
  templatesNotChecked?: string[];
  fanOut: { etaSeconds: number; createTps: number };
  /** Schedules per step and variant (variant null without one), in step then variant order. */
  scheduled: { step: number; variant: string | null; schedules: number }[];
  firstSend: string | null;
  lastSend: string | null;
  planSha256: string;
  files: PlanPaths;
  /**
   * A bulk plan (--bulk): `schedules` above counts its bulk schedules, while `steps`, `scheduled` and the audience's
   * counts are entries (one per recipient and step, as without --bulk). Null without --bulk.
   */
  bulk: BulkSummary | null;
}

export interface BulkSummary {
  schedules: number;
  /** Recipient-steps: one email each. */
  entries: number;
  schedulesPerRecipientStep: number;
  largestSchedule: number;
  smallestSchedule: number;
  /** Chunks written before they were full to bound memory (bulk.ts MAX_OPEN_CHARS); 0 unless the list has thousands of instants. */
  splitEarly: number;
  averageLineBytes: number;
  /** The window each need asks for: emails at the SES rate, schedules (invocations) at the Scheduler quota. */
  window: {
    emails: { minutes: number | null; tps: number; source: string };
    invocations: { minutes: number | null; tps: number; source: string };
  };
  /** Where the unsubscribe links' key and endpoint came from; `placeholder`: the tokens are not valid. */
  unsubscribe: { baseUrl: string; placeholder: boolean; source: string };
  /**
   * The SES contact list's opt-outs: read at launch (`optedOut` addresses found, `rejected` rows), or not checked (a
   * dry run makes no AWS call).
   */
  contactList:
    | { checked: false }
    | { checked: true; contactListName: string; topicName: string; optedOut: number; rejected: number };
}

export async function planCampaign(o: PlanRequest): Promise<PlanSummary> {
  // The previous run's files go first: whatever happens next, none is left to be taken for this run's.
  const files = new PlanFiles(o.out, {
    holdout: o.audience.holdoutBasisPoints > 0,
    planSink: o.planSink,
    localPlan: o.localPlan,
  });
  try {
    const summary = await planInto(files, o);
    files.commit(summary);
    return summary;
  } catch (e) {
    files.abort();
    throw e;
  }
}

/** Streams the list through the pipeline into `files`; returns the summary (the files are not yet in place). */
/**
 * The list opened and the stages its rows go through, with what they are sized on: the missed-time cutoff and the
 * window quiet time is checked over.
 */
async function openPlan(o: PlanRequest) {
  const csv = await openRecipientCsv(o.file, o.recipients.encoding, o.input?.stream);
  const columns = recipientColumns(o.file, csv.header, o.rule.kind === "after" ? o.rule.column : undefined);
  // The fan-out must finish before a send is due: the same cutoff size-window's "launch by" is computed from. The row
  // bound is known up front, so the list is read once: a local file's line count, or for a streamed list (S3) its
  // size over the shortest row that can be planned.
  const rowBound = o.input ? plannableRowBound(o.input.bytes, columns.header.length) : await countLines(o.file);
  const pace = { rowBound, steps: o.steps.length, createTps: o.createTps, marginMinutes: o.marginMinutes };
  const cutoffMs = missedCutoff(o.now, pace);

  const quietWindow = quietCheckWindowMinutes({
    givenMinutes: o.window?.minutes,
    quiet: o.quiet,
    schedulesBound: rowBound * (o.rule.kind === "every" ? 1 : o.steps.length),
    tps: o.rate.tps,
  });
  const { checker, decider } = rowStages(o, columns, rowBound, cutoffMs, quietWindow);
  return { csv, columns, cutoffMs, quietWindow, checker, decider, rowTotal: o.input ? undefined : rowBound - 1 };
}

async function planInto(files: PlanFiles, o: PlanRequest): Promise<PlanSummary> {
  const { csv, columns, cutoffMs, quietWindow, checker, decider, rowTotal } = await openPlan(o);
  const split = new AudienceSplit(o.campaignId, o.audience);
  const lines = new PlanLines(columns, o.steps, o.audience);
  const bulk = bulkLinesOf(o, columns, files);
  const tally = new PlanTally(o.steps.length, o.audience.variants.length);
  const contactList = o.bulk?.contactList;
  const dataCheck =
    o.templates && new TemplateDataCheck(o.templates, o.steps, o.audience, columns, o.bulk !== undefined);
  const reject = (r: Reject) => {
    tally.reject(r.reason);
    return files.reject(r);
  };
  let planSha256: string;
  try {
    for await (const rec of csv.records) {
      if (++tally.rows % PROGRESS_EVERY_ROWS === 0) o.progress?.(tally.rows, "rows read", rowTotal);
      const row = checker.check(rec);
      if (isReject(row)) {
        await reject(row);
        continue;
      }
      const optedOut = contactList && optedOutReject(row, contactList);
      if (optedOut) {
        await reject(optedOut);
        continue;
      }
      const decided = decider.decide(row.rawZone, row.timing, row);
      if (decided.reject) {
        await reject({ line: row.line, id: row.id, ...decided.reject });
        continue;
      }
      const none = decided.noSendLeft;
      if (none) {
        tally.steps(decided.steps);
        await reject(noSendLeft(row, none, cutoffMs, o, quietWindow, decided.steps[0]?.due));
        continue;
      }
      // Held out only when it would have been sent: the holdout stays comparable with the recipients who are.
      const group = split.groupOfRecipient(row.id);
      if (group === HOLDOUT) {
        tally.heldOut++;
        await files.holdout(row);
        continue;
      }
      const lacking = dataCheck?.lacking(row.fields, group, (k) => decided.steps[k].time !== undefined);
      if (lacking) {
        await reject({ line: row.line, id: row.id, reason: "missing-template-data", text: lackingText(lacking) });
        continue;
      }
      const prepared = lines.prepared(decided);
      const slot = lines.slotOf(group);
      if (bulk) {
        const added = bulk.add(row, decided, slot);
        if (added instanceof Promise) await added;
        else if (added) {
          await reject({ line: row.line, id: row.id, ...added });
          continue;
        }
      } else await files.writePlan(lines.of(row, prepared, slot));
      tally.plan(row, prepared, slot);
      const noted = files.notesOf(row, row.notes, prepared.notes, prepared.zoneFields);
      if (noted) await noted;
    }
    if (bulk) await bulk.chunks.close();
    decider.refuseRecurringQuietNights(o.window ? "--window-minutes" : "computed");
    planSha256 = await files.close();
    tally.flush();
  } finally {
    checker.close();
  }
  tally.checkRows();
  tally.unknownZones = decider.unknownZones();
  return summarize(o, tally, cutoffMs, planSha256, files.paths, quietWindow, bulk?.chunks.stats);
}

/** A bulk plan's lines (--bulk), written into `files`; undefined without --bulk. */
function bulkLinesOf(o: PlanRequest, columns: Columns, files: PlanFiles): BulkLines | undefined {
  if (!o.bulk) return undefined;
  const write = (text: Uint8Array) => files.writePlan(text);
  return new BulkLines(o.file, columns, o.steps, o.audience, o.bulk.signing, write, o.recipients.allowDuplicateEmails);
}

/** The reject of a row whose address the contact list has opted out, or undefined. */
function optedOutReject(row: RecipientRow, list: ContactListCheck): Reject | undefined {
  const kind = list.optedOut.get(unsubscribeAddress(row.email));
  if (!kind) return undefined;
  const text =
    kind === "all"
      ? `unsubscribed from every topic of contact list ${list.contactListName}`
      : `opted out of topic ${list.topicName} in contact list ${list.contactListName}`;
  return { line: row.line, id: row.id, reason: "opted-out", text };
}

/** The first two stages of the pipeline: a row's checks, then its zone and send times. */
function rowStages(o: PlanRequest, columns: Columns, rowBound: number, cutoffMs: number, quietWindowMinutes: number) {
  const checker = new RecipientChecker(columns, {
    steps: o.steps.length,
    allowDuplicateEmails: o.recipients.allowDuplicateEmails,
    noticeIdsDifferingInCase: true,
    expectedRows: o.input ? undefined : rowBound,
  });
  const decider = new SendDecider({
    rule: o.rule,
    steps: o.steps,
    defaultZone: o.defaultZone,
    strictZones: o.recipients.strictZones,
    zoneAliases: o.recipients.zoneAliases,
    inferZone: o.recipients.inferZone,
    ambiguousZone: o.recipients.ambiguousZone,
    missed: { ...o.missed, cutoffMs },
    quiet: o.quiet,
    windowMinutes: quietWindowMinutes,
    // A recurring schedule starts at the cutoff: its occurrences before the fan-out can have created it are not sent.
    recurringStartMs: cutoffMs,
  });
  return { checker, decider };
}

function noSendLeft(
  row: RecipientRow,
  why: "quiet-hours" | "send-time-passed",
  cutoffMs: number,
  o: PlanRequest,
  windowMinutes: number,
  due?: string,
): Reject {
  // The recurring time itself may be free while its window reaches quiet time (quiet time covers the window).
  const reaches = windowMinutes > 1 ? ` with its ${windowMinutes}-minute window reaches` : " is in";
  const text =
    why === "quiet-hours"
      ? o.rule.kind === "every"
        ? `no send left: its recurring time ${due}${reaches} quiet time (${describeQuietTime(o.quiet!)}) at every occurrence`
        : `no send left: quiet time (${describeQuietTime(o.quiet!)}) skips every send that was not missed`
      : o.rule.kind === "every"
        ? `no occurrence (${describeRule(o.rule)}) after ${new Date(cutoffMs).toISOString()} (now + fan-out + margin)`
        : `every send time is before ${new Date(cutoffMs).toISOString()} (now + fan-out + margin); missed-time policy ${o.missed.policy}`;
  return { line: row.line, id: row.id, reason: why, text };
}

/**
 * The most rows a list of `bytes` bytes can plan: a plannable row has an id (1 byte or more), an address (5 or more:
 * a@b.c), a comma between each two of its `columns` fields and a line break.
 */
export function plannableRowBound(bytes: number, columns: number): number {
  return Math.floor(bytes / (1 + 5 + (columns - 1) + 1));
}

/**
 * What every planned row with one answer of the decider (its decisions) shares, prepared on the first row with that
 * answer object: its plan lines' shared parts (per step sent, the same for every group: the variant and its template
 * are pieces of the line), its notes quoted, and its rows counted per group but not yet tallied. Kept on the answer
 * (`prepared`): a row reads this instead of each step's decision, which with thousands of answers in a list's own
 * order missed the CPU's caches (see docs/benchmarks.md). The decider keeps one answer per zone spelling and timing
 * values (decisions.ts), so this is prepared once for each.
 */
interface Prepared {
  owner: PlanLines;
  decided: ZoneDecisions;
  /** Each step's lines' shared parts, three a step (planLineParts) in one array; "" for a step not sent. */
  parts: PlanLineParts;
  notes: readonly string[];
  zoneSource: ZoneSource;
  /** notes.csv's zone_source and zone_candidates fields (plan-files.ts zoneFields). */
  zoneFields: string;
  /** Rows counted since the tally last took them in (PlanTally.flush), per group slot, and in all. */
  untallied: number[];
  untalliedRows: number;
}

/**
 * A recipient's plan lines. Everything that does not change per row is serialized once: each step's template per
 * variant, and the variant; times come from the decisions, which rows share (prepared).
 */
class PlanLines {
  /** `templateJson[step][slot]`: slot is the variant index, or the last slot for no variant. */
  private readonly templateJson: string[][];
  private readonly variantJson: string[];
  private readonly templateData: TemplateDataJson;
  /** What closes each step's template data: its step number. */
  private readonly stepJson: string[];
  private readonly stepNumbers: number[];
  private readonly lines: string[] = [];
  constructor(columns: Columns, steps: (Step & { template: string })[], audience: Audience) {
    this.templateData = new TemplateDataJson(columns);
    this.stepJson = steps.map((s) => `"${STEP_KEY}":"${s.number}"}`);
    this.stepNumbers = steps.map((s) => s.number);
    this.templateJson = templatesByVariant(
      audience,
      steps.map((s) => s.template),
    ).map((byGroup) => byGroup.map((t) => JSON.stringify(t)));
    this.variantJson = [...audience.variants.map((v) => JSON.stringify(v.name)), "null"];
  }

  /** The group's slot in per-group tables: the variant index, or the last slot for no variant. */
  slotOf(group: number): number {
    return group === NO_VARIANT ? this.variantJson.length - 1 : group;
  }

  /** What the rows with `decided` share, prepared on the first of them. */
  prepared(decided: ZoneDecisions): Prepared {
    const p = decided.prepared as Prepared | undefined;
    if (p !== undefined && p.owner === this) return p;
    const parts = decided.steps.flatMap(({ step, time, recurring }) => {
      if (!time) return ["", "", ""];
      // send_at, IANA zone names and ISO instants hold nothing JSON escapes.
      return planLineParts({
        send_at: `"${time.send_at}"`,
        timezone: `"${time.timezone}"`,
        step: String(step.number),
        utc: `"${time.utc}"`,
        schedule_expression: `"${recurring ? recurring.expression : atExpression(time.send_at)}"`,
        ...(recurring && { start_date: `"${recurring.startDate}"`, end_date: `"${recurring.endDate}"` }),
      });
    });
    const zoneSource = zoneSourceOf(decided.status);
    const fields = zoneFields(zoneSource, decided.candidates);
    const notes = quotedNoteLines(decided.notes, fields);
    const untallied = new Array<number>(this.variantJson.length).fill(0);
    const made: Prepared = {
      owner: this,
      decided,
      parts,
      notes,
      zoneSource,
      zoneFields: fields,
      untallied,
      untalliedRows: 0,
    };
    return (decided.prepared = made);
  }

  /** The row's lines, in the group with `slot`. */
  of(row: RecipientRow, p: Prepared, slot: number): string {
    // Personalization: every other column, as strings, plus the step; serialized once per row.
    const dataPrefix = this.templateData.prefix(row.fields);
    const emailJson = JSON.stringify(row.email);
    const idJson = JSON.stringify(row.id);
    const variantJson = this.variantJson[slot];
    const lines = this.lines;
    lines.length = 0;
    const parts = p.parts;
    for (let k = 0; 3 * k < parts.length; k++) {
      if (parts[3 * k] === "") continue;
      // Schedule names hold nothing JSON escapes.
      const name = `"${scheduleName(row.id, this.stepNumbers[k])}"`;
      const template = this.templateJson[k][slot];
      lines.push(
        planLineFromParts(parts, 3 * k, name, emailJson, template, dataPrefix + this.stepJson[k], idJson, variantJson),
      );
    }
    // Joined, not appended line by line: a flat string hashes and writes without flattening a rope first.
    return lines.join("");
  }
}

/** The run's counts, kept as rows stream by. */
class PlanTally {
  rows = 0;
  planned = 0;
  rejected = 0;
  heldOut = 0;
  readonly byReason: Partial<Record<RejectReason, number>> = {};
  defaulted = 0;
  canonicalised = 0;
  mapped = 0;
  readonly bySource = emptyBySource();
  unknownZones: UnknownZoneValue[] = [];
  skipped = 0;
  sentNow = 0;
  movedToNextDay = 0;
  quietDelayed = 0;
  quietSkipped = 0;
  readonly schedulesByStep: number[];
  /** Recipients per "step with": a step not planned because it came too close to another. */
  readonly collisions = new Map<string, number>();
  idsDifferingOnlyInCase = 0;
  /** Per variant, the last slot for no variant. */
  readonly recipientsByGroup: number[];
  readonly schedulesByGroup: number[];
  /** `schedulesByStepAndGroup[step][group]`. */
  readonly schedulesByStepAndGroup: number[][];
  /** Send instants of the planned schedules. */
  readonly sends = new PlannedSends();
  /** Recurring sends: the latest EndDate of any planned schedule. */
  lastEndMs = 0;
  /** What planned rows share, with rows counted by plan() but not yet taken in (bounded like PlannedSends'). */
  private untallied: Prepared[] = [];
  private static readonly MAX_UNTALLIED = 50_000;

  constructor(steps: number, variants: number) {
    this.schedulesByStep = new Array(steps).fill(0);
    this.recipientsByGroup = new Array(variants + 1).fill(0);
    this.schedulesByGroup = new Array(variants + 1).fill(0);
    this.schedulesByStepAndGroup = Array.from({ length: steps }, () => new Array(variants + 1).fill(0));
  }

  /** Every row is planned, rejected or held out: rows = planned + rejected + held out. */
  checkRows(): void {
    if (this.rows !== this.planned + this.rejected + this.heldOut)
      throw new Error(
        `internal: ${this.rows} rows but ${this.planned} planned + ${this.rejected} rejected + ${this.heldOut} held out`,
      );
  }

  reject(reason: RejectReason): void {
    this.rejected++;
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
  }

  /** Counts what happened to each step's send, for `rows` rows; returns how many steps are sent. */
  steps(decisions: StepDecision[], rows = 1): number {
    let sent = 0;
    for (let k = 0; k < decisions.length; k++) {
      const d = decisions[k];
      if (d.outcome === "skipped") this.skipped += rows;
      if (d.outcome === "sent-now") this.sentNow += rows;
      if (d.outcome === "next-day") this.movedToNextDay += rows;
      // A delayed step that then came too close to another is not sent: a collision, not a delayed send.
      if (d.quiet === "delayed" && d.time) this.quietDelayed += rows;
      if (d.quiet === "skipped") this.quietSkipped += rows;
      if (d.outcome === "collided" || d.outcome === "out-of-order") {
        const key = `${d.step.number} ${d.collidedWith} ${d.outcome === "collided" ? "too-close" : "out-of-order"}`;
        this.collisions.set(key, (this.collisions.get(key) ?? 0) + rows);
      }
      if (d.time) {
        this.schedulesByStep[k] += rows;
        sent++;
      }
    }
    return sent;
  }

  /**
   * Counts a planned row in the group with `slot`. Only the rows planned and ids differing in case are counted here;
   * everything its answer decides (zones, schedules per step and variant, missed and quiet outcomes, collisions, send
   * instants) is counted per answer and group, for all its rows at once, when the tally is read (flush).
   */
  plan(row: RecipientRow, p: Prepared, slot: number): void {
    this.planned++;
    if (row.sameIdButCase !== undefined) this.idsDifferingOnlyInCase++;
    p.untallied[slot]++;
    if (p.untalliedRows++ === 0) {
      this.untallied.push(p);
      if (this.untallied.length >= PlanTally.MAX_UNTALLIED) this.flush();
    }
  }

  /** Takes in every row counted by plan(); before the counts are read. */
  flush(): void {
    for (const p of this.untallied) {
      const d = p.decided;
      const rows = p.untalliedRows;
      p.untalliedRows = 0;
      if (d.status === "defaulted") this.defaulted += rows;
      if (d.status === "canonicalised") this.canonicalised += rows;
      if (d.status === "mapped") this.mapped += rows;
      this.bySource[p.zoneSource] += rows;
      const sent = this.steps(d.steps, rows);
      p.untallied.forEach((inSlot, slot) => {
        this.recipientsByGroup[slot] += inSlot;
        this.schedulesByGroup[slot] += sent * inSlot;
        d.steps.forEach((step, k) => step.time && (this.schedulesByStepAndGroup[k][slot] += inSlot));
        p.untallied[slot] = 0;
      });
      this.sends.add(d.zone, d.steps, rows);
      const recurring = d.steps[0]?.recurring;
      if (recurring && recurring.endMs > this.lastEndMs) this.lastEndMs = recurring.endMs;
    }
    this.untallied = [];
  }
}

/** The non-zero counts of schedules per step and variant; variants sorted by name, no variant first. */
function scheduledByStepAndVariant(o: PlanRequest, t: PlanTally): PlanSummary["scheduled"] {
  const names = [...o.audience.variants.map((v) => v.name), null];
  const counts: PlanSummary["scheduled"] = [];
  o.steps.forEach((s, k) =>
    names.forEach((variant, slot) => {
      const schedules = t.schedulesByStepAndGroup[k][slot];
      if (schedules) counts.push({ step: s.number, variant, schedules });
    }),
  );
  return counts.sort((a, b) => a.step - b.step || (a.variant ?? "").localeCompare(b.variant ?? ""));
}

/** The window given (with the minimum it could have been), or the one computed from the plan's instants. */
function windowSummary(o: PlanRequest, instants: { utcMs: number; count: number }[]): PlanSummary["window"] {
  const rate = { effectiveTps: o.rate.tps, effectiveTpsSource: o.rate.source };
  const sized = minimumWindowMinutes(instants, o.rate.tps);
  if (o.window) {
    const minimumMinutes = sized.fits ? sized.windowMinutes : undefined;
    const peakTps = Math.round(peakTpsWith(instants, o.window.minutes) * 100) / 100;
    return { minutes: o.window.minutes, source: o.window.source, ...rate, fits: true, minimumMinutes, peakTps };
  }
  return {
    minutes: sized.windowMinutes,
    source: "computed",
    ...rate,
    fits: sized.fits,
    requiredTps: sized.fits ? undefined : sized.requiredTps,
  };
}

/** Variants and holdout with their recipients and schedules; null without either. */
function audienceSummary(o: PlanRequest, t: PlanTally): PlanSummary["audience"] {
  const { variants, holdoutBasisPoints } = o.audience;
  if (!variants.length && !holdoutBasisPoints) return null;
  const step1Templates = templatesByVariant(
    o.audience,
    o.steps.map((s) => s.template),
  )[0];
  return {
    variants: variants.map((v, i) => ({
      name: v.name,
      percent: v.basisPoints / 100,
      step1Template: step1Templates[i],
      recipients: t.recipientsByGroup[i],
      schedules: t.schedulesByGroup[i],
    })),
    holdout: { percent: holdoutBasisPoints / 100, recipients: t.heldOut },
  };
}

function summarize(
  o: PlanRequest,
  t: PlanTally,
  cutoffMs: number,
  planSha256: string,
  files: PlanPaths,
  quietWindow: number,
  bulkStats?: BulkStats,
): PlanSummary {
  const histogram = t.sends.instants();
  const instants = histogram.instants();
  const schedules = bulkStats ? bulkStats.schedules : t.sends.schedules;
  const bulk = bulkStats && o.bulk ? bulkSummary(o.bulk, bulkStats, instants, t.byReason["opted-out"] ?? 0) : undefined;
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    campaignId: o.campaignId,
    rows: t.rows,
    recipientsPlanned: t.planned,
    schedules,
    steps: o.steps.map((s, k) => ({
      step: s.number,
      offset: stepOffset(s),
      template: s.template,
      schedules: t.schedulesByStep[k],
    })),
    rejected: { total: t.rejected, byReason: t.byReason },
    zones: {
      defaultTimezone: o.defaultZone,
      defaulted: t.defaulted,
      canonicalised: t.canonicalised,
      mapped: t.mapped,
      bySource: t.bySource,
      unknown: t.unknownZones,
    },
    missed: {
      policy: o.missed.policy,
      graceMinutes: o.missed.graceMinutes,
      cutoff: iso(cutoffMs),
      skipped: t.skipped,
      sentNow: t.sentNow,
      movedToNextDay: t.movedToNextDay,
    },
    sendTime: describeRule(o.rule),
    recurring:
      o.rule.kind === "every"
        ? {
            startDate: iso(cutoffMs),
            lastEndDate: t.lastEndMs ? iso(t.lastEndMs) : null,
            sizedOnDays: sizingSpanDays(o.rule.recurrence),
          }
        : null,
    quiet: o.quiet
      ? { rule: describeQuietTime(o.quiet), policy: o.quiet.policy, delayed: t.quietDelayed, skipped: t.quietSkipped }
      : null,
    audience: audienceSummary(o, t),
    heldOut: t.heldOut,
    // A window given (--window-minutes) is checked as without --bulk, against the emails' rate.
    window: {
      ...(bulk && !o.window ? bulk.window : windowSummary(o, instants)),
      ...(o.quiet ? { quietCheckedMinutes: quietWindow } : {}),
    },
    collisions: [...t.collisions].map(([key, recipients]) => {
      const [step, other, reason] = key.split(" ");
      return { step: Number(step), with: Number(other), recipients, reason: reason as "too-close" | "out-of-order" };
    }),
    idsDifferingOnlyInCase: t.idsDifferingOnlyInCase,
    ...(o.templatesNotChecked?.length ? { templatesNotChecked: o.templatesNotChecked } : {}),
    fanOut: { etaSeconds: fanOutSeconds(schedules, o.createTps), createTps: o.createTps },
    scheduled: scheduledByStepAndVariant(o, t),
    firstSend: instants.length ? iso(instants[0].utcMs) : null,
    lastSend: instants.length ? iso(instants[instants.length - 1].utcMs) : null,
    planSha256,
    files,
    bulk: bulk?.summary ?? null,
  };
}

/**
 * A bulk plan's counts, and its window: the larger of what its emails need at the SES rate and what its schedules
 * need at the Scheduler invocation quota (each sized as windowSummary sizes sends).
 */
function bulkSummary(
  b: NonNullable<PlanRequest["bulk"]>,
  s: BulkStats,
  emailInstants: { utcMs: number; count: number }[],
  optedOutRows: number,
): { summary: BulkSummary; window: PlanSummary["window"] } {
  const invocationInstants = s.invocations.instants();
  const emails = minimumWindowMinutes(emailInstants, b.rates.emails.tps);
  const invocations = minimumWindowMinutes(invocationInstants, b.rates.invocations.tps);
  const fits = emails.fits && invocations.fits;
  // The larger need binds; on a tie the emails (SES) are named.
  const binding =
    invocations.windowMinutes > emails.windowMinutes
      ? { sized: invocations, rate: b.rates.invocations }
      : { sized: emails, rate: b.rates.emails };
  const need = (w: typeof emails, rate: EffectiveTps) => ({
    minutes: w.fits ? w.windowMinutes : null,
    tps: rate.tps,
    source: rate.source,
  });
  const window: PlanSummary["window"] = {
    minutes: Math.max(emails.windowMinutes, invocations.windowMinutes),
    source: "computed",
    effectiveTps: binding.rate.tps,
    effectiveTpsSource: `${binding.rate.source}${binding.sized === invocations ? " (schedule invocations)" : " (emails)"}`,
    fits,
    requiredTps: fits
      ? undefined
      : [emails, invocations].map((w) => (w.fits ? 0 : w.requiredTps)).reduce((a, c) => Math.max(a, c)),
  };
  const entries = s.entries;
  return {
    window,
    summary: {
      schedules: s.schedules,
      entries,
      schedulesPerRecipientStep: entries ? Math.round((s.schedules / entries) * 1e4) / 1e4 : 0,
      largestSchedule: s.largest,
      smallestSchedule: s.smallest,
      splitEarly: s.splitEarly,
      averageLineBytes: s.schedules ? Math.round(s.lineBytes / s.schedules) : 0,
      window: { emails: need(emails, b.rates.emails), invocations: need(invocations, b.rates.invocations) },
      unsubscribe: { baseUrl: b.signing.baseUrl, placeholder: b.signing.placeholder, source: b.signing.source },
      contactList: b.contactList
        ? {
            checked: true,
            contactListName: b.contactList.contactListName,
            topicName: b.contactList.topicName,
            optedOut: b.contactList.optedOut.size,
            rejected: optedOutRows,
          }
        : { checked: false },
    },
  };
}
