/**
 * A campaign's guardrail alarms (put by the stack's arm state machine at launch, never deleted by the stack), deleted
 * when the campaign is cancelled: each costs money for as long as it exists.
 */
import { CloudWatchClient, DeleteAlarmsCommand } from "@aws-sdk/client-cloudwatch";
import { FindingsError } from "../../../infra/core/errors";
import { campaignAlarmNameUnder, GUARDRAIL_KINDS } from "../../../infra/core/send/guardrails";
import { campaignTag } from "../../../infra/core/send/email-events";
import { awsCall, Deadline } from "./call";
import { isAwsError } from "./clients";

export interface GuardrailAlarmsReport {
  /** The campaign's alarms, bounce then complaint. */
  names: string[];
  /** DeleteAlarms answered (an alarm already gone counts); false in a dry run or when it failed. */
  deleted: boolean;
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
): Promise<GuardrailAlarmsReport> {
  const names = campaignAlarmNames(prefix, campaignId);
  if (dryRun) return { names, deleted: false, problem: null };
  d.progress(`deleting guardrail alarms ${names.join(", ")}`);
  try {
    await awsCall(d, `campaign ${campaignId}: DeleteAlarms ${names.join(", ")}`, (opts) =>
      cloudWatch.send(new DeleteAlarmsCommand({ AlarmNames: names }), opts).catch((e) => {
        if (isAwsError(e, "ResourceNotFound", "ResourceNotFoundException")) return undefined;
        throw e;
      }),
    );
    return { names, deleted: true, problem: null };
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    return { names, deleted: false, problem: e.message };
  }
}
