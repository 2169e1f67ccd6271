/**
 * What a launched campaign has in AWS, as cancel, move and status read it: its fan-out executions, its schedule
 * group's state, and a schedule's zone and one-time instant. Names come from infra/core/plan/naming.ts.
 */
import { parseAtExpression } from "../../../../infra/core/plan/schedule-expression";
import { GetScheduleGroupCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { DescribeExecutionCommand, ListExecutionsCommand, SFNClient } from "@aws-sdk/client-sfn";
import { IANAZone } from "luxon";
import { campaignGroupName } from "../../../../infra/core/plan/naming";

import { zonedInstant } from "../../../../infra/core/timing/send-time";
import { allPages, awsCall, Deadline } from "../call";
import { count } from "../../text/format";

export interface CampaignExecution {
  name: string;
  arn: string;
  status: string;
  startDate?: string;
}

/**
 * The fan-out executions of one campaign, recognised by their input's campaign_id whatever their name (a fan-out
 * started by hand may be named anything). Cost: ListExecutions (100 per page) and one DescribeExecution per
 * candidate. `running` lists only RUNNING executions and reads every one of them (cancel: a fan-out that is still
 * creating schedules must be found); `all` also lists finished ones, reading those named `<campaign>-…` (the
 * launcher's naming), so a long history of other campaigns is not read one by one.
 */
export async function campaignExecutions(
  d: Deadline,
  sfn: SFNClient,
  stateMachineArn: string,
  campaignId: string,
  which: "running" | "all",
  progress: (text: () => string) => void = () => {},
): Promise<CampaignExecution[]> {
  const found: CampaignExecution[] = [];
  let listed = 0;
  const statusFilter = which === "running" ? "RUNNING" : undefined;
  for await (const page of allPages(
    d,
    `campaign ${campaignId}: ListExecutions${statusFilter ? " RUNNING" : ""} on ${stateMachineArn}`,
    (nextToken, o) =>
      sfn.send(new ListExecutionsCommand({ stateMachineArn, statusFilter, maxResults: 100, nextToken }), o),
    (p) => p.nextToken,
  )) {
    for (const e of page.executions ?? []) {
      listed++;
      progress(() => `looking for campaign ${campaignId}'s fan-outs: ${count(listed)} executions listed`);
      if (e.status !== "RUNNING" && !e.name?.startsWith(`${campaignId}-`)) continue;
      const described = await awsCall(d, `campaign ${campaignId}: DescribeExecution ${e.name}`, (o) =>
        sfn.send(new DescribeExecutionCommand({ executionArn: e.executionArn }), o),
      );
      if (inputCampaignId(described.input) === campaignId)
        found.push({
          name: e.name!,
          arn: e.executionArn!,
          status: described.status ?? e.status ?? "UNKNOWN",
          startDate: e.startDate?.toISOString(),
        });
    }
  }
  return found;
}

function inputCampaignId(input: string | undefined): string | undefined {
  try {
    return JSON.parse(input ?? "{}")?.campaign_id;
  } catch {
    return undefined; // not one of ours
  }
}

/** ACTIVE, DELETING (or any other state AWS reports), or undefined when the group does not exist. */
export async function groupState(
  d: Deadline,
  scheduler: SchedulerClient,
  campaignId: string,
): Promise<string | undefined> {
  const Name = campaignGroupName(campaignId);
  return awsCall(
    d,
    `campaign ${campaignId}: GetScheduleGroup ${Name}`,
    async (o) => (await scheduler.send(new GetScheduleGroupCommand({ Name }), o)).State ?? "ACTIVE",
    () => undefined,
  );
}

/** Whether this Node's time zone data knows `zone` (a schedule written by a newer tzdata may name one it does not). */
export const zoneKnown = (zone: string) => IANAZone.isValidZone(zone);

/** The instant of an `at(...)` expression in its zone. */
export function atInstant(expression: string | undefined, timezone: string | undefined): number | undefined {
  const wall = parseAtExpression(expression);
  return wall && zonedInstant(timezone ?? "UTC", wall).utcMs;
}
