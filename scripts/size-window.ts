/**
 * Sizes the EventBridge Scheduler flexible time window of a campaign, from volume or from the real recipient list.
 * See COMMAND (its --help).
 */
import { scheduler } from "../infra/core/plan/quotas";
import {
  bulkRatesFromFlags,
  nowFromFlag,
  PACE_FLAGS,
  paceFromFlags,
  RATE_FLAGS,
  RATE_GROUP,
  rateFromFlags,
  RECIPIENT_FLAGS,
  recipientOptionsFromFlags,
  SEND_TIME_FLAGS,
  timingFromFlags,
  recurringWindowRefusal,
} from "./lib/cli/campaign-flags";
import { count, counted, formatDuration, plural } from "./lib/text/format";
import { commandMain, runMain } from "./lib/cli/run";
import { Command } from "./lib/cli/flags";
import { progressFlag, progressReporter } from "./lib/cli/progress";
import { CONFIG_FLAG } from "./lib/cli/config-file";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { int } from "./lib/cli/parsers";
import {
  BULK_HELP,
  campaignFlag as campaignNote,
  jsonFlag,
  RECIPIENTS,
  SMS_FLAGS,
  TEMPLATE,
  TEMPLATES,
} from "./lib/cli/common-flags";
import { sizingSpanDays } from "../infra/core/timing/recurrence";
import { sizeRecipientList, SmsPace, smsPaced, WindowReport } from "./lib/planning/size-window";
import { rampFromFlag, withDailyCap } from "./lib/planning/ramp";
import { smsPaceFromFlags } from "./lib/cli/sms-flags";
import { smsRequestFromFlags } from "./lib/cli/sms-launch";
import { EffectiveTps, fanOutSeconds, volumeWindowMinutes } from "./lib/planning/window";
import { FindingsError, UsageError } from "../infra/core/errors";
import { campaignTemplates, warnNotChecked } from "./lib/templates/campaign-templates";
import { inferredText, mappedText } from "./lib/planning/row-zones";

const FLAGS = {
  ...CONFIG_FLAG,
  schedules: {
    type: "string",
    value: "N",
    parse: int(0),
    help: "size from volume: this many schedules",
    group: "Volume or list",
    oneOf: { group: "what is sized", form: "schedules" },
  },
  recipients: {
    ...RECIPIENTS,
    note: "or size from it, as launch-campaign plans it",
    group: "Volume or list",
    oneOf: { group: "what is sized", form: "recipients" },
  },
  campaign: {
    ...campaignNote("with --variant or --holdout: the id the assignment hashes").campaign,
    group: "Volume or list",
  },
  ...SEND_TIME_FLAGS,
  ...RECIPIENT_FLAGS,
  ...RATE_FLAGS,
  ...PACE_FLAGS,
  ...SMS_FLAGS,
  bulk: {
    type: "boolean",
    help: BULK_HELP,
    note: "sized as launch-campaign --bulk: emails held to the SES rate, schedules to the invocation quota",
    group: RATE_GROUP,
  },
  template: { ...TEMPLATE, note: "step 1's, as the launcher takes it (checked)", group: "Volume or list" },
  templates: { ...TEMPLATES, group: "Volume or list" },
  ...jsonFlag(undefined, RATE_GROUP),
  ...progressFlag(RATE_GROUP),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "size-window",
  usage: [
    "--schedules N (--tps T | [--invocation-tps T] [--ses-rate R]) [--create-tps C] [--json]",
    "--recipients FILE --date YYYY-MM-DD --hour H [flags] [--json]",
    "--config campaign.yaml [flags] [--json]",
  ],
  summary: `The smallest FlexibleTimeWindow (minutes) that keeps sends within the effective TPS (--tps, or the lower of the
invocation quota and the SES rate). From volume: ⌈schedules ÷ TPS ÷ 60⌉. From a list: every row's send instants as the
launcher plans them (the same flags and code; its rejects and the holdout are left out and reported), nearby instants
added up; "launch by" is the latest launch whose missed-time cutoff (now + fan-out + margin) reaches the first send.`,
  flags: FLAGS,
  regroup: { "Recipient list": "Volume or list", Campaign: "Volume or list" },
  // A launch's campaign file sizes as it is: its launch-only keys (dryRun, out, …) are accepted and ignored here.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  configAlso: () => require("./lib/cli/launch-flags").LAUNCH_FLAGS,
  exitCodes: EXIT_CODES["size-window"],
  changesAws: false,
  reports: true,
  reference: "docs/window.md",
};

/** The CLI; returns the exit code. Output goes through `io` so tests can run it in-process. */
export const main = commandMain(COMMAND, async (f, io): Promise<number> => {
  if (f.bulk && f.recipients === undefined)
    throw new UsageError("--bulk needs --recipients FILE: bulk schedules depend on who shares an instant");
  if (f.bulk && f.every !== undefined)
    throw new UsageError(
      `--bulk does not apply to --every ${f.every}: a bulk schedule is one-time (at()); a recurring send is one schedule per recipient`,
    );
  const bulk = f.bulk ? bulkRatesFromFlags(f) : undefined;
  const flagRate = bulk?.emails ?? rateFromFlags(f);
  const { createTps, marginMinutes } = paceFromFlags(f);

  let report: WindowReport;
  let recurringDays: number | undefined;
  /** Printed after the report, like the launcher's refusal. */
  let nothing: string | undefined;
  if (f.schedules !== undefined) {
    if (f.recipients !== undefined) throw new UsageError("give --schedules or --recipients, not both");
    if (f.ramp !== undefined) throw new UsageError("--ramp needs --recipients: it moves recipients, not schedules");
    if (f["sms-daily-cap"] !== undefined)
      throw new UsageError("--sms-daily-cap needs --recipients: it moves recipients, not schedules");
    report = volumeReport(f.schedules, flagRate, smsPaceFromFlags(f, []), createTps);
  } else if (f.recipients !== undefined) {
    const timing = timingFromFlags(f, f.template);
    const campaignId = f.campaign;
    if (campaignId === undefined && (timing.audience.variants.length || timing.audience.holdoutBasisPoints))
      throw new UsageError(
        "--variant and --holdout need --campaign ID: recipients are assigned from the campaign and recipient ids",
      );
    // Text steps as the launcher takes them (their sms.txt checked; --bulk refused; the warning without legal hours).
    const texts = smsRequestFromFlags(f, timing.steps, timing.audience, io);
    const templates = campaignTemplates(f.templates, timing.steps, timing.audience);
    warnNotChecked(templates.notChecked, (t) => io.err(t));
    const rows = progressReporter(io, f.progress, "sizing");
    for (const flag of ["ramp", "sms-daily-cap"] as const)
      if (f[flag] !== undefined && f.every !== undefined)
        throw new UsageError(
          `--${flag} does not apply to --every ${f.every}: a recurring schedule sends every occurrence`,
        );
    const now = nowFromFlag(f.now);
    const sms = smsPaceFromFlags(f, timing.steps);
    const rate = smsPaced(flagRate, sms);
    const sized = await sizeRecipientList({
      file: f.recipients,
      campaignId,
      ...timing,
      recipients: recipientOptionsFromFlags(f),
      rate,
      createTps,
      marginMinutes,
      now,
      bulk,
      templates: templates.set,
      progress: rows.report,
      ramp: withDailyCap(rampFromFlag(f.ramp, now), sms?.dailyCap, now),
      sms,
      texts,
    }).finally(() => rows.end());
    if (!sized.fits)
      throw new FindingsError(
        sized.quietShortfall ?? (sms ? textsTooMany(rate.tps) : tooLarge(sized.requiredTps, rate.tps)),
      );
    if (sized.report.schedules === 0) nothing = nothingToSend(f.recipients, sized.report);
    const tooLong = recurringWindowRefusal(timing.rule, f.every, sized.report.windowMinutes, "computed");
    if (tooLong) throw new FindingsError(tooLong);
    report = { ...sized.report, ...(templates.notChecked.length ? { templatesNotChecked: templates.notChecked } : {}) };
    if (timing.rule.kind === "every") recurringDays = sizingSpanDays(timing.rule.recurrence);
  } else {
    throw new UsageError("give --schedules N or --recipients FILE (see --help)");
  }

  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : formatReport(report, recurringDays));
  if (nothing) io.err(`error: ${nothing}\n`);
  return nothing ? 1 : 0;
});

/** From volume alone: ⌈schedules ÷ TPS ÷ 60⌉ minutes, the TPS paced by the pool's number with texts. */
function volumeReport(schedules: number, flagRate: EffectiveTps, sms: SmsPace | undefined, createTps: number) {
  const rate = smsPaced(flagRate, sms);
  const windowMinutes = volumeWindowMinutes(schedules, rate.tps);
  if (windowMinutes > scheduler.flexibleWindowMinutes.max) {
    const requiredTps = Math.ceil(schedules / (scheduler.flexibleWindowMinutes.max * 60));
    throw new FindingsError(rate === flagRate ? tooLarge(requiredTps, rate.tps) : textsTooMany(rate.tps));
  }
  const report: WindowReport = {
    mode: "volume",
    schedules,
    effectiveTps: rate.tps,
    effectiveTpsSource: rate.source,
    windowMinutes,
    createTps,
    fanOutSeconds: fanOutSeconds(schedules, createTps),
  };
  return report;
}

/** The rule for rows, as the launcher's: rejected rows are counted by reason; a list with nothing left to send is a finding. */
function nothingToSend(file: string, r: WindowReport): string {
  const reasons = Object.entries(r.rejected ?? {})
    .map(([reason, n]) => `${reason} ${count(n!)}`)
    .join(", ");
  if (!r.rows) return `nothing to send: ${file} has no row`;
  const held = r.heldOut ? `${reasons ? "; " : ""}${count(r.heldOut)} held out` : "";
  return `nothing to send: every row of ${file} was ${reasons ? "rejected" : "held out"} (${reasons}${held})`;
}

function tooLarge(requiredTps: number, tps: number): string {
  const campaigns = Math.ceil(requiredTps / tps);
  return (
    `no flexible window up to ${scheduler.flexibleWindowMinutes.max} minutes keeps sends within ${tps}/s: ` +
    `raise the Scheduler invocation quota and the SES sending rate to at least ${requiredTps}/s, ` +
    `or split the campaign into ${campaigns} campaigns sent at different times (${formatDuration(scheduler.flexibleWindowMinutes.max * 60)} window each)`
  );
}

/** Texts a pool cannot send within Scheduler's longest window: more numbers, or fewer texts a day. */
function textsTooMany(textsPerSecond: number): string {
  const max = scheduler.flexibleWindowMinutes.max;
  return (
    `no flexible window up to ${max} minutes keeps texts within ${count(Math.round(textsPerSecond * 1000) / 1000)}/s (the pool's message parts per second ÷ parts a text): ` +
    `spread them over days with --sms-daily-cap N (at most ${count(Math.floor(textsPerSecond * max * 60))} texts from one instant a day), or add numbers to the pool and raise --sms-mps`
  );
}

/** The texts the launcher would plan, as its summary's line says them (without its notes file). */
function textsLine(t: NonNullable<WindowReport["texts"]>): string {
  const legal =
    t.legalHours === "none"
      ? "no legal hours"
      : `legal hours ${t.legalHours} (--legal-hours-miss ${t.legalHoursMiss}): ${count(t.moved)} moved, ${count(t.skipped)} skipped`;
  return `  texts: ${counted(t.texts, "text")}, ${counted(t.parts, "message part")} (at most ${t.maxSegments} a text); ${legal}`;
}

const utcLabel = (iso: string) => iso.slice(0, 16).replace("T", " ");

/** The human-readable report; `recurringDays`: a recurring send, sized on that many days of occurrences. */
function formatReport(r: WindowReport, recurringDays?: number): string {
  const out: string[] = [];
  if (r.mode === "recipients") {
    const notes = [
      r.defaulted ? `${count(r.defaulted!)} without a known zone → ${r.defaultTimezone}` : "",
      r.canonicalised ? `${count(r.canonicalised!)} zone ${plural(r.canonicalised!, "name")} re-cased or trimmed` : "",
      r.mapped ? `${count(r.mapped!)} mapped: ${mappedText(r.unknownZones ?? [])}` : "",
      inferredText(r.bySource).slice(2),
    ].filter(Boolean);
    const rejected = Object.entries(r.rejected ?? {});
    const left = rejected.reduce((n, [, c]) => n + c!, r.heldOut ?? 0);
    const steps = `${r.steps} ${plural(r.steps!, "step")}`;
    out.push(
      `Recipients: ${count(r.rows!)} rows${notes.length ? ` (${notes.join(", ")})` : ""}${left ? `, ${steps}: ` : ` × ${steps} = `}${count(r.schedules)} schedules`,
    );
    if (left) {
      const reasons = rejected.map(([reason, c]) => `${reason} ${count(c!)}`).join(", ");
      out.push(
        `  not sent: ${reasons ? `${count(left - (r.heldOut ?? 0))} rejected as the launcher would (${reasons})` : ""}${reasons && r.heldOut ? ", " : ""}${r.heldOut ? `${count(r.heldOut)} held out` : ""}`,
      );
    }
    if (recurringDays)
      out.push(
        `  recurring: one schedule per recipient; below, its occurrences in the first ${recurringDays} days after the start, which the window holds`,
      );
    if (r.texts) out.push(textsLine(r.texts));
    if (r.quiet && (r.quiet.delayed || r.quiet.skipped))
      out.push(`  quiet time: ${counted(r.quiet.delayed, "send")} delayed, ${count(r.quiet.skipped)} skipped`);
    if (r.instants!.length) {
      out.push("", "Send instants (UTC)");
      const widest = Math.max(...r.instants!.map((i) => i.count));
      for (const i of r.instants!) {
        const names =
          i.zones
            .slice(0, 2)
            .map((z) => z.zone)
            .join(", ") + (i.zones.length > 2 ? ` +${i.zones.length - 2}` : "");
        const bar = "█".repeat(Math.max(1, Math.round((i.count / widest) * 30)));
        out.push(`  ${utcLabel(i.utc)}  ${count(i.count).padStart(11)}  ${bar.padEnd(30)}  ${names}`);
      }
      out.push("", `Peak instant: ${utcLabel(r.peak!.utc)} UTC, ${count(r.peak!.count)} sends`);
    }
    if (r.ramp)
      out.push(
        "",
        `Days (UTC; ${r.ramp.source}: ${counted(r.ramp.moved, "recipient")} moved to a later day)`,
        ...r.ramp.days.map((d) => `  ${d.date}  ${count(d.sends).padStart(11)} of ${count(d.cap)}`),
      );
  } else {
    out.push(`Schedules: ${count(r.schedules)}`);
  }
  out.push(`Effective TPS: ${count(r.effectiveTps)}/s (${r.effectiveTpsSource})`);
  if (r.sms)
    out.push(
      `Texts: ${count(r.sms.mps)} message parts/s (${r.sms.source}), each text counted as ${counted(r.sms.partsPerText, "part")}; peak ${count(r.sms.peakMps)} parts/s with the window`,
    );
  out.push(
    `Flexible window: ${r.windowMinutes} ${plural(r.windowMinutes, "minute")}${r.peakTps !== undefined ? ` (peak ${count(r.peakTps)}/s)` : ""}`,
  );
  if (r.bulk)
    out.push(
      `Bulk: ${count(r.bulk.schedules)} schedules for ${count(r.bulk.emails)} emails (${r.bulk.schedulesPerRecipientStep} a recipient-step, ${count(r.bulk.groups)} groups of step, instant and variant)`,
      `  window for the emails: ${r.bulk.window.emails.minutes} min at ${count(r.bulk.window.emails.tps)}/s (${r.bulk.window.emails.source}); for the schedule invocations: ${r.bulk.window.invocations.minutes} min at ${count(r.bulk.window.invocations.tps)}/s (${r.bulk.window.invocations.source})`,
    );
  out.push(
    `Fan-out: ${count(r.schedules)} CreateSchedule calls at ${count(r.createTps)}/s ≈ ${formatDuration(r.fanOutSeconds)}`,
  );
  if (r.earliestSend && recurringDays)
    out.push(
      `First occurrence ${utcLabel(r.earliestSend)} UTC: a launch after ${utcLabel(r.launchBy!)} UTC starts with a later one (the launcher's cutoff: fan-out + ${r.marginMinutes}-minute margin)`,
    );
  else if (r.earliestSend) {
    out.push(
      `First send ${utcLabel(r.earliestSend)} UTC, last ${utcLabel(r.latestSend!)} UTC: launch by ${utcLabel(r.launchBy!)} UTC (the launcher's cutoff: fan-out + ${r.marginMinutes}-minute margin)${r.fanOutEndsBeforeFirstSend ? "" : " — too late from now: early sends would be missed"}`,
    );
  }
  return out.join("\n") + "\n";
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
