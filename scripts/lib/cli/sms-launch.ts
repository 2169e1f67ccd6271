/**
 * The launcher's text steps (docs/sms.md, "Launching texts"): --channel, --step +1d:sms:NAME, --max-segments,
 * --legal-hours and --legal-hours-miss turned into the planner's SMS request, what a text step cannot be combined
 * with, and the warning of texts sent without legal hours.
 */
import { Step } from "../../../infra/core/timing/send-time";
import { Audience } from "../recipients/audience";
import { SmsRequest } from "../planning/sms-steps";
import { PlanSummary } from "../planning/plan-summary";
import { smsStepTemplates } from "../templates/sms-templates";
import { DEFAULT_MAX_SEGMENTS } from "./common-flags";
import { Io } from "./run";
import { LaunchFlags } from "./launch-run";

/**
 * The SMS request of a launch with a text step, checked; undefined without one (its flags then do nothing). size-window
 * takes the same flags through it, so that it sizes the texts the launcher would plan.
 */
export function smsRequestFromFlags(
  f: Pick<LaunchFlags, "max-segments" | "templates" | "bulk" | "legal-hours" | "legal-hours-miss">,
  steps: readonly Step[],
  audience: Audience,
  io: Io,
): SmsRequest | undefined {
  const maxSegments = f["max-segments"] ?? DEFAULT_MAX_SEGMENTS;
  const templates = smsStepTemplates(f.templates, steps, maxSegments, audience);
  if (!templates) return undefined;
  const first = steps.find((s) => s.channel === "sms")!;
  const legalHours = f["legal-hours"] ?? [];
  if (legalHours.length === 0)
    io.err(
      `warning: step ${first.number} is a text and no --legal-hours is given: texts are sent at each recipient's moment with no legal hours (docs/sms.md)\n`,
    );
  return { templates, maxSegments, legalHours, legalHoursMiss: f["legal-hours-miss"] ?? "delay" };
}

/** When the plan's window is longer than the one texts were placed with room for: why it must not be launched. */
export function textWindowShortfall(s: PlanSummary): string | undefined {
  const t = s.sms;
  if (!t || t.legalHours === "none" || s.window.minutes <= t.windowCheckedMinutes) return undefined;
  return `the sends need a flexible window of ${s.window.minutes} minutes, but texts were placed inside legal hours with room for ${t.windowCheckedMinutes}; give --window-minutes ${s.window.minutes}, or raise the send rate`;
}
