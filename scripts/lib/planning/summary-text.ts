/**
 * launch-campaign's console summary of a plan: what was planned and rejected, the zones, missed and quiet sends, the
 * window and the fan-out, a bulk plan's schedules and signing, and the files written.
 */
import { MIN_GAP_MINUTES } from "../../../infra/core/timing/promises";
import { count, counted, formatDuration, plural } from "../text/format";
import { PlanSummary } from "./plan-summary";
import { inferredText, mappedText } from "./row-zones";
import { smsLines } from "./sms-summary";

export function formatSummary(s: PlanSummary): string[] {
  const reasons = Object.entries(s.rejected.byReason)
    .map(([r, c]) => `${r} ${count(c!)}`)
    .join(", ");
  const lines = [
    `Campaign ${s.campaignId}: ${count(s.rows)} rows → ${count(s.recipientsPlanned)} recipients planned, ${count(s.schedules)} schedules; ${count(s.rejected.total)} rejected${reasons ? ` (${reasons})` : ""}${s.audience?.holdout.percent ? `; ${count(s.heldOut)} held out` : ""}`,
    `  send time: ${s.sendTime}`,
    ...(s.recurring
      ? [
          `  recurring: one schedule per recipient from ${s.recurring.startDate} (now + fan-out + margin) to the end of --until (local midnight, later when the last send's window runs past it; last ${s.recurring.lastEndDate ?? "-"}); each holds one of the Region's schedules until then`,
        ]
      : []),
    `  steps: ${s.steps.map((x) => `${x.step} ${x.offset} ${x.template}${x.channel === "sms" ? ` (sms, ${counted(x.parts ?? 0, "part")})` : ""}: ${count(x.schedules)}`).join("; ")}`,
    `  zones: ${count(s.zones.defaulted)} without a known zone → ${s.zones.defaultTimezone}, ${count(s.zones.canonicalised)} re-cased or trimmed${s.zones.mapped ? `, ${count(s.zones.mapped)} mapped (${mappedText(s.zones.unknown)}; notes.csv)` : ""}${inferredText(s.zones.bySource)}`,
    // A recurring schedule starts at the cutoff: nothing is missed, moved or sent now.
    ...(s.recurring
      ? []
      : [
          `  missed (--missed ${s.missed.policy}, due before ${s.missed.cutoff}): ${count(s.missed.skipped)} skipped, ${count(s.missed.sentNow)} sent now, ${count(s.missed.movedToNextDay)} moved to the next day`,
        ]),
  ];
  if (s.audience) {
    const groups = s.audience.variants.map(
      (v) => `${v.name} ${v.percent}% (${v.step1Template}): ${count(v.recipients)}`,
    );
    if (s.audience.holdout.percent)
      groups.push(`holdout ${s.audience.holdout.percent}%: ${count(s.audience.holdout.recipients)}`);
    // Right after the steps line, wherever it is (a recurring campaign has a line before it).
    const afterSteps = lines.findIndex((l) => l.startsWith("  steps:")) + 1;
    lines.splice(afterSteps, 0, `  ${s.audience.variants.length ? "variants" : "audience"}: ${groups.join("; ")}`);
  }
  if (s.quiet)
    lines.push(
      `  quiet time (${s.quiet.rule}, --quiet ${s.quiet.policy}, over each send's ${s.window.quietCheckedMinutes}-minute window): ${count(s.quiet.delayed)} delayed, ${count(s.quiet.skipped)} skipped`,
    );
  if (s.collisions.length)
    lines.push(
      `  collisions: ${s.collisions
        .map(
          (c) =>
            `step ${c.step} not planned for ${counted(c.recipients, "recipient")} (${c.reason === "out-of-order" ? "before" : `within ${MIN_GAP_MINUTES} minutes of`} step ${c.with})`,
        )
        .join("; ")}`,
    );
  if (s.templatesNotChecked) lines.push(`  templates: not checked: ${s.templatesNotChecked.join("; ")}`);
  if (s.idsDifferingOnlyInCase)
    lines.push(
      `  ids: ${count(s.idsDifferingOnlyInCase)} differ from an earlier id only in case or surrounding spaces (planned separately)`,
    );
  lines.push(
    s.recurring
      ? `  sends: first ${s.firstSend ?? "-"}; the window is sized on the occurrences of the first ${s.recurring.sizedOnDays} days (last ${s.lastSend ?? "-"})`
      : `  sends: first ${s.firstSend ?? "-"}, last ${s.lastSend ?? "-"}`,
    ...daysLines(s),
    `  window: ${s.window.minutes} ${plural(s.window.minutes, "minute")} (${s.window.source}${windowShortfall(s) ?? ""}; ${count(s.window.effectiveTps)}/s, ${s.window.effectiveTpsSource})`,
    `  fan-out: ≈ ${formatDuration(s.fanOut.etaSeconds)} at ${count(s.fanOut.createTps)} CreateSchedule/s`,
    ...bulkLines(s),
    ...smsLines(s.sms),
    `  files: ${[`${s.files.plan ?? "plan.jsonl not kept (--no-local-plan)"} (sha256 ${s.planSha256.slice(0, 16)}…)`, s.files.rejects, s.files.notes, s.files.holdout, s.files.summary].filter(Boolean).join(", ")}`,
  );
  return lines;
}

/** With a warm-up: each UTC day's sends against its cap, and the recipients moved. */
function daysLines(s: PlanSummary): string[] {
  if (!s.ramp) return [];
  const days = s.utcDays.map((d) => `${d.date} ${count(d.sends)}/${count(d.cap!)}`).join(", ");
  return [
    `  days (UTC, sends/cap, ${s.ramp.source}): ${days}; ${counted(s.ramp.moved, "recipient")} moved to a later day (notes.csv)`,
  ];
}

/** A bulk plan's lines: its schedules against its entries, each need's window, and what signed its links. */
function bulkLines(s: PlanSummary): string[] {
  const b = s.bulk;
  if (!b) return [];
  const need = (w: { minutes: number | null; tps: number; source: string }) =>
    `${w.minutes === null ? "none up to 1,440 minutes" : `${w.minutes} ${plural(w.minutes, "minute")}`} at ${count(w.tps)}/s (${w.source})`;
  return [
    `  bulk: ${count(b.schedules)} schedules for ${count(b.entries)} entries (${b.schedulesPerRecipientStep} a recipient-step; ${b.largestSchedule} entries at most, ${b.smallestSchedule} at least${b.splitEarly ? `; ${count(b.splitEarly)} written before full to bound memory` : ""})`,
    `  bulk window: emails ${need(b.window.emails)}; schedule invocations ${need(b.window.invocations)}`,
    `  unsubscribe: links to ${b.unsubscribe.baseUrl}, ${b.unsubscribe.source}`,
    b.contactList.checked
      ? `  contact list ${b.contactList.contactListName}: ${count(b.contactList.optedOut)} ${plural(b.contactList.optedOut, "address", "addresses")} opted out of topic ${b.contactList.topicName} or of every topic; ${count(b.contactList.rejected)} ${plural(b.contactList.rejected, "row")} rejected (opted-out)`
      : `  contact list: not checked (dry run: no AWS call); a launch reads it and rejects the addresses opted out in SES (opted-out)`,
  ];
}

/** When a given window is smaller than the sends need: by how much, and the peak rate it gives. */
export function windowShortfall(s: PlanSummary): string | undefined {
  const w = s.window;
  // A computed window holds the rate by construction (its peakTps is what SES sees, checked at launch).
  if (w.source === "computed" || w.peakTps === undefined || w.peakTps <= w.effectiveTps) return undefined;
  const need =
    w.minimumMinutes === undefined
      ? "no window up to 1,440 minutes holds the sends"
      : `below the ${w.minimumMinutes} minutes the sends need`;
  return `; ${need}: peak ${count(w.peakTps)}/s against ${count(w.effectiveTps)}/s, so sends will be throttled and arrive late`;
}
