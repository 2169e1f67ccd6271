/**
 * A campaign's guardrail alarms (put by the stack's arm state machine at launch, with a one-time schedule in the
 * stack's clean-up group that deletes them once the campaign is over), deleted when the campaign is cancelled, and
 * that schedule with them: each alarm costs money for as long as it exists.
 */
import { CloudWatchClient, DeleteAlarmsCommand } from "@aws-sdk/client-cloudwatch";
import { DeleteScheduleCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { FindingsError } from "../../../infra/core/errors";
import {
  campaignAlarmNameUnder,
  GUARDRAIL_KINDS,
  guardrailCleanupGroupUnder,
} from "../../../infra/core/send/guardrails";
import { campaignTag } from "../../../infra/core/send/email-events";
import { awsCall, Deadline } from "./call";
import { isAwsError } from "./clients";

export interface GuardrailAlarmsReport {
  /** The campaign's alarms, bounce then complaint. */
  names: string[];
  /** DeleteAlarms answered (an alarm already gone counts); false in a dry run or when it failed. */
  deleted: boolean;
  /** The one-time schedule that would have deleted them (`<group>/<tag>`), deleted with them (one already gone counts). */
  deletionSchedule: string;
  /** Why they are not deleted (one line; also in the report's problems), or null. */
  problem: string | null;
}

/** The campaign's alarm names under the stack's prefix (output guardrailAlarmPrefix). */
export function campaignAlarmNames(prefix: string, campaignId: string): string[] {
  return GUARDRAIL_KINDS.map((k) => campaignAlarmNameUnder(prefix, k.kind, campaignTag(campaignId)));
}

/**
 * One DeleteAlarms of the campaign's alarms (two names, within its limit of 100), bounded by the deadline. An alarm
 * that does not exist (never armed, deleted before) is no failure: CloudWatch deletes the others all the same.
 */
export async function deleteCampaignAlarms(
  d: Deadline,
  cloudWatch: CloudWatchClient,
  prefix: string,
  campaignId: string,
  dryRun: boolean,
  scheduler?: SchedulerClient,
): Promise<GuardrailAlarmsReport> {
  const names = campaignAlarmNames(prefix, campaignId);
  const group = guardrailCleanupGroupUnder(prefix);
  const deletionSchedule = `${group}/${campaignTag(campaignId)}`;
  if (dryRun) return { names, deleted: false, deletionSchedule, problem: null };
  d.progress(`deleting guardrail alarms ${names.join(", ")}`);
  try {
    await awsCall(d, `campaign ${campaignId}: DeleteAlarms ${names.join(", ")}`, (opts) =>
      cloudWatch.send(new DeleteAlarmsCommand({ AlarmNames: names }), opts).catch((e) => {
        if (isAwsError(e, "ResourceNotFound", "ResourceNotFoundException")) return undefined;
        throw e;
      }),
    );
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    return { names, deleted: false, deletionSchedule, problem: e.message };
  }
  // The alarms are gone: their deletion schedule has nothing left to do (it would fail on alarms already gone).
  if (scheduler)
    try {
      await awsCall(d, `campaign ${campaignId}: DeleteSchedule ${deletionSchedule}`, (opts) =>
        scheduler
          .send(new DeleteScheduleCommand({ GroupName: group, Name: campaignTag(campaignId) }), opts)
          .catch((e) => {
            if (isAwsError(e, "ResourceNotFoundException")) return undefined;
            throw e;
          }),
      );
    } catch (e) {
      if (!(e instanceof FindingsError)) throw e;
      return { names, deleted: true, deletionSchedule, problem: e.message };
    }
  return { names, deleted: true, deletionSchedule, problem: null };
}
