/**
 * What a launched campaign has pending: its schedules by state, its next sends per UTC hour (all read, or a sample
 * scaled up), its fan-outs with their item counts, and the dead-letter queue's depth.
 */
import { parseCronExpression } from "../../../../infra/core/plan/schedule-expression";
import { GetScheduleCommand, ListSchedulesCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { ListMapRunsCommand, SFNClient } from "@aws-sdk/client-sfn";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { campaignGroupName, CLEANUP_SCHEDULE_NAME } from "../../../../infra/core/plan/naming";

import { nextOccurrence } from "../../../../infra/core/timing/recurrence";
import { FindingsError } from "../../../../infra/core/errors";
import { allPages, awsCall, Deadline, throttled } from "../call";
import { mapRunItems, MapRunItems } from "../launch";
import { count } from "../../text/format";
import { atInstant, CampaignExecution, campaignExecutions, groupState, zoneKnown } from "./lookup";

export interface StatusReport {
  campaign: string;
  group: { name: string; state: string | null };
  schedules: { total: number; byState: Record<string, number> };
  /**
   * Pending sends per UTC hour, from GetSchedule on every schedule or on a sample (then scaled, `sampled` > 0). A
   * recurring schedule counts at its next occurrence (in its zone, from now or its StartDate, before its EndDate);
   * `recurring` is how many of the schedules repeat (scaled likewise).
   */
  nextSends: { sampled: number; estimated: boolean; recurring: number; byHour: { hour: string; count: number }[] };
  /** Sampled schedules whose zone this Node does not know: counted apart, with a few names, never guessed. */
  unknownZones: { count: number; examples: { schedule: string; zone: string }[] };
  executions: (CampaignExecution & { items: MapRunItems | null })[];
  /** The queue's depth, or why it could not be read (that line of the report only). */
  deadLetterQueue: { url: string; visible: number; inFlight: number } | { url: string; error: string } | null;
}

export async function campaignStatus(
  d: Deadline,
  clients: { scheduler: SchedulerClient; sfn?: SFNClient; sqs?: SQSClient },
  o: {
    campaignId: string;
    stateMachineArn?: string;
    deadLetterQueueUrl?: string;
    sampleSize: number;
    random?: () => number;
    /** What "next" is counted from (default: the current time). */
    now?: number;
  },
): Promise<StatusReport> {
  const GroupName = campaignGroupName(o.campaignId);
  const state = await groupState(d, clients.scheduler, o.campaignId);
  const listing =
    state === undefined ? { total: 0, byState: {}, sample: [] } : await listSchedules(d, clients.scheduler, o);
  const { hours, unknownZones, recurring } = await nextSendsOf(
    d,
    clients.scheduler,
    o.campaignId,
    listing.sample,
    o.now ?? Date.now(),
  );
  const scale = listing.sample.length ? listing.total / listing.sample.length : 0;
  return {
    campaign: o.campaignId,
    group: { name: GroupName, state: state ?? null },
    schedules: { total: listing.total, byState: listing.byState },
    nextSends: {
      sampled: listing.sample.length,
      estimated: listing.sample.length < listing.total,
      recurring: Math.round(recurring * scale),
      byHour: [...hours].sort().map(([hour, count]) => ({ hour, count: Math.round(count * scale) })),
    },
    unknownZones,
    executions:
      clients.sfn && o.stateMachineArn
        ? await executionsWithCounts(d, clients.sfn, o.stateMachineArn, o.campaignId)
        : [],
    deadLetterQueue:
      clients.sqs && o.deadLetterQueueUrl ? await deadLetterDepth(d, clients.sqs, o.deadLetterQueueUrl) : null,
  };
}

/** Every page of the group's schedules, counted by state, with a uniform sample of names (reservoir sampling). */
async function listSchedules(
  d: Deadline,
  scheduler: SchedulerClient,
  o: { campaignId: string; sampleSize: number; random?: () => number },
): Promise<{ total: number; byState: Record<string, number>; sample: string[] }> {
  const GroupName = campaignGroupName(o.campaignId);
  const byState: Record<string, number> = {};
  const sample: string[] = [];
  const random = o.random ?? Math.random;
  const progress = throttled(d.progress);
  let total = 0;
  for await (const page of allPages(
    d,
    `campaign ${o.campaignId}: ListSchedules in ${GroupName}`,
    (NextToken, opts) => scheduler.send(new ListSchedulesCommand({ GroupName, MaxResults: 100, NextToken }), opts),
    (p) => p.NextToken,
  )) {
    for (const s of page.Schedules ?? []) {
      if (s.Name === CLEANUP_SCHEDULE_NAME) continue; // the group's own housekeeping, not a send
      total++;
      byState[s.State ?? "UNKNOWN"] = (byState[s.State ?? "UNKNOWN"] ?? 0) + 1;
      // Every schedule equally likely to be read, memory bounded by the sample size.
      if (sample.length < o.sampleSize) sample.push(s.Name!);
      else {
        const j = Math.floor(random() * total);
        if (j < o.sampleSize) sample[j] = s.Name!;
      }
    }
    progress(() => `listing schedules in ${GroupName}: ${count(total)} so far`);
  }
  return { total, byState, sample };
}

/** Days ahead a recurring schedule's next occurrence is looked for: every shape fires within two months. */
const NEXT_OCCURRENCE_DAYS = 400;

/**
 * GetSchedule on each sampled name: sends per UTC hour (a recurring schedule's next occurrence); a zone this Node
 * does not know is counted apart.
 */
async function nextSendsOf(d: Deadline, scheduler: SchedulerClient, campaignId: string, sample: string[], now: number) {
  const GroupName = campaignGroupName(campaignId);
  const hours = new Map<string, number>();
  const unknownZones: StatusReport["unknownZones"] = { count: 0, examples: [] };
  let recurring = 0;
  const progress = throttled(d.progress);
  for (const [i, Name] of sample.entries()) {
    progress(() => `reading schedules in ${GroupName}: ${count(i)} of ${count(sample.length)}`);
    const s = await awsCall(d, `campaign ${campaignId}: GetSchedule ${Name}`, (opts) =>
      scheduler.send(new GetScheduleCommand({ Name, GroupName }), opts),
    );
    const zone = s.ScheduleExpressionTimezone ?? "UTC";
    if (!zoneKnown(zone)) {
      unknownZones.count++;
      if (unknownZones.examples.length < 3) unknownZones.examples.push({ schedule: Name, zone });
      continue;
    }
    const cron = parseCronExpression(s.ScheduleExpression);
    if (cron) recurring++;
    const from = Math.max(now, s.StartDate?.getTime() ?? now);
    const utc = cron
      ? nextOccurrence(
          cron,
          zone,
          from,
          Math.min(s.EndDate?.getTime() ?? Infinity, from + NEXT_OCCURRENCE_DAYS * 86_400_000),
        )
      : atInstant(s.ScheduleExpression, zone);
    const hour =
      utc !== undefined
        ? new Date(utc).toISOString().slice(0, 13) + ":00Z"
        : cron
          ? "no occurrence left"
          : "not a schedule of ours";
    hours.set(hour, (hours.get(hour) ?? 0) + 1);
  }
  return { hours, unknownZones, recurring };
}

async function executionsWithCounts(d: Deadline, sfn: SFNClient, stateMachineArn: string, campaignId: string) {
  const executions: StatusReport["executions"] = [];
  for (const e of await campaignExecutions(d, sfn, stateMachineArn, campaignId, "all", throttled(d.progress))) {
    const runs = await awsCall(d, `campaign ${campaignId}: ListMapRuns ${e.name}`, (opts) =>
      sfn.send(new ListMapRunsCommand({ executionArn: e.arn }), opts),
    );
    const mapRunArn = runs.mapRuns?.[0]?.mapRunArn;
    const items = await mapRunItems(d, sfn, mapRunArn, `campaign ${campaignId}: `);
    executions.push({ ...e, items });
  }
  return executions;
}

/** The DLQ's depth; a failure here is reported on that line only (the queue is shared and may be elsewhere). */
async function deadLetterDepth(
  d: Deadline,
  sqs: SQSClient,
  url: string,
): Promise<NonNullable<StatusReport["deadLetterQueue"]>> {
  try {
    const a = await awsCall(d, `GetQueueAttributes ${url}`, (opts) =>
      sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
        opts,
      ),
    );
    return {
      url,
      visible: Number(a.Attributes?.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  } catch (e) {
    if (!(e instanceof FindingsError) || d.expired) throw e;
    return { url, error: e.message };
  }
}
