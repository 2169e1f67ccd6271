/** The launcher's summary (summary.json): the tally's counts, the window, a bulk plan's figures (plan.ts makes it). */
import { describeQuietTime } from "../../../infra/core/timing/quiet-time";
import { sizingSpanDays } from "../../../infra/core/timing/recurrence";
import { describeRule } from "../../../infra/core/timing/send-rules";
import { stepOffset } from "../../../infra/core/timing/send-time";
import { ZoneSource } from "../../../infra/core/zones/zone-names";
import { templatesByVariant } from "../recipients/audience";
import { RejectReason } from "../recipients/recipient-rows";
import { BulkStats } from "./bulk-chunks";
import { MissedPolicy } from "./missed";
import { PlanPaths } from "./plan-files";
import { PlanRequest } from "./plan-request";
import { PlanTally } from "./plan-tally";
import { UnknownZoneValue } from "./row-zones";
import { RampDays } from "./ramp";
import type { SmsSteps } from "./sms-steps";
import { SmsSummary, smsSummary } from "./sms-summary";
import { EffectiveTps, fanOutSeconds, minimumWindowMinutes, peakTpsWith } from "./window";

export interface PlanSummary {
  campaignId: string;
  rows: number;
  recipientsPlanned: number;
  schedules: number;
  /** Per step; a text step also has `channel: "sms"` and its message parts. */
  steps: { step: number; offset: string; template: string; schedules: number; channel?: "sms"; parts?: number }[];
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
    /** With a window given by the caller: the smallest that holds the rate. */
    minimumMinutes?: number;
    /** The highest summed send rate (emails per second) with this window, when one fits. */
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
  /**
   * Sends (emails) per UTC day of their planned instant, in date order: what SES's daily quota (Max24HourSend) and a
   * warm-up (--ramp) are held to. A send near midnight may go out the next day within its flexible window.
   */
  utcDays: { date: string; sends: number; cap?: number }[];
  /** A warm-up (--ramp): where its caps came from and the recipients moved to a later day (each noted); else null. */
  ramp: { source: string; moved: number } | null;
  planSha256: string;
  files: PlanPaths;
  /**
   * A bulk plan (--bulk): `schedules` above counts its bulk schedules, while `steps`, `scheduled` and the audience's
   * counts are entries (one per recipient and step, as without --bulk). Null without --bulk.
   */
  bulk: BulkSummary | null;
  /** The texts (channel sms steps): their parts, templates and legal hours; null without a text step. */
  sms: SmsSummary | null;
}

export interface BulkSummary {
  schedules: number;
  /** Recipient-steps: one email each. */
  entries: number;
  schedulesPerRecipientStep: number;
  largestSchedule: number;
  smallestSchedule: number;
  /** Chunks written before they were full to bound memory (bulk-chunks.ts MAX_OPEN_CHARS); 0 unless the list has thousands of instants. */
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
    const peakTps = roundedPeak(instants, o.window.minutes);
    return { minutes: o.window.minutes, source: o.window.source, ...rate, fits: true, minimumMinutes, peakTps };
  }
  return {
    minutes: sized.windowMinutes,
    source: "computed",
    ...rate,
    fits: sized.fits,
    requiredTps: sized.fits ? undefined : sized.requiredTps,
    peakTps: sized.fits ? roundedPeak(instants, sized.windowMinutes) : undefined,
  };
}

const roundedPeak = (instants: { utcMs: number; count: number }[], minutes: number) =>
  Math.round(peakTpsWith(instants, minutes) * 100) / 100;

/** Sends per UTC day (YYYY-MM-DD) of their instants, in date order. */
function sendsPerUtcDay(instants: { utcMs: number; count: number }[], ramp?: RampDays): PlanSummary["utcDays"] {
  const days: PlanSummary["utcDays"] = [];
  for (const i of instants) {
    const date = new Date(i.utcMs).toISOString().slice(0, 10);
    if (days.at(-1)?.date === date) days.at(-1)!.sends += i.count;
    else days.push(ramp ? { date, sends: i.count, cap: ramp.capOfDate(date) } : { date, sends: i.count });
  }
  return days;
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

/** Schedules per step; a text step's channel and message parts. */
function stepsSummary(o: PlanRequest, t: PlanTally, sms: SmsSteps | undefined): PlanSummary["steps"] {
  return o.steps.map((s, k) => ({
    step: s.number,
    offset: stepOffset(s),
    template: s.template,
    schedules: t.schedulesByStep[k],
    ...(s.channel === "sms" ? { channel: "sms" as const, parts: sms?.tally.parts[k] ?? 0 } : {}),
  }));
}

export function summarize(
  o: PlanRequest,
  t: PlanTally,
  cutoffMs: number,
  planSha256: string,
  files: PlanPaths,
  quietWindow: number,
  bulkStats?: BulkStats,
  ramp?: RampDays,
  sms?: SmsSteps,
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
    steps: stepsSummary(o, t, sms),
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
    utcDays: sendsPerUtcDay(instants, ramp),
    ramp: ramp ? { source: ramp.ramp.source, moved: ramp.moved } : null,
    planSha256,
    files,
    bulk: bulk?.summary ?? null,
    sms: sms ? smsSummary(sms) : null,
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
    // The emails' rate with the window both needs share: what SES sees.
    peakTps: fits ? roundedPeak(emailInstants, Math.max(emails.windowMinutes, invocations.windowMinutes)) : undefined,
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
