/**
 * size-window's core: streams a recipient list into a histogram of send instants and sizes the window from it.
 * Memory is per distinct zone and instant, never per row.
 */
import { PROGRESS_EVERY_ROWS, RowProgress } from "../recipients/row-progress";
import { Audience, AudienceSplit, HOLDOUT, NO_VARIANT } from "../recipients/audience";
import { BulkGroupCounts } from "./bulk-chunks";
import { TemplateDataCheck, TemplateSet } from "../templates/campaign-templates";
import { placeRow, Ramp, RampDays } from "./ramp";
import { SendDecider } from "./decisions";
import { RecipientReading } from "./plan-request";
import { PlannedSends } from "./planned-sends";
import { QuietTime } from "../../../infra/core/timing/quiet-time";
import { isReject, RecipientChecker, RecipientRow, RejectReason } from "../recipients/recipient-rows";
import { recipientColumns } from "../recipients/recipient-columns";
import { countLines, openRecipientCsv } from "../recipients/recipients";
import { BaseRule } from "../../../infra/core/timing/send-rules";
import { Step, ZoneStatus } from "../../../infra/core/timing/send-time";
import { ZoneSource, zoneSourceOf } from "../../../infra/core/zones/zone-names";
import { emptyBySource, UnknownZoneValue } from "./row-zones";
import { isTextReject, SmsRequest, SmsSteps, textWindowMinutes } from "./sms-steps";
import { SmsSummary, smsSummary } from "./sms-summary";
import {
  EffectiveTps,
  fanOutSeconds,
  latestLaunch,
  minimumWindowMinutes,
  missedCutoff,
  peakTpsWith,
  quietCheckWindowMinutes,
  quietWindowShortfall,
} from "./window";

/**
 * Texts paced by the number: the pool sends `mps` message parts per second, and each text counts as `partsPerText`
 * parts; `dailyCap`: texts per UTC day (a 10DLC number's cap), applied as a ramp (ramp.ts withDailyCap).
 */
export interface SmsPace {
  mps: number;
  /** Where mps came from: --sms-mps, the stack output smsMps, or the default. */
  source: string;
  partsPerText: number;
  dailyCap?: number;
}

/**
 * The rate sends are held to with texts: the lower of `rate` and the pool's texts per second (mps ÷ parts a text).
 * Scheduler spreads each instant's sends evenly over the window, so a window sized to this rate keeps the message
 * parts per second within the pool's throughput: no text is throttled.
 */
export function smsPaced(rate: EffectiveTps, sms: SmsPace | undefined): EffectiveTps {
  if (!sms) return rate;
  const tps = sms.mps / sms.partsPerText;
  if (tps >= rate.tps) return rate;
  const parts = sms.partsPerText === 1 ? "1 part" : `${sms.partsPerText} parts`;
  return { tps, source: `${sms.mps} message parts/s (${sms.source}) ÷ ${parts} a text` };
}

export interface WindowReport {
  mode: "volume" | "recipients";
  schedules: number;
  effectiveTps: number;
  effectiveTpsSource: string;
  windowMinutes: number;
  createTps: number;
  /** Seconds the fan-out needs to create every schedule at createTps. */
  fanOutSeconds: number;
  /** Safety margin after the fan-out before a send counts as reachable (as the launcher's). */
  marginMinutes?: number;
  rows?: number;
  /** Rows the launcher would plan: rows = recipients + rejected (every reason) + heldOut. */
  recipients?: number;
  steps?: number;
  defaultTimezone?: string;
  /** Rows whose zone was missing or unknown and took the default; rows whose zone differed only in case. */
  defaulted?: number;
  canonicalised?: number;
  /** Rows whose zone was read through the zone table or an alias; rows by zone source; the values not IANA names. */
  mapped?: number;
  bySource?: Record<ZoneSource, number>;
  unknownZones?: UnknownZoneValue[];
  /** Rows the launcher would reject, by its reasons (the same checks: recipient-rows.ts, decisions.ts). */
  rejected?: Partial<Record<RejectReason, number>>;
  /** Rows in the holdout group (not sent). */
  heldOut?: number;
  /** Sends moved or dropped by quiet time. */
  quiet?: { delayed: number; skipped: number };
  /** Uses of the templates the data check could not read, one line each; absent when none. */
  templatesNotChecked?: string[];
  /** With quiet time: the window each send's quiet check covered, chosen as the launcher chooses it. */
  quietCheckedMinutes?: number;
  /** Ascending. */
  instants?: { utc: string; count: number; zones: { zone: string; count: number }[] }[];
  peak?: { utc: string; count: number } | null;
  /** Highest summed send rate with the chosen window. */
  peakTps?: number;
  /** A warm-up (--ramp): each UTC day's sends against its cap, and the recipients moved to a later day. */
  ramp?: { source: string; moved: number; days: { date: string; sends: number; cap: number }[] };
  /** Texts: the pool's rate, the parts each text counts as, and the highest message parts per second of the window. */
  sms?: { mps: number; source: string; partsPerText: number; peakMps: number; dailyCap?: number };
  /** Text steps: the texts the launcher would plan, as its summary.json `sms` (the same code: sms-steps.ts). */
  texts?: SmsSummary;
  earliestSend?: string | null;
  latestSend?: string | null;
  /** The latest launch whose missed-time cutoff (now + fan-out bound + margin) is not after the earliest send. */
  launchBy?: string | null;
  /** Whether a launch at `now` is no later than launchBy. */
  fanOutEndsBeforeFirstSend?: boolean | null;
  /**
   * --bulk: `schedules` (and the fan-out) count bulk schedules, ⌈recipients ÷ 50⌉ per (step, instant, variant); here the
   * emails (entries), and the window each need asks for — `windowMinutes` is the larger.
   */
  bulk?: {
    schedules: number;
    emails: number;
    groups: number;
    schedulesPerRecipientStep: number;
    window: {
      emails: { minutes: number; tps: number; source: string };
      invocations: { minutes: number; tps: number; source: string };
    };
  };
}

export interface RecipientListRequest {
  file: string;
  /** Needed with a holdout or variants: the assignment hashes the campaign id with the recipient id. */
  campaignId?: string;
  rule: BaseRule;
  steps: Step[];
  defaultZone: string;
  quiet?: QuietTime;
  audience: Audience;
  /** Read and checked as the launcher does. */
  recipients: RecipientReading;
  rate: EffectiveTps;
  createTps: number;
  marginMinutes: number;
  now: number;
  /** --bulk: the rates emails and schedule invocations are held to (`rate` is the emails'). */
  bulk?: { emails: EffectiveTps; invocations: EffectiveTps };
  /** The templates folder, read: rows whose data lacks a variable are counted as the launcher rejects them. */
  templates?: TemplateSet;
  /** Rows read so far, of the file's row bound (its line count less the header). */
  progress?: RowProgress;
  /** A warm-up (--ramp), as the launcher applies it: recipients past a day's cap move to a later day. */
  ramp?: Ramp;
  /** Texts: `rate` is already paced by the number (smsPaced); reported with the peak message parts per second. */
  sms?: SmsPace;
  /** Text steps, as the launcher plans them (its phone checks, legal hours, bodies and parts: sms-steps.ts). */
  texts?: SmsRequest;
}

/** What the launcher would plan from the list, counted: rows, recipients, rejects, the zones' statuses and the sends. */
interface ListTally {
  rowBound: number;
  rows: number;
  recipients: number;
  heldOut: number;
  byStatus: Record<ZoneStatus, number>;
  unknownZones: UnknownZoneValue[];
  rejected: Partial<Record<RejectReason, number>>;
  quiet: { delayed: number; skipped: number };
  sends: PlannedSends;
  quietWindow: number;
  bulk?: BulkGroupCounts;
  ramp?: RampDays;
  texts?: SmsSteps;
}

/** The launcher's decisions for the list (without a missed-time cutoff: a launch in time misses nothing). */
function listDecider(r: RecipientListRequest, rowBound: number, quietWindow: number): SendDecider {
  return new SendDecider({
    rule: r.rule,
    steps: r.steps,
    defaultZone: r.defaultZone,
    quiet: r.quiet,
    windowMinutes: quietWindow,
    strictZones: r.recipients.strictZones,
    zoneAliases: r.recipients.zoneAliases,
    inferZone: r.recipients.inferZone,
    ambiguousZone: r.recipients.ambiguousZone,
    // A recurring send starts where the launcher's would: its cutoff (now + fan-out bound + margin).
    recurringStartMs:
      r.rule.kind === "every"
        ? missedCutoff(r.now, { rowBound, steps: 1, createTps: r.createTps, marginMinutes: r.marginMinutes })
        : undefined,
  });
}

async function tallyRecipientList(r: RecipientListRequest): Promise<ListTally> {
  const csv = await openRecipientCsv(r.file, r.recipients.encoding);
  // The launcher's checks and decisions (without a missed-time cutoff: a launch in time, see launchBy, misses nothing).
  const columns = recipientColumns(r.file, csv.header, r.rule.kind === "after" ? r.rule.column : undefined);
  // The line count bounds the rows: the duplicate sets are sized for it (and the launch-by time needs it).
  const rowBound = await countLines(r.file);
  const checker = new RecipientChecker(columns, { steps: r.steps.length, expectedRows: rowBound, ...r.recipients });
  // The window quiet time covers, as the launcher chooses it (window.ts quietCheckWindowMinutes).
  const quietWindow = quietCheckWindowMinutes({
    quiet: r.quiet,
    schedulesBound: rowBound * (r.rule.kind === "every" ? 1 : r.steps.length),
    tps: r.rate.tps,
  });
  const decider = listDecider(r, rowBound, quietWindow);
  const split = new AudienceSplit(r.campaignId ?? "", r.audience);
  const dataCheck =
    r.templates && new TemplateDataCheck(r.templates, r.steps, r.audience, columns, r.bulk !== undefined);
  // The launcher's text steps, placed with room for the window it would choose (plan.ts openPlan).
  const schedulesBound = rowBound * r.steps.length;
  const textWindow = (t: SmsRequest) =>
    textWindowMinutes({ legalHours: t.legalHours, quietWindow, schedulesBound, tps: r.rate.tps });
  const texts = r.texts && new SmsSteps(r.texts, r.steps, columns, textWindow(r.texts), r.file);
  const sends = new PlannedSends();
  const ramp = r.ramp && new RampDays(r.ramp);
  const bulk = r.bulk && new BulkGroupCounts();
  const slots = r.audience.variants.length;
  const byStatus = noStatuses();
  const rejected: Partial<Record<RejectReason, number>> = {};
  const quiet = { delayed: 0, skipped: 0 };
  let rows = 0;
  let recipients = 0;
  let heldOut = 0;
  try {
    for await (const rec of csv.records) {
      if (++rows % PROGRESS_EVERY_ROWS === 0) r.progress?.(rows, "rows read", rowBound - 1);
      // The launcher's order: the row's checks, its zone and send times, then the holdout; then planned.
      const row = checker.check(rec);
      let decided = isReject(row) ? undefined : decider.decide(row.rawZone, row.timing, row);
      const reason = isReject(row) ? row.reason : (decided!.reject?.reason ?? decided!.noSendLeft);
      if (reason) {
        rejected[reason] = (rejected[reason] ?? 0) + 1;
        continue;
      }
      const group = split.active ? split.groupOfRecipient((row as RecipientRow).id) : NO_VARIANT;
      if (group === HOLDOUT) {
        heldOut++;
        continue;
      }
      const placed = ramp && placeRow(ramp, decider, row as RecipientRow, decided!); // the launcher's warm-up
      if (placed) decided = placed.decided;
      if (dataCheck?.lacking((row as RecipientRow).fields, group, (k) => decided!.steps[k].time !== undefined)) {
        rejected["missing-template-data"] = (rejected["missing-template-data"] ?? 0) + 1;
        continue;
      }
      const texted = texts?.row(row as RecipientRow, decided!); // the launcher's texts (phone, legal hours, parts)
      if (texted && isTextReject(texted)) {
        rejected[texted.reason] = (rejected[texted.reason] ?? 0) + 1;
        continue;
      }
      if (texted) texts!.count(texted);
      if (texted) decided = texted.decided;
      if (placed) ramp!.take(placed);
      bulk?.add(decided!, group === NO_VARIANT ? slots : group);
      recipients++;
      byStatus[decided!.status]++;
      for (const d of decided!.steps) {
        if (d.quiet === "delayed" && d.time) quiet.delayed++; // (not a step that collided after the delay)
        if (d.quiet === "skipped") quiet.skipped++;
      }
      sends.add(decided!.zone, decided!.steps);
    }
  } finally {
    checker.close();
  }
  decider.refuseRecurringQuietNights("computed");
  const unknownZones = decider.unknownZones();
  const counted = { rowBound, rows, recipients, heldOut, byStatus, unknownZones, rejected, quiet, sends, quietWindow };
  return { ...counted, bulk, ramp, texts };
}

function noStatuses(): Record<ZoneStatus, number> {
  return { ok: 0, canonicalised: 0, mapped: 0, ambiguous: 0, latlon: 0, postal: 0, phone: 0, country: 0, defaulted: 0 };
}

/** The report's zone counts: rows defaulted, re-cased or mapped, by source, and the values not IANA names. */
function zoneCounts(byStatus: Record<ZoneStatus, number>, unknownZones: UnknownZoneValue[]) {
  const bySource = emptyBySource();
  for (const [status, count] of Object.entries(byStatus)) bySource[zoneSourceOf(status as ZoneStatus)] += count;
  const { defaulted, canonicalised, mapped } = byStatus;
  return { defaulted, canonicalised, mapped, bySource, unknownZones };
}

export async function sizeRecipientList(
  r: RecipientListRequest,
): Promise<{ fits: true; report: WindowReport } | { fits: false; requiredTps: number; quietShortfall?: string }> {
  const tally = await tallyRecipientList(r);
  const { rowBound, rows, recipients, heldOut, byStatus, unknownZones, rejected, quiet, sends, quietWindow } = tally;
  const { bulk, ramp, texts } = tally;
  const histogram = sends.instants();
  const instants = histogram.instants();
  const emailsSized = minimumWindowMinutes(instants, r.rate.tps);
  if (!emailsSized.fits) return { fits: false, requiredTps: emailsSized.requiredTps };
  const bulkCount = bulk?.schedules();
  const invocationsSized =
    bulkCount && r.bulk && minimumWindowMinutes(bulkCount.invocations.instants(), r.bulk.invocations.tps);
  if (invocationsSized && !invocationsSized.fits) return { fits: false, requiredTps: invocationsSized.requiredTps };
  const sized =
    invocationsSized && invocationsSized.windowMinutes > emailsSized.windowMinutes ? invocationsSized : emailsSized;
  const quietShortfall = r.quiet && quietWindowShortfall(sized.windowMinutes, quietWindow);
  if (quietShortfall) return { fits: false, requiredTps: r.rate.tps, quietShortfall };
  // (A recurring schedule is one schedule; the histogram holds each of its occurrences in the sizing span.)
  const schedules = bulkCount ? bulkCount.schedules : sends.schedules;
  const fanOut = fanOutSeconds(schedules, r.createTps);
  const pace = { rowBound, steps: r.steps.length, createTps: r.createTps, marginMinutes: r.marginMinutes };
  const iso = (ms: number) => new Date(ms).toISOString();
  const first = instants[0];
  const peak = peakOf(instants);
  return {
    fits: true,
    report: {
      mode: "recipients",
      schedules,
      effectiveTps: r.rate.tps,
      effectiveTpsSource: r.rate.source,
      windowMinutes: sized.windowMinutes,
      createTps: r.createTps,
      fanOutSeconds: fanOut,
      marginMinutes: r.marginMinutes,
      rows,
      recipients,
      steps: r.steps.length,
      defaultTimezone: r.defaultZone,
      ...zoneCounts(byStatus, unknownZones),
      rejected,
      heldOut,
      quiet,
      ...(r.quiet ? { quietCheckedMinutes: quietWindow } : {}),
      instants: instants.map((i) => ({ utc: iso(i.utcMs), count: i.count, zones: i.zones })),
      peak: peak ? { utc: iso(peak.utcMs), count: peak.count } : null,
      peakTps: Math.round(peakTpsWith(instants, sized.windowMinutes) * 100) / 100,
      ...(r.sms && { sms: smsReport(r.sms, peakTpsWith(instants, sized.windowMinutes)) }),
      ...(texts && { texts: smsSummary(texts) }),
      ...(ramp && { ramp: { source: ramp.ramp.source, moved: ramp.moved, days: rampDays(instants, ramp) } }),
      earliestSend: first ? iso(first.utcMs) : null,
      latestSend: instants.length ? iso(instants[instants.length - 1].utcMs) : null,
      launchBy: first ? iso(latestLaunch(first.utcMs, pace)) : null,
      fanOutEndsBeforeFirstSend: first ? r.now <= latestLaunch(first.utcMs, pace) : null,
      ...(bulkCount &&
        r.bulk &&
        invocationsSized && {
          bulk: {
            schedules: bulkCount.schedules,
            emails: sends.schedules,
            groups: bulkCount.groups,
            schedulesPerRecipientStep: sends.schedules
              ? Math.round((bulkCount.schedules / sends.schedules) * 1e4) / 1e4
              : 0,
            window: {
              emails: { minutes: emailsSized.windowMinutes, tps: r.bulk.emails.tps, source: r.bulk.emails.source },
              invocations: {
                minutes: invocationsSized.windowMinutes,
                tps: r.bulk.invocations.tps,
                source: r.bulk.invocations.source,
              },
            },
          },
        }),
    },
  };
}

/** The instant with the most sends (the first of equals), or undefined without one. */
function peakOf<I extends { count: number }>(instants: readonly I[]): I | undefined {
  return instants.reduce<I | undefined>((best, i) => (!best || i.count > best.count ? i : best), undefined);
}

/** The texts' pace in the report: the highest message parts per second is the peak send rate × parts a text. */
function smsReport(sms: SmsPace, peakTps: number): NonNullable<WindowReport["sms"]> {
  return { ...sms, peakMps: Math.round(peakTps * sms.partsPerText * 100) / 100 };
}

/** Sends per UTC day with the ramp's cap of each day. */
function rampDays(instants: { utcMs: number; count: number }[], ramp: RampDays) {
  const days: { date: string; sends: number; cap: number }[] = [];
  for (const i of instants) {
    const date = new Date(i.utcMs).toISOString().slice(0, 10);
    if (days.at(-1)?.date === date) days.at(-1)!.sends += i.count;
    else days.push({ date, sends: i.count, cap: ramp.capOfDate(date) });
  }
  return days;
}
