/**
 * Operating a launched campaign: cancel it, move or remove one recipient's send, see what is pending.
 * Schedule and group names come from infra/naming.ts, as in the planner.
 */
import {
  DeleteScheduleCommand,
  DeleteScheduleGroupCommand,
  GetScheduleCommand,
  GetScheduleGroupCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
  UpdateScheduleCommandInput,
} from "@aws-sdk/client-scheduler";
import {
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  ListExecutionsCommand,
  ListMapRunsCommand,
  SFNClient,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { campaignGroupName, campaignIdProblem, CLEANUP_SCHEDULE_NAME, scheduleName } from "../../../infra/naming";
import { atExpression, parseAtExpression } from "../../../infra/plan-row";
import { awsErrorLine, isAwsError } from "./clients";
import { FindingsError, UsageError } from "../cli/run";
import { LocalTime, scheduledTime, zonedInstant } from "../core/send-time";

/** The --campaign flag, checked: `campaign-<id>` must be a valid group name. */
export function requireCampaign(campaign: string | undefined): string {
  if (campaign === undefined) throw new UsageError("--campaign is required (see --help)");
  const problem = campaignIdProblem(campaign);
  if (problem) throw new UsageError(`--campaign: ${problem}`);
  return campaign;
}

export interface CampaignExecution {
  name: string;
  arn: string;
  status: string;
  startDate?: string;
}

/**
 * Wraps an AWS call so a failure is one line naming what failed and for which campaign; `ifNotFound` answers (or
 * throws) when the resource does not exist.
 */
async function aws<T, U = never>(what: string, call: () => Promise<T>, ifNotFound?: () => U): Promise<T | U> {
  try {
    return await call();
  } catch (e) {
    if (ifNotFound && isAwsError(e, "ResourceNotFoundException")) return ifNotFound();
    throw new FindingsError(awsErrorLine(what, e));
  }
}

/**
 * The fan-out executions of one campaign: names start with `<campaign>-` (the launcher's naming), confirmed by the
 * execution input's campaign_id (so campaign "spring" does not match "spring-sale").
 */
export async function campaignExecutions(
  sfn: SFNClient,
  stateMachineArn: string,
  campaignId: string,
  statusFilter?: "RUNNING",
): Promise<CampaignExecution[]> {
  const found: CampaignExecution[] = [];
  let nextToken: string | undefined;
  do {
    const page = await aws(`campaign ${campaignId}: ListExecutions on ${stateMachineArn}`, () =>
      sfn.send(new ListExecutionsCommand({ stateMachineArn, statusFilter, maxResults: 100, nextToken })),
    );
    for (const e of page.executions ?? []) {
      if (!e.name?.startsWith(`${campaignId}-`)) continue;
      const d = await aws(`campaign ${campaignId}: DescribeExecution ${e.name}`, () =>
        sfn.send(new DescribeExecutionCommand({ executionArn: e.executionArn })),
      );
      let input: { campaign_id?: string } = {};
      try {
        input = JSON.parse(d.input ?? "{}");
      } catch {
        // not one of ours
      }
      if (input.campaign_id === campaignId)
        found.push({
          name: e.name,
          arn: e.executionArn!,
          status: d.status ?? e.status ?? "UNKNOWN",
          startDate: e.startDate?.toISOString(),
        });
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return found;
}

/** ACTIVE, DELETING, or undefined when the group does not exist. */
export async function groupState(scheduler: SchedulerClient, campaignId: string): Promise<string | undefined> {
  const Name = campaignGroupName(campaignId);
  return aws(
    `campaign ${campaignId}: GetScheduleGroup ${Name}`,
    async () => (await scheduler.send(new GetScheduleGroupCommand({ Name }))).State ?? "ACTIVE",
    () => undefined,
  );
}

export interface CancelReport {
  campaign: string;
  group: string;
  dryRun: boolean;
  nothingToCancel: boolean;
  executionsStopped: string[];
  groupBefore: string | null;
  /** deleted, DELETING (still being deleted when we stopped waiting), or absent. */
  groupAfter: string;
}

export async function cancelCampaign(
  clients: { sfn: SFNClient; scheduler: SchedulerClient },
  o: { campaignId: string; stateMachineArn: string; dryRun: boolean; timeoutSeconds: number; pollSeconds: number },
  progress: (text: string) => void,
): Promise<CancelReport> {
  const group = campaignGroupName(o.campaignId);
  // Stop the fan-out first, so no new schedule appears in a group being deleted.
  const running = await campaignExecutions(clients.sfn, o.stateMachineArn, o.campaignId, "RUNNING");
  const before = await groupState(clients.scheduler, o.campaignId);
  const report: CancelReport = {
    campaign: o.campaignId,
    group,
    dryRun: o.dryRun,
    nothingToCancel: running.length === 0 && before === undefined,
    executionsStopped: running.map((e) => e.name),
    groupBefore: before ?? null,
    groupAfter: before === undefined ? "absent" : before,
  };
  if (o.dryRun || report.nothingToCancel) return report;

  for (const e of running) {
    progress(`stopping fan-out ${e.name}`);
    await aws(`campaign ${o.campaignId}: StopExecution ${e.name}`, () =>
      clients.sfn.send(
        new StopExecutionCommand({ executionArn: e.arn, error: "sendtime.Cancelled", cause: `campaign ${o.campaignId} cancelled` }),
      ),
    );
  }
  if (before === "ACTIVE") {
    progress(`deleting schedule group ${group}`);
    await aws(
      `campaign ${o.campaignId}: DeleteScheduleGroup ${group}`,
      () => clients.scheduler.send(new DeleteScheduleGroupCommand({ Name: group })),
      () => "already gone",
    );
  }
  const deadline = Date.now() + o.timeoutSeconds * 1000;
  for (;;) {
    const state = await groupState(clients.scheduler, o.campaignId);
    if (state === undefined) {
      report.groupAfter = before === undefined ? "absent" : "deleted";
      return report;
    }
    report.groupAfter = state;
    if (Date.now() >= deadline) return report;
    progress(`group ${group} is ${state}; waiting`);
    await new Promise((r) => setTimeout(r, o.pollSeconds * 1000));
  }
}

/** UpdateSchedule replaces the whole schedule: carry over every field GetSchedule returned except the read-only ones. */
const READ_ONLY_SCHEDULE_FIELDS = new Set(["$metadata", "Arn", "CreationDate", "LastModificationDate"]);

export interface MoveReport {
  campaign: string;
  schedule: string;
  group: string;
  from: { expression?: string; timezone?: string };
  to: { expression: string; timezone: string; utc: string };
}

export async function moveSchedule(
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number; at: LocalTime; timezone?: string; now: number },
): Promise<MoveReport> {
  const Name = scheduleName(o.recipientId, o.step);
  const GroupName = campaignGroupName(o.campaignId);
  const current = await getSchedule(scheduler, o.campaignId, o.recipientId, o.step);
  const zone = o.timezone ?? current.ScheduleExpressionTimezone ?? "UTC";
  const { utcMs, fold } = zonedInstant(zone, o.at);
  if (utcMs <= o.now) {
    throw new UsageError(
      `--at: ${new Date(utcMs).toISOString()} (${zone}) is not in the future; a schedule can only move to a time to come`,
    );
  }
  const t = scheduledTime(zone, utcMs, fold);
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(current)) if (!READ_ONLY_SCHEDULE_FIELDS.has(k) && v !== undefined) input[k] = v;
  Object.assign(input, { Name, GroupName, ScheduleExpression: atExpression(t.send_at), ScheduleExpressionTimezone: t.timezone });
  await aws(`campaign ${o.campaignId}: UpdateSchedule ${Name} (recipient ${o.recipientId}, step ${o.step})`, () =>
    scheduler.send(new UpdateScheduleCommand(input as unknown as UpdateScheduleCommandInput)),
  );
  return {
    campaign: o.campaignId,
    schedule: Name,
    group: GroupName,
    from: { expression: current.ScheduleExpression, timezone: current.ScheduleExpressionTimezone },
    to: { expression: atExpression(t.send_at), timezone: t.timezone, utc: new Date(utcMs).toISOString() },
  };
}

export async function removeSchedule(
  scheduler: SchedulerClient,
  o: { campaignId: string; recipientId: string; step: number },
): Promise<{ campaign: string; schedule: string; group: string; removed: true }> {
  const Name = scheduleName(o.recipientId, o.step);
  const GroupName = campaignGroupName(o.campaignId);
  await aws(
    `campaign ${o.campaignId}: DeleteSchedule ${Name} (recipient ${o.recipientId}, step ${o.step})`,
    () => scheduler.send(new DeleteScheduleCommand({ Name, GroupName })),
    () => {
      throw new FindingsError(notFound(o.campaignId, o.recipientId, o.step));
    },
  );
  return { campaign: o.campaignId, schedule: Name, group: GroupName, removed: true };
}

async function getSchedule(scheduler: SchedulerClient, campaignId: string, recipientId: string, step: number) {
  const Name = scheduleName(recipientId, step);
  return aws(
    `campaign ${campaignId}: GetSchedule ${Name} (recipient ${recipientId}, step ${step})`,
    () => scheduler.send(new GetScheduleCommand({ Name, GroupName: campaignGroupName(campaignId) })),
    () => {
      throw new FindingsError(notFound(campaignId, recipientId, step));
    },
  );
}

const notFound = (campaignId: string, recipientId: string, step: number) =>
  `campaign ${campaignId}: no schedule "${scheduleName(recipientId, step)}" (recipient ${recipientId}, step ${step}) in ${campaignGroupName(campaignId)}: already sent, removed, or never planned`;

export interface StatusReport {
  campaign: string;
  group: { name: string; state: string | null };
  schedules: { total: number; byState: Record<string, number> };
  /** Pending sends per UTC hour, from GetSchedule on every schedule or on a sample (then scaled, `sampled` > 0). */
  nextSends: { sampled: number; estimated: boolean; byHour: { hour: string; count: number }[] };
  executions: (CampaignExecution & { items: Record<string, number> | null })[];
  deadLetterQueue: { url: string; visible: number; inFlight: number } | null;
}

/** The instant of an `at(...)` expression in its zone. */
export function atInstant(expression: string | undefined, timezone: string | undefined): number | undefined {
  const wall = parseAtExpression(expression);
  return wall && zonedInstant(timezone ?? "UTC", wall).utcMs;
}

export async function campaignStatus(
  clients: { scheduler: SchedulerClient; sfn?: SFNClient; sqs?: SQSClient },
  o: { campaignId: string; stateMachineArn?: string; deadLetterQueueUrl?: string; sampleSize: number; random?: () => number },
): Promise<StatusReport> {
  const GroupName = campaignGroupName(o.campaignId);
  const state = await groupState(clients.scheduler, o.campaignId);
  const byState: Record<string, number> = {};
  let total = 0;
  const sample: string[] = [];
  const random = o.random ?? Math.random;
  if (state !== undefined) {
    let NextToken: string | undefined;
    do {
      const page = await aws(`campaign ${o.campaignId}: ListSchedules in ${GroupName}`, () =>
        clients.scheduler.send(new ListSchedulesCommand({ GroupName, MaxResults: 100, NextToken })),
      );
      for (const s of page.Schedules ?? []) {
        if (s.Name === CLEANUP_SCHEDULE_NAME) continue; // the group's own housekeeping, not a send
        total++;
        byState[s.State ?? "UNKNOWN"] = (byState[s.State ?? "UNKNOWN"] ?? 0) + 1;
        // Reservoir sampling: every schedule equally likely to be read, memory bounded by the sample size.
        if (sample.length < o.sampleSize) sample.push(s.Name!);
        else {
          const j = Math.floor(random() * total);
          if (j < o.sampleSize) sample[j] = s.Name!;
        }
      }
      NextToken = page.NextToken;
    } while (NextToken);
  }
  const hours = new Map<string, number>();
  for (const Name of sample) {
    const s = await aws(`campaign ${o.campaignId}: GetSchedule ${Name}`, () =>
      clients.scheduler.send(new GetScheduleCommand({ Name, GroupName })),
    );
    const utc = atInstant(s.ScheduleExpression, s.ScheduleExpressionTimezone);
    const hour = utc === undefined ? "not a one-time schedule" : new Date(utc).toISOString().slice(0, 13) + ":00Z";
    hours.set(hour, (hours.get(hour) ?? 0) + 1);
  }
  const scale = sample.length ? total / sample.length : 0;
  const executions: StatusReport["executions"] = [];
  if (clients.sfn && o.stateMachineArn) {
    for (const e of await campaignExecutions(clients.sfn, o.stateMachineArn, o.campaignId)) {
      const runs = await aws(`campaign ${o.campaignId}: ListMapRuns ${e.name}`, () =>
        clients.sfn!.send(new ListMapRunsCommand({ executionArn: e.arn })),
      );
      const mapRunArn = runs.mapRuns?.[0]?.mapRunArn;
      const counts = mapRunArn
        ? (await aws(`campaign ${o.campaignId}: DescribeMapRun`, () => clients.sfn!.send(new DescribeMapRunCommand({ mapRunArn }))))
            .itemCounts
        : undefined;
      executions.push({
        ...e,
        items: counts
          ? {
              total: counts.total ?? 0,
              succeeded: counts.succeeded ?? 0,
              failed: counts.failed ?? 0,
              pending: counts.pending ?? 0,
              running: counts.running ?? 0,
            }
          : null,
      });
    }
  }
  let deadLetterQueue: StatusReport["deadLetterQueue"] = null;
  if (clients.sqs && o.deadLetterQueueUrl) {
    const a = await aws(`GetQueueAttributes ${o.deadLetterQueueUrl}`, () =>
      clients.sqs!.send(
        new GetQueueAttributesCommand({
          QueueUrl: o.deadLetterQueueUrl,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
      ),
    );
    deadLetterQueue = {
      url: o.deadLetterQueueUrl,
      visible: Number(a.Attributes?.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  }
  return {
    campaign: o.campaignId,
    group: { name: GroupName, state: state ?? null },
    schedules: { total, byState },
    nextSends: {
      sampled: sample.length,
      estimated: sample.length < total,
      byHour: [...hours].sort().map(([hour, count]) => ({ hour, count: Math.round(count * scale) })),
    },
    executions,
    deadLetterQueue,
  };
}
