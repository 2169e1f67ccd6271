/**
 * Sizes the EventBridge Scheduler flexible time window of a campaign, from volume or from the real recipient list.
 * See USAGE.
 */
import { scheduler } from "../infra/rules/quotas";
import {
  bulkRatesFromFlags,
  campaignFlag,
  nowFromFlag,
  PACE_FLAGS,
  PACE_FLAGS_HELP,
  paceFromFlags,
  RATE_FLAGS,
  rateFromFlags,
  RECIPIENT_FLAGS,
  RECIPIENT_FLAGS_HELP,
  recipientOptionsFromFlags,
  SEND_TIME_FLAGS,
  templateFlag,
  timingFromFlags,
  recurringWindowRefusal,
} from "./lib/cli/campaign-flags";
import { count, counted, formatDuration, plural } from "../infra/rules/format";
import { intFlag, Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { TIMING_FLAGS_HELP } from "./lib/cli/timing-flags";
import { sizingSpanDays } from "../infra/rules/recurrence";
import { sizeRecipientList, WindowReport } from "./lib/planning/size-window";
import { fanOutSeconds, volumeWindowMinutes } from "./lib/planning/window";
import { FindingsError, UsageError } from "../infra/rules/errors";
import { campaignTemplates } from "./lib/templates/campaign-templates";

const USAGE = `
Usage:
  size-window --schedules N (--tps T | [--invocation-tps T] [--ses-rate R]) [--create-tps C] [--json]
  size-window --recipients FILE (--date YYYY-MM-DD --hour H [--minute M] | --after COLUMN:+Nd|+Nh | --at INSTANT
                                | --every daily|weekdays|weekly:DAYS|monthly:D --until YYYY-MM-DD --hour H)
              [--step +3d ...] [--quiet-hours HH:MM-HH:MM] [--quiet-days DAYS] [--quiet delay|skip]
              [--campaign ID --variant NAME:PERCENT ... --holdout PERCENT] [--default-timezone ZONE]
              [--tps T | --invocation-tps T --ses-rate R] [--create-tps C] [--margin-minutes M] [--strict-zones]
              [--allow-duplicate-emails] [--encoding utf8|latin1] [--now ISO] [--bulk] [--template NAME]
              [--templates DIR|none] [--json]

Computes the smallest FlexibleTimeWindow (minutes) that keeps sends within the effective TPS: --tps, or the lower
of the Scheduler invocation quota (--invocation-tps, default ${scheduler.invocationTps}) and the SES maximum send rate (--ses-rate).

From volume: ⌈schedules ÷ TPS ÷ 60⌉ (500,000 at 5,000 TPS → 2 minutes).
From a recipient list (CSV with a header; column "timezone", IANA names; missing or unknown → --default-timezone,
default UTC): every recipient's send instant per step, windows of nearby instants added up. The row checks, the
send-time and the audience flags are launch-campaign's, with the same code: only the rows the launcher would plan
count (its rejects and the holdout are left out and reported), assuming a launch in time. "Launch by" is the latest
launch the launcher's missed-time cutoff (now + fan-out + margin) lets reach the first send.

${TIMING_FLAGS_HELP}

  --step +Nd | +Nh   a later step, N days (same local time) or hours after the first send; repeatable
  --campaign ID      with --variant or --holdout: the id the assignment hashes
${PACE_FLAGS_HELP}
${RECIPIENT_FLAGS_HELP}
  --now INSTANT      reference time for "launch by" (default: now), ISO 8601 with Z or an offset
  --bulk             as launch-campaign --bulk: schedules of up to 50 recipients who share a step's instant and
                     variant; emails are held to the SES rate (--ses-rate), schedules to the invocation quota
                     (--invocation-tps), and the window is the larger need (one-time rules only)
  --template NAME, --step +3d:NAME, --variant NAME:PERCENT:NAME   the templates, as the launcher takes them: each must
                     be in the templates folder, and rows whose data lacks a variable they use are counted as rejected
  --templates DIR|none   the templates folder (default templates/ when it exists); none: no template check
  --json             machine-readable report

Exit codes: 0 ok, 1 no window up to 1,440 minutes fits, 2 bad flags or input.
`;

if (require.main === module) runMain(() => main(process.argv.slice(2)));

/** The CLI; returns the exit code. Output goes through `io` so tests can run it in-process. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(
    argv,
    {
      schedules: { type: "string" },
      ...RATE_FLAGS,
      ...PACE_FLAGS,
      recipients: { type: "string" },
      campaign: { type: "string" },
      ...SEND_TIME_FLAGS,
      ...RECIPIENT_FLAGS,
      bulk: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      template: { type: "string" },
      templates: { type: "string" },
    },
    USAGE,
  );
  if (f.bulk && f.recipients === undefined)
    throw new UsageError("--bulk needs --recipients FILE: bulk schedules depend on who shares an instant");
  if (f.bulk && f.every !== undefined)
    throw new UsageError(
      `--bulk does not apply to --every ${f.every}: a bulk schedule is one-time (at()); a recurring send is one schedule per recipient`,
    );
  const bulk = f.bulk ? bulkRatesFromFlags(f) : undefined;
  const rate = bulk?.emails ?? rateFromFlags(f);
  const { createTps, marginMinutes } = paceFromFlags(f);

  let report: WindowReport;
  let recurringDays: number | undefined;
  if (f.schedules !== undefined) {
    if (f.recipients !== undefined) throw new UsageError("give --schedules or --recipients, not both");
    const schedules = intFlag("schedules", f.schedules as string, 0, Number.MAX_SAFE_INTEGER);
    const windowMinutes = volumeWindowMinutes(schedules, rate.tps);
    if (windowMinutes > scheduler.flexibleWindowMinutes.max) {
      const requiredTps = Math.ceil(schedules / (scheduler.flexibleWindowMinutes.max * 60));
      throw new FindingsError(tooLarge(requiredTps, rate.tps));
    }
    report = {
      mode: "volume",
      schedules,
      effectiveTps: rate.tps,
      effectiveTpsSource: rate.source,
      windowMinutes,
      createTps,
      fanOutSeconds: fanOutSeconds(schedules, createTps),
    };
  } else if (f.recipients !== undefined) {
    const timing = timingFromFlags(f, f.template === undefined ? undefined : templateFlag(f.template));
    const campaignId = f.campaign === undefined ? undefined : campaignFlag(f.campaign);
    if (campaignId === undefined && (timing.audience.variants.length || timing.audience.holdoutBasisPoints))
      throw new UsageError("--variant and --holdout need --campaign ID: recipients are assigned from the campaign and recipient ids");
    const sized = await sizeRecipientList({
      file: f.recipients,
      campaignId,
      ...timing,
      recipients: recipientOptionsFromFlags(f),
      rate,
      createTps,
      marginMinutes,
      now: nowFromFlag(f.now),
      bulk,
      templates: campaignTemplates(f.templates, timing.steps, timing.audience).set,
    });
    if (!sized.fits) throw new FindingsError(sized.quietShortfall ?? tooLarge(sized.requiredTps, rate.tps));
    const tooLong = recurringWindowRefusal(timing.rule, f.every, sized.report.windowMinutes, "computed");
    if (tooLong) throw new FindingsError(tooLong);
    report = sized.report;
    if (timing.rule.kind === "every") recurringDays = sizingSpanDays(timing.rule.recurrence);
  } else {
    throw new UsageError("give --schedules N or --recipients FILE (see --help)");
  }

  io.out(f.json ? JSON.stringify(report, null, 2) + "\n" : formatReport(report, recurringDays));
  return 0;
}

function tooLarge(requiredTps: number, tps: number): string {
  const campaigns = Math.ceil(requiredTps / tps);
  return (
    `no flexible window up to ${scheduler.flexibleWindowMinutes.max} minutes keeps sends within ${tps}/s: ` +
    `raise the Scheduler invocation quota and the SES sending rate to at least ${requiredTps}/s, ` +
    `or split the campaign into ${campaigns} campaigns sent at different times (${formatDuration(scheduler.flexibleWindowMinutes.max * 60)} window each)`
  );
}

const utcLabel = (iso: string) => iso.slice(0, 16).replace("T", " ");

/** The human-readable report; `recurringDays`: a recurring send, sized on that many days of occurrences. */
function formatReport(r: WindowReport, recurringDays?: number): string {
  const out: string[] = [];
  if (r.mode === "recipients") {
    const notes = [
      r.defaulted ? `${count(r.defaulted!)} without a known zone → ${r.defaultTimezone}` : "",
      r.canonicalised ? `${count(r.canonicalised!)} zone ${plural(r.canonicalised!, "name")} re-cased or trimmed` : "",
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
  } else {
    out.push(`Schedules: ${count(r.schedules)}`);
  }
  out.push(`Effective TPS: ${count(r.effectiveTps)}/s (${r.effectiveTpsSource})`);
  out.push(
    `Flexible window: ${r.windowMinutes} ${plural(r.windowMinutes, "minute")}${r.peakTps !== undefined ? ` (peak ${count(r.peakTps)}/s)` : ""}`,
  );
  if (r.bulk)
    out.push(
      `Bulk: ${count(r.bulk.schedules)} schedules for ${count(r.bulk.emails)} emails (${r.bulk.schedulesPerRecipientStep} a recipient-step, ${count(r.bulk.groups)} groups of step, instant and variant)`,
      `  window for the emails: ${r.bulk.window.emails.minutes} min at ${count(r.bulk.window.emails.tps)}/s (${r.bulk.window.emails.source}); for the schedule invocations: ${r.bulk.window.invocations.minutes} min at ${count(r.bulk.window.invocations.tps)}/s (${r.bulk.window.invocations.source})`,
    );
  out.push(`Fan-out: ${count(r.schedules)} CreateSchedule calls at ${count(r.createTps)}/s ≈ ${formatDuration(r.fanOutSeconds)}`);
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
