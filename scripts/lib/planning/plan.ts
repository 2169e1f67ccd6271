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
 *
 * Its parts: the request (plan-request.ts), a row's plan lines (plan-lines.ts), the counts (plan-tally.ts) and the
 * summary made of them (plan-summary.ts).
 */
import { Columns, recipientColumns } from "../recipients/recipient-columns";
import { PROGRESS_EVERY_ROWS } from "../recipients/row-progress";
import { PlanFiles } from "./plan-files";
import { AudienceSplit, HOLDOUT } from "../recipients/audience";
import { SendDecider } from "./decisions";
import { describeQuietTime } from "../../../infra/core/timing/quiet-time";
import { isReject, RecipientChecker, RecipientRow, Reject, RejectReason } from "../recipients/recipient-rows";
import { countLines, CsvRecord, openRecipientCsv } from "../recipients/recipients";
import { describeRule } from "../../../infra/core/timing/send-rules";
import { lackingText, TemplateDataCheck } from "../templates/campaign-templates";
import { missedCutoff, quietCheckWindowMinutes } from "./window";
import { BulkLines } from "./bulk";
import { SmsBulkLines } from "./sms-bulk";
import { SMS_MAX_ENTRIES } from "../../../infra/core/send/sender-contract";
import { unsubscribeAddress } from "../../../infra/core/consent/unsubscribe";
import { ContactListCheck, PlanRequest } from "./plan-request";
import { PlanLines, Prepared } from "./plan-lines";
import { PlanTally } from "./plan-tally";
import { PlanSummary, summarize } from "./plan-summary";
import { Placed, placeRow, RampDays } from "./ramp";
import { isTextReject, PlannedTexts, SmsRequest, SmsSteps, textWindowMinutes } from "./sms-steps";
import { ZoneDecisions } from "./decision-types";

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
  // Texts under legal hours are placed with room for their window before the legal window closes (sms-legal.ts).
  const textWindow = (sms: SmsRequest) =>
    textWindowMinutes({
      legalHours: sms.legalHours,
      givenMinutes: o.window?.minutes,
      quietWindow,
      schedulesBound: rowBound * o.steps.length,
      tps: o.rate.tps,
    });
  const sms = o.sms && new SmsSteps(o.sms, o.steps, columns, textWindow(o.sms), o.file);
  const rowTotal = o.input ? undefined : rowBound - 1;
  return { csv, columns, cutoffMs, quietWindow, checker, decider, rowTotal, sms };
}

async function planInto(files: PlanFiles, o: PlanRequest): Promise<PlanSummary> {
  const { csv, columns, cutoffMs, quietWindow, checker, decider, rowTotal, sms } = await openPlan(o);
  const split = new AudienceSplit(o.campaignId, o.audience);
  const lines = new PlanLines(columns, o.steps, o.audience);
  const bulk = bulkLinesOf(o, columns, files);
  const tally = new PlanTally(o.steps.length, o.audience.variants.length);
  const ramp = o.ramp && new RampDays(o.ramp);
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
      const row = checkedRow(checker, rec, contactList);
      if (isReject(row)) {
        await reject(row);
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
      const placed = ramp && placeRow(ramp, decider, row, decided); // a warm-up's day (ramp.ts)
      const final = placed?.decided ?? decided;
      const texted = contentOf(row, group, final, dataCheck, sms);
      if (texted && isTextReject(texted)) {
        await reject(texted);
        continue;
      }
      if (placed) takeRamp(ramp!, placed, row);
      const prepared = lines.prepared(texted ? texted.decided : final);
      const slot = lines.slotOf(group);
      if (bulk) {
        const added = await addBulk(bulk, texted && { planned: texted, sms: sms! }, row, final, slot);
        if (added) {
          await reject({ line: row.line, id: row.id, ...added });
          continue;
        }
      } else
        await files.writePlan(
          texted ? textsAndEmails(lines, row, prepared, slot, sms!, texted) : lines.of(row, prepared, slot),
        );
      tally.plan(row, prepared, slot);
      o.onPlanned?.(row.email);
      const noted = files.notesOf(row, row.notes, prepared.notes, prepared.zoneFields);
      if (noted) await noted;
    }
    if (bulk) await bulk.chunks.close();
    if (bulk?.texts) await bulk.texts.close();
    decider.refuseRecurringQuietNights(o.window ? "--window-minutes" : "computed");
    planSha256 = await files.close();
    tally.flush();
  } finally {
    checker.close();
  }
  tally.checkRows();
  tally.unknownZones = decider.unknownZones();
  return summarize(o, tally, cutoffMs, planSha256, files.paths, quietWindow, bulk?.chunks.stats, ramp, sms);
}

/**
 * The row's content checked: its emails' template data (TemplateDataCheck), then its texts (sms-steps.ts): why it is
 * rejected, its texts, or undefined (a campaign without a text step).
 */
function contentOf(
  row: RecipientRow,
  group: number,
  final: ZoneDecisions,
  dataCheck: TemplateDataCheck | undefined,
  sms: SmsSteps | undefined,
): Reject | PlannedTexts | undefined {
  const lacking = dataCheck?.lacking(row.fields, group, (k) => final.steps[k].time !== undefined);
  if (lacking) return { line: row.line, id: row.id, reason: "missing-template-data", text: lackingText(lacking) };
  return sms?.row(row, final);
}

/** A row's plan lines with texts: its emails' (the email path), then its texts' (the SMS path); its texts counted. */
function textsAndEmails(
  lines: PlanLines,
  row: RecipientRow,
  prepared: Prepared,
  slot: number,
  sms: SmsSteps,
  texted: PlannedTexts,
): string {
  sms.count(texted);
  return lines.of(row, prepared, slot) + lines.smsLines(row, prepared, slot, texted.texts);
}

/** Counts a placed recipient's sends against the ramp; a moved one gets its note. */
function takeRamp(ramp: RampDays, placed: Placed, row: RecipientRow): void {
  ramp.take(placed);
  if (placed.shiftDays) (row.notes ??= []).push(ramp.note(placed));
}

/** A bulk plan's lines (--bulk), written into `files`: its emails', and its texts' when a step is a text. */
function bulkLinesOf(
  o: PlanRequest,
  columns: Columns,
  files: PlanFiles,
): (BulkLines & { texts?: SmsBulkLines }) | undefined {
  if (!o.bulk) return undefined;
  const write = (text: Uint8Array) => files.writePlan(text);
  const emails = new BulkLines(
    o.file,
    columns,
    o.steps,
    o.audience,
    o.bulk.signing,
    write,
    o.recipients.allowDuplicateEmails,
  );
  if (!o.sms) return emails;
  const perLine = o.bulk.smsEntriesPerLine ?? SMS_MAX_ENTRIES;
  const variants = [...o.audience.variants.map((v) => v.name), null];
  return Object.assign(emails, {
    texts: new SmsBulkLines(o.sms, o.steps, perLine, variants, emails.chunks.stats, write),
  });
}

/**
 * A row of a bulk plan: its emails' entries (bulk.ts), then its texts' (sms-bulk.ts); why it cannot be sent in bulk,
 * or undefined.
 */
async function addBulk(
  bulk: NonNullable<ReturnType<typeof bulkLinesOf>>,
  texted: { planned: PlannedTexts; sms: SmsSteps } | undefined,
  row: RecipientRow,
  final: ZoneDecisions,
  slot: number,
): Promise<{ reason: RejectReason; text: string } | undefined> {
  const added = bulk.add(row, final, slot);
  if (added instanceof Promise) await added;
  else if (added) return added;
  if (!texted || !bulk.texts) return undefined;
  texted.sms.count(texted.planned);
  await bulk.texts.add(row, texted.planned, slot);
  return undefined;
}

/** The record checked (recipient-rows.ts), then its address against the contact list when there is one. */
function checkedRow(checker: RecipientChecker, rec: CsvRecord, list: ContactListCheck | undefined) {
  const row = checker.check(rec);
  if (isReject(row) || !list) return row;
  return optedOutReject(row, list) ?? row;
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
