/**
 * launch-campaign's checks of flags against each other and against the stack's outputs, between the parsers'
 * calls: what does not apply to a recurring send (--every), --window-minutes against the send-time rule and quiet time,
 * the schedule quota, and the stack a launch goes to.
 */
import { scheduler } from "../../../infra/core/plan/quotas";
import { longestFreeMinutes } from "../../../infra/core/timing/promises";
import { UsageError } from "../../../infra/core/errors";
import { journeyNamed, requireOutputs, StackOutputs } from "../aws/stack-outputs";
import { ScheduleQuota } from "../planning/schedule-quota";
import { outputsFromFlags } from "./aws-flags";
import { CampaignTiming, recurringWindowRefusal } from "./campaign-flags";
import { LaunchFlags, LaunchTarget } from "./launch-run";
import { int } from "./parsers";

/** --bulk, --missed and --grace-minutes are one-time sends' flags: refused with --every. */
export function refuseOneTimeFlagsWithEvery(f: LaunchFlags): void {
  if (f.bulk && f.every !== undefined)
    throw new UsageError(
      `--bulk does not apply to --every ${f.every}: a bulk schedule is one-time (at()) for the recipients who share its instant; a recurring send is one schedule per recipient`,
    );
  const recurringFlag =
    f.every !== undefined &&
    ([f.missed && "--missed", f["grace-minutes"] && "--grace-minutes"].find(Boolean) as string);
  if (recurringFlag)
    throw new UsageError(
      `${recurringFlag} does not apply to --every ${f.every}: occurrences before the launch's start (now + fan-out + margin) are simply not sent`,
    );
}

/** --window-minutes, within Scheduler's flexible window, a recurring rule's limit, and quiet time's longest free time. */
export function windowMinutesFromFlags(f: LaunchFlags, timing: CampaignTiming): number | undefined {
  const windowMinutes = windowFromFlag(f["window-minutes"]);
  const tooLong =
    windowMinutes === undefined
      ? undefined
      : recurringWindowRefusal(timing.rule, f.every, windowMinutes, "--window-minutes");
  if (tooLong) throw new UsageError(tooLong);
  if (windowMinutes !== undefined && timing.quiet && windowMinutes > longestFreeMinutes(timing.quiet))
    throw new UsageError(
      `--window-minutes ${windowMinutes}: longer than the longest free time quiet time leaves (${longestFreeMinutes(timing.quiet)} minutes): every send's window would touch quiet time`,
    );
  return windowMinutes;
}

function windowFromFlag(raw: string | undefined): number | undefined {
  const { min, max } = scheduler.flexibleWindowMinutes;
  return raw === undefined ? undefined : int(min, max).parse(raw, "window-minutes");
}

/** --max-schedules, else the stack output maxSchedules, else Scheduler's default quota; says which. */
export function scheduleQuotaFrom(flag: string | undefined, output: number | undefined): ScheduleQuota {
  if (flag !== undefined) return { maxSchedules: int(1, 1e12).parse(flag, "max-schedules"), source: "--max-schedules" };
  if (output !== undefined) {
    if (!(Number.isInteger(output) && output > 0))
      throw new UsageError(`stack output maxSchedules ${output}: must be a whole number above 0`);
    return { maxSchedules: output, source: "stack output maxSchedules" };
  }
  return {
    maxSchedules: scheduler.maxSchedules,
    source: "EventBridge Scheduler's default quota; --max-schedules if yours is raised",
  };
}

/**
 * The stack outputs and, when launching, where to launch. Stack outputs are needed to launch; a dry run uses them when
 * given (quota, region) but does not require them. A campaign may not share its group with one of the stack's journeys.
 */
export function stackOf(f: LaunchFlags, campaignId: string): { outputs: StackOutputs; target?: LaunchTarget } {
  const launching = !f["dry-run"];
  const outputs = launching || f.stack !== undefined || f.outputs !== undefined ? outputsFromFlags(f) : {};
  if (journeyNamed(outputs, campaignId))
    throw new UsageError(
      `--campaign ${campaignId}: this stack has a journey of that name, whose subscribers' schedules are in group campaign-${campaignId}; a campaign would share it (and its housekeeping would delete them): choose another id`,
    );
  if (!launching) return { outputs };
  const target = requireOutputs(outputs, ["bucketName", "stateMachineArn"], {
    bucketName: "bucket",
    stateMachineArn: "state-machine-arn",
  });
  return { outputs, target: { ...target, region: outputs.region } };
}
