/**
 * Redrive: re-sends each failed send of the dead-letter queue as a one-time schedule in its campaign's own group
 * (so cancel-campaign still stops it), REDRIVE_DELAY_MS from when it is created, and deletes the message only once
 * that schedule exists. Idempotent: the schedule is named `<original>-r<N>` and its Description names the send it
 * re-sends, so a second redrive of the same send meets its ConflictException and finds itself there.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  CreateScheduleCommandInput,
  GetScheduleCommand,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { atExpression } from "../../../infra/rules/plan-row";
import { inTimeToCreate } from "../../../infra/rules/promises";
import {
  DeadLetterMessage,
  FailedSend,
  MAX_REDRIVE_GENERATIONS,
  readDeadLetter,
  redriveAt,
  redriveDescription,
  redriveName,
  SendTargets,
} from "../planning/dead-letters";
import { awsCall, boundedCall, Deadline } from "./call";
import { isAwsError } from "./clients";
import { FindingsError } from "../../../infra/rules/errors";

export interface RedriveOptions {
  queueUrl: string;
  /** Only this campaign's sends (others are left as they are), or every campaign's. */
  campaignId?: string;
  dryRun: boolean;
  schedulerRoleArn: string;
  targets: SendTargets;
  /** The redriven schedule's flexible window (the stack's default); none: OFF. */
  windowMinutes?: number;
}

export interface RedrivenSend {
  messageId: string;
  campaign: string;
  original: string;
  schedule: string;
  group: string;
  /** The redriven send's time, UTC (dry run: what it would be now). */
  at: string;
  via: FailedSend["via"];
  error: string;
}

export interface RedriveReport {
  queue: string;
  campaign: string | null;
  dryRun: boolean;
  /** Messages received (each once). */
  received: number;
  /** Created now (dry run: would be). */
  redriven: RedrivenSend[];
  /** Found already redriven by an earlier run: the message is deleted (dry run: would be). */
  alreadyRedriven: RedrivenSend[];
  /** Left in the queue, and why. */
  left: { messageId: string; campaign: string | null; reason: string }[];
  /** Messages of other campaigns (with --campaign): not touched, left as they were. */
  otherCampaigns: number;
  /** What stopped the run or went wrong around it (the time limit, a page the queue repeated), one line each. */
  problems: string[];
}

/** The most ReceiveMessage returns at once. */
const PAGE = 10;

/**
 * Reads the queue page by page until it answers empty, handling each page before the next: every message received is
 * kept invisible for the whole run (so paging moves on), and those not deleted are made visible again at the end.
 */
export async function redrive(
  d: Deadline,
  clients: { sqs: SQSClient; scheduler: SchedulerClient },
  o: RedriveOptions,
): Promise<RedriveReport> {
  const r: RedriveReport = {
    queue: o.queueUrl,
    campaign: o.campaignId ?? null,
    dryRun: o.dryRun,
    received: 0,
    redriven: [],
    alreadyRedriven: [],
    left: [],
    otherCampaigns: 0,
    problems: [],
  };
  const queueArn = await awsCall(d, `GetQueueAttributes QueueArn of ${o.queueUrl}`, (opts) =>
    clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: o.queueUrl, AttributeNames: ["QueueArn"] }), opts),
  ).then((a) => a.Attributes?.QueueArn);
  if (!queueArn) throw new FindingsError(`GetQueueAttributes ${o.queueUrl}: no QueueArn in the answer`);
  const held: { id: string; handle: string }[] = [];
  const seen = new Set<string>();
  try {
    for (let page = 1; !d.expired; page++) {
      const messages = await receivePage(d, clients.sqs, o.queueUrl, page);
      if (!messages.length) break;
      const fresh = messages.filter((m) => m.MessageId && !seen.has(m.MessageId));
      if (!fresh.length) {
        r.problems.push(
          `ReceiveMessage ${o.queueUrl} (page ${page}): only messages already received; stopped instead of looping`,
        );
        break;
      }
      for (const m of fresh) {
        seen.add(m.MessageId!);
        r.received++;
        if (m.ReceiptHandle) held.push({ id: m.MessageId!, handle: m.ReceiptHandle });
        const deleted = await handle(d, clients, o, queueArn, m, r);
        if (deleted)
          held.splice(
            held.findIndex((h) => h.id === m.MessageId),
            1,
          );
        if (d.expired) break;
      }
      d.progress(`redrive: ${r.received} messages read, ${r.redriven.length} redriven`);
    }
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    r.problems.push(e.message);
  }
  if (d.expired && !r.problems.some((p) => p.includes("--timeout-seconds")))
    r.problems.push(
      `stopped at the command's time limit of ${d.seconds} s (--timeout-seconds): messages not read yet stay in the queue`,
    );
  await release(clients.sqs, o.queueUrl, held, r);
  return r;
}

async function receivePage(d: Deadline, sqs: SQSClient, queueUrl: string, page: number): Promise<DeadLetterMessage[]> {
  // Invisible for the rest of the run and a minute more, so a page never brings back one already handled.
  const VisibilityTimeout = Math.min(43_200, Math.ceil(Math.max(d.endsAt - Date.now(), 0) / 1000) + 60);
  const answer = await awsCall(d, `ReceiveMessage ${queueUrl}${page > 1 ? ` (page ${page})` : ""}`, (opts) =>
    sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: PAGE,
        // Long polling asks every SQS server, so an empty answer means the queue is empty, not a sample that missed.
        WaitTimeSeconds: 1,
        VisibilityTimeout,
        MessageAttributeNames: ["All"],
      }),
      opts,
    ),
  );
  return (answer.Messages ?? []) as DeadLetterMessage[];
}

/** One message: redriven (or found redriven) and deleted → true; otherwise recorded and left → false. */
async function handle(
  d: Deadline,
  clients: { sqs: SQSClient; scheduler: SchedulerClient },
  o: RedriveOptions,
  queueArn: string,
  m: DeadLetterMessage,
  r: RedriveReport,
): Promise<boolean> {
  const messageId = m.MessageId!;
  const send = readDeadLetter(m, o.targets);
  if (o.campaignId !== undefined && send.campaignId !== undefined && send.campaignId !== o.campaignId) {
    r.otherCampaigns++;
    return false;
  }
  if (!("identity" in send)) {
    r.left.push({ messageId, campaign: send.campaignId ?? null, reason: send.reason });
    return false;
  }
  try {
    const placed = await place(d, clients.scheduler, o, queueArn, send);
    if ("reason" in placed) {
      r.left.push({ messageId, campaign: send.campaignId, reason: placed.reason });
      return false;
    }
    const entry: RedrivenSend = {
      messageId,
      campaign: send.campaignId,
      original: send.original,
      schedule: placed.name,
      group: send.group,
      at: new Date(placed.at).toISOString(),
      via: send.via,
      error: send.error,
    };
    (placed.created ? r.redriven : r.alreadyRedriven).push(entry);
    if (o.dryRun) return false;
    if (!m.ReceiptHandle) {
      r.left.push({ messageId, campaign: send.campaignId, reason: "no ReceiptHandle to delete it with" });
      return false;
    }
    // Only now that the schedule exists.
    await awsCall(d, `DeleteMessage ${messageId} (${send.group}/${placed.name})`, (opts) =>
      clients.sqs.send(new DeleteMessageCommand({ QueueUrl: o.queueUrl, ReceiptHandle: m.ReceiptHandle }), opts),
    );
    return true;
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    r.left.push({ messageId, campaign: send.campaignId, reason: e.message });
    return false;
  }
}

/**
 * Creates the redriven schedule under the first free `-r<N>` name; a name taken by this very send (its Description)
 * means an earlier run redrove it. Dry run: GetSchedule only.
 */
async function place(
  d: Deadline,
  scheduler: SchedulerClient,
  o: RedriveOptions,
  queueArn: string,
  send: FailedSend,
): Promise<{ name: string; at: number; created: boolean } | { reason: string }> {
  const description = redriveDescription(send.identity);
  for (let n = 1; n <= MAX_REDRIVE_GENERATIONS; n++) {
    const Name = redriveName(send.redriveBase, n);
    const at = redriveAt(Date.now());
    if (!o.dryRun) {
      // The promise every path keeps: never created less than a minute before it is due (a guard: at is 2 minutes on).
      if (!inTimeToCreate(at, Date.now()))
        return { reason: `${send.identity}: ${new Date(at).toISOString()} came too close to create` };
      const request = scheduleRequest(o, queueArn, send, Name, at, description);
      const created = await awsCall(
        d,
        `CreateSchedule ${send.group}/${Name} (redrive of ${send.original})`,
        async (opts) => {
          try {
            await scheduler.send(new CreateScheduleCommand(request), opts);
            return true;
          } catch (e) {
            if (e instanceof ConflictException || isAwsError(e, "ConflictException")) return false;
            throw e;
          }
        },
        () => {
          throw new FindingsError(
            `CreateSchedule ${send.group}/${Name}: the group ${send.group} does not exist (the campaign was cancelled or its sends are over): not redriven`,
          );
        },
      );
      if (created) return { name: Name, at, created: true };
    }
    const existing = await awsCall(
      d,
      `GetSchedule ${send.group}/${Name}`,
      (opts) => scheduler.send(new GetScheduleCommand({ Name, GroupName: send.group }), opts),
      () => undefined,
    );
    if (existing === undefined) {
      if (o.dryRun) return { name: Name, at, created: true };
      return {
        reason: `CreateSchedule ${send.group}/${Name}: ConflictException, yet no such schedule (is the group being deleted?)`,
      };
    }
    if (existing.Description === description) return { name: Name, at: atOf(existing) ?? at, created: false };
  }
  return {
    reason: `${send.identity}: every name up to ${redriveName(send.redriveBase, MAX_REDRIVE_GENERATIONS)} is taken by other sends`,
  };
}

/** The time of an existing redriven schedule (written in UTC), for the report. */
function atOf(s: { ScheduleExpression?: string }): number | undefined {
  const m = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/.exec(s.ScheduleExpression ?? "");
  return m ? Date.parse(`${m[1]}Z`) : undefined;
}

/**
 * A one-time schedule at `at` (UTC) with the original's target, the stack's scheduler role and this queue as its dead
 * letter. It stays after it fires (ActionAfterCompletion NONE): a later redrive of the same send meets it by name and
 * Description instead of sending again; the campaign's group (cancel, or its housekeeping) removes it.
 */
function scheduleRequest(
  o: RedriveOptions,
  queueArn: string,
  send: FailedSend,
  Name: string,
  at: number,
  Description: string,
): CreateScheduleCommandInput {
  return {
    Name,
    GroupName: send.group,
    ScheduleExpression: atExpression(new Date(at).toISOString().slice(0, 19)),
    ScheduleExpressionTimezone: "UTC",
    Description,
    FlexibleTimeWindow: o.windowMinutes
      ? { Mode: "FLEXIBLE", MaximumWindowInMinutes: o.windowMinutes }
      : { Mode: "OFF" },
    ActionAfterCompletion: "NONE",
    Target: {
      Arn: send.targetArn,
      RoleArn: o.schedulerRoleArn,
      Input: send.input,
      DeadLetterConfig: { Arn: queueArn },
    },
  };
}

/** Makes every message still held visible again (bounded on its own: it runs after the time limit too). */
async function release(
  sqs: SQSClient,
  queueUrl: string,
  held: { id: string; handle: string }[],
  r: RedriveReport,
): Promise<void> {
  for (let i = 0; i < held.length; i += PAGE) {
    const batch = held.slice(i, i + PAGE);
    try {
      const answer = await boundedCall(`ChangeMessageVisibilityBatch ${queueUrl}`, 5_000, (abortSignal) =>
        sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((h, j) => ({ Id: String(j), ReceiptHandle: h.handle, VisibilityTimeout: 0 })),
          }),
          { abortSignal },
        ),
      );
      if (answer.Failed?.length)
        r.problems.push(
          `${answer.Failed.length} messages left stay invisible until their visibility timeout (ChangeMessageVisibility failed)`,
        );
    } catch (e) {
      if (!(e instanceof FindingsError)) throw e;
      r.problems.push(`${e.message}: ${batch.length} messages left stay invisible until their visibility timeout`);
    }
  }
}
