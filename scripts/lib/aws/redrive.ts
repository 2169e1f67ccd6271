/**
 * Redrive: re-sends what the ledger says a failed send did not send, rebuilt from the campaign's plan — never from
 * the dead letter, which only points to the send (planning/dead-letters.ts) — as one one-time schedule of the one
 * sender in the campaign's own group (so cancel-campaign still stops it), REDRIVE_DELAY_MS from when it is created
 * and out of quiet time, and deletes the message only once that schedule exists. A send a pause held follows the
 * campaign's missed-time policy instead (planning/paused-sends.ts): sent then, on a later day, or not again.
 * Idempotent: the schedule is named `<original>-r<N>` and its Description names the send it re-sends, so a second
 * redrive of the same message meets its ConflictException and finds itself there (redrive-schedules.ts).
 *
 * The queue is read page by page; its pointers are handled in passes of up to PASS_SENDS, each pass streaming each of
 * its campaigns' plans once.
 */
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { DeleteMessageCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { LEDGER_KEY, OCCURRENCE_ATTRIBUTES, occurrenceKey } from "../../../infra/core/send/ledger";
import { FindingsError } from "../../../infra/core/errors";
import {
  DeadLetterMessage,
  decideResends,
  FailedSend,
  FoundRow,
  PlanSearch,
  readDeadLetter,
  RecipientOutcome,
  RecordedOutcome,
  RedriveQuiet,
  ResendDecision,
  SenderFields,
  StackScope,
} from "../planning/dead-letters";
import { LaunchMissed } from "../planning/launch-record";
import { HeldFate, heldFate, HeldOutcome, heldPolicy, isHeld } from "../planning/paused-sends";
import { awsCall, clock, Deadline } from "./call";
import { Launch, readLaunches, streamPlan } from "./campaign-plan";
import { findRedrive, Placed, placeRedrive } from "./redrive-schedules";
import { makeVisibleAgain, receiveDeadLetters } from "./dead-letter-queue";

export interface RedriveOptions {
  queueUrl: string;
  /** Only this campaign's sends (others are left as they are), or every campaign's. */
  campaignId?: string;
  dryRun: boolean;
  schedulerRoleArn: string;
  /** The stack's account and its one sender (output senderStateMachineArn). */
  scope: StackScope;
  /** Where the plans and launch records are (output bucketName). */
  bucket: string;
  /** The occurrence ledger (output ledgerTableName). */
  ledgerTable: string;
  /** The sender input's stack fields (outputs fromAddress, configurationSetName, contactListName, unsubscribeTopic). */
  sender: SenderFields;
  /** Re-send recipients the ledger records as `unknown` (SES may have sent them). */
  resendUnknown: boolean;
  /** The missed-time policy sends a pause held follow (--missed, --grace-minutes); none: each launch record's. */
  missed?: LaunchMissed;
  /** The redriven schedule's flexible window (the stack's default); none: OFF. */
  windowMinutes?: number;
  /** The stack's journeys: their sends have no plan to rebuild them from. */
  journeys: string[];
}

export interface RedriveClients {
  sqs: SQSClient;
  scheduler: SchedulerClient;
  s3: S3Client;
  dynamodb: DynamoDBClient;
}

export interface RedrivenSend {
  messageId: string;
  campaign: string;
  original: string;
  schedule: string;
  group: string;
  /** The redriven send's time, UTC (dry run: what it would be now). */
  at: string;
  /** Always the one sender. */
  via: "sender";
  error: string;
  /** The failed send's scheduled time, and who dead-lettered it (the sender, or Scheduler when it could not start it). */
  scheduledTime: string;
  source: FailedSend["source"];
  /** The plan row the request was rebuilt from, and where it was read. */
  planRow: string;
  planLine: string;
  /** Re-sent, with the ledger's outcome of each. */
  recipients: RecipientOutcome[];
  /** Not re-sent: sent, or skipped for good. */
  notResent: RecipientOutcome[];
  quiet: RedriveQuiet;
  /** A send a pause held: what its missed-time policy made of it; null for any other. */
  held: HeldOutcome | null;
}

/** A message with nothing left to send: every recipient sent, skipped for good, or not sent again by its policy. */
export interface NothingToResend {
  messageId: string;
  campaign: string;
  original: string;
  recipients: RecipientOutcome[];
  held: HeldOutcome | null;
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
  /**
   * Messages whose every recipient the ledger records as sent or skipped for good, or a pause held and the policy does
   * not send again: deleted (dry run: would be).
   */
  nothingToResend: NothingToResend[];
}

/** Failed sends handled per pass (each pass streams each of its campaigns' plans once). */
const PASS_SENDS = 1_000;

interface Held {
  id: string;
  handle: string;
}

interface Pending {
  m: DeadLetterMessage;
  send: FailedSend;
}

/**
 * Reads the queue page by page until it answers empty: every message received is kept invisible for the whole run
 * (so paging moves on), and those not deleted are made visible again at the end.
 */
export async function redrive(d: Deadline, clients: RedriveClients, o: RedriveOptions): Promise<RedriveReport> {
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
    nothingToResend: [],
  };
  const queueArn = await awsCall(d, `GetQueueAttributes QueueArn of ${o.queueUrl}`, (opts) =>
    clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: o.queueUrl, AttributeNames: ["QueueArn"] }), opts),
  ).then((a) => a.Attributes?.QueueArn);
  if (!queueArn) throw new FindingsError(`GetQueueAttributes ${o.queueUrl}: no QueueArn in the answer`);
  const held: Held[] = [];
  const run = { d, clients, o, queueArn, r, held, launches: new Map<string, Launch[] | string>() };
  try {
    await readQueue(run);
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    r.problems.push(e.message);
  }
  if (d.expired && !r.problems.some((p) => p.includes("--timeout-seconds")))
    r.problems.push(
      `stopped at the command's time limit of ${d.seconds} s (--timeout-seconds): messages not read yet stay in the queue`,
    );
  await makeVisibleAgain(
    clients.sqs,
    o.queueUrl,
    held.map((h) => h.handle),
    r.problems,
  );
  return r;
}

interface Run {
  d: Deadline;
  clients: RedriveClients;
  o: RedriveOptions;
  queueArn: string;
  r: RedriveReport;
  held: Held[];
  /** Each campaign's launches (read once per run), or why they cannot be read. */
  launches: Map<string, Launch[] | string>;
}

async function readQueue(run: Run): Promise<void> {
  const { d, o, r } = run;
  const seen = new Set<string>();
  let pass: Pending[] = [];
  for (let page = 1; !d.expired; page++) {
    // Invisible for the rest of the run and a minute more, so a page never brings back one already handled.
    const messages = (await receiveDeadLetters(d, run.clients.sqs, o.queueUrl, page, {
      extraSeconds: 60,
      attributes: true,
    })) as DeadLetterMessage[];
    const fresh = messages.filter((m) => m.MessageId && !seen.has(m.MessageId));
    if (messages.length && !fresh.length)
      r.problems.push(
        `ReceiveMessage ${o.queueUrl} (page ${page}): only messages already received; stopped instead of looping`,
      );
    for (const m of fresh) {
      seen.add(m.MessageId!);
      r.received++;
      if (m.ReceiptHandle) run.held.push({ id: m.MessageId!, handle: m.ReceiptHandle });
      const send = readDeadLetter(m, o.scope);
      if (o.campaignId !== undefined && send.campaignId !== undefined && send.campaignId !== o.campaignId)
        r.otherCampaigns++;
      else if (!("original" in send))
        r.left.push({ messageId: m.MessageId!, campaign: send.campaignId ?? null, reason: send.reason });
      else pass.push({ m, send });
    }
    if (!fresh.length || pass.length >= PASS_SENDS) {
      await handlePass(run, pass);
      pass = [];
    }
    d.progress(`redrive: ${r.received} messages read, ${r.redriven.length} redriven`);
    if (!fresh.length) break;
  }
  await handlePass(run, pass);
}

/** One pass: each campaign's plan searched once for its sends, then each send handled in the queue's order. */
async function handlePass(run: Run, pass: Pending[]): Promise<void> {
  const rows = new Map<FailedSend, FoundRow<Launch> | { reason: string }>();
  for (const campaignId of new Set(pass.map((p) => p.send.campaignId))) {
    if (run.d.expired) break;
    const sends = pass.filter((p) => p.send.campaignId === campaignId).map((p) => p.send);
    for (const [send, row] of await findRows(run, campaignId, sends)) rows.set(send, row);
  }
  for (const p of pass) {
    const row = rows.get(p.send) ?? { reason: "not handled: the command's time limit came first (--timeout-seconds)" };
    if ("reason" in row)
      run.r.left.push({ messageId: p.m.MessageId!, campaign: p.send.campaignId, reason: row.reason });
    else if (await handle(run, p, row))
      run.held.splice(
        run.held.findIndex((h) => h.id === p.m.MessageId),
        1,
      );
  }
}

/** The plan row of each send of one campaign, or why it has none (a send not in the plan is refused). */
async function findRows(
  run: Run,
  campaignId: string,
  sends: FailedSend[],
): Promise<Map<FailedSend, FoundRow<Launch> | { reason: string }>> {
  const { d, clients, o } = run;
  const out = new Map<FailedSend, FoundRow<Launch> | { reason: string }>();
  const all = (reason: string) => new Map(sends.map((s) => [s, { reason }]));
  if (o.journeys.includes(campaignId))
    return all(
      `refused: ${campaignId} is a journey, which keeps no plan to rebuild its sends from; replay the trigger with enrol --event`,
    );
  try {
    if (!run.launches.has(campaignId))
      run.launches.set(campaignId, await readLaunches(d, clients.s3, o.bucket, campaignId));
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    run.launches.set(campaignId, e.message);
  }
  const launches = run.launches.get(campaignId)!;
  if (typeof launches === "string") return all(launches);
  if (!launches.length)
    return all(
      `refused: campaign ${campaignId} has no launch record in s3://${o.bucket}/launches/${campaignId}/, so no plan to rebuild the send from`,
    );
  const search = new PlanSearch<Launch>(sends);
  const gone: string[] = [];
  try {
    for (const launch of launches)
      for (const key of launch.planKeys) {
        if (!search.pending) break;
        const read = await streamPlan(
          d,
          clients.s3,
          { bucket: o.bucket, key },
          (text, at) => search.offer(text, at, launch),
          () => search.pending > 0,
        );
        if (read === "gone") gone.push(key);
      }
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    return all(`the campaign's plan cannot be read: ${e.message}`);
  }
  const searched =
    `${launches.length} launch${launches.length === 1 ? "" : "es"} searched` +
    (gone.length ? `; plan objects no longer there (expired?): ${gone.join(", ")}` : "");
  for (const s of sends) out.set(s, search.result(s, searched));
  return out;
}

/** One failed send with its plan row: redriven (or found redriven, or nothing left to send) and deleted → true. */
async function handle(run: Run, p: Pending, found: FoundRow<Launch>): Promise<boolean> {
  const { o, r } = run;
  const { send } = p;
  const leave = (reason: string) => {
    r.left.push({ messageId: p.m.MessageId!, campaign: send.campaignId, reason });
    return false;
  };
  try {
    const outcomes = await recordedOutcomes(run, send);
    // The sender claims every occurrence before it sends: its pointer to one the ledger lacks is not the sender's.
    if (send.source === "sender" && outcomes === undefined)
      return leave(
        `${send.original} @ ${send.scheduledTime}: the ledger has no such occurrence, which the sender claims before any send: not a pointer of the sender; not redriven, even with --resend-unknown`,
      );
    const decision = decideResends(send, outcomes, o.resendUnknown);
    if (decision.unknown.length)
      return leave(
        `${send.original} @ ${send.scheduledTime}: SES may have sent ${decision.unknown.map((u) => `${u.recipient} (${u.reason || u.outcome})`).join(", ")}: ` +
          `not redriven, so no one gets it twice; check those addresses' SEND events, then redrive with --resend-unknown or delete the message`,
      );
    const held = heldFateOf(run, send, found, decision);
    if (held && "reason" in held) return leave(held.reason);
    if (!decision.resend.length || (held && !held.time)) return await settle(run, p, found, decision, held);
    const recipients = decision.resend.map((x) => x.recipient);
    const placed = await placeRedrive(run, send, found, recipients, held?.time);
    if ("reason" in placed) return leave(placed.reason);
    (placed.created ? r.redriven : r.alreadyRedriven).push(redriven(p, found, decision, placed, held));
    // Only now that the schedule exists.
    return await deleteMessage(run, p, `${send.group}/${placed.name}`);
  } catch (e) {
    if (!(e instanceof FindingsError)) throw e;
    return leave(e.message);
  }
}

/**
 * What the missed-time policy makes of a send a pause held (--missed, else its launch record's); undefined when the
 * send is not one. A record that states no policy decides nothing: the send is left, for --missed to decide.
 */
function heldFateOf(
  run: Run,
  send: FailedSend,
  found: FoundRow<Launch>,
  decision: ResendDecision,
): HeldFate | { reason: string } | undefined {
  const held = decision.resend.filter(isHeld);
  if (!held.length) return undefined;
  const occurrence = `${send.original} @ ${send.scheduledTime}`;
  // (A sender's pointer names one entry, and only the sender's pointers hold a paused one: never both kinds at once.)
  if (held.length !== decision.resend.length)
    return { reason: `${occurrence}: held by a pause and failed alike in one pointer: not redriven` };
  const policy = heldPolicy(run.o.missed, found.launch);
  if ("reason" in policy) return { reason: `${occurrence}: ${policy.reason}` };
  return heldFate(send.scheduledTime, found, policy, clock.now(), {
    quiet: found.launch.quiet,
    windowMinutes: run.o.windowMinutes,
  });
}

/**
 * A send with nothing left to send: listed and its message deleted. One a pause held that its policy does not send
 * again may have been sent again by an earlier run (whose DeleteMessage failed): then it is listed as that.
 */
async function settle(
  run: Run,
  p: Pending,
  found: FoundRow<Launch>,
  decision: ResendDecision,
  held: HeldFate | undefined,
): Promise<boolean> {
  const { send } = p;
  const earlier = held && (await findRedrive(run, send, found));
  if (earlier) {
    run.r.alreadyRedriven.push(redriven(p, found, decision, earlier, held));
    return deleteMessage(run, p, `${send.group}/${earlier.name}`);
  }
  const notAgain = held ? decision.resend.map((x) => ({ ...x, reason: held.held.reason })) : [];
  run.r.nothingToResend.push({
    messageId: p.m.MessageId!,
    campaign: send.campaignId,
    original: send.original,
    recipients: [...decision.settled, ...notAgain],
    held: held?.held ?? null,
  });
  return deleteMessage(run, p, `${send.original}: nothing left to send`);
}

/** The report's entry of a send redriven now or before. */
function redriven(
  p: Pending,
  found: FoundRow<Launch>,
  decision: ResendDecision,
  placed: Placed,
  held: HeldFate | undefined,
): RedrivenSend {
  const { send } = p;
  return {
    messageId: p.m.MessageId!,
    campaign: send.campaignId,
    original: send.original,
    schedule: placed.name,
    group: send.group,
    at: new Date(placed.at).toISOString(),
    via: "sender",
    error: send.error,
    scheduledTime: send.scheduledTime,
    source: send.source,
    planRow: found.row.schedule_name,
    planLine: found.where,
    recipients: decision.resend,
    notResent: decision.settled,
    quiet: placed.quiet,
    held: held?.held ?? null,
  };
}

/** Deletes a handled message (not in a dry run); false when it stays. */
async function deleteMessage(run: Run, p: Pending, what: string): Promise<boolean> {
  const { d, o, r } = run;
  if (o.dryRun) return false;
  const messageId = p.m.MessageId!;
  if (!p.m.ReceiptHandle) {
    r.left.push({ messageId, campaign: p.send.campaignId, reason: "no ReceiptHandle to delete it with" });
    return false;
  }
  await awsCall(d, `DeleteMessage ${messageId} (${what})`, (opts) =>
    run.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: o.queueUrl, ReceiptHandle: p.m.ReceiptHandle }), opts),
  );
  return true;
}

/** The occurrence's recorded outcomes (ledger item `occ#<schedule ARN>#<scheduled time>`); undefined: no item. */
async function recordedOutcomes(run: Run, send: FailedSend): Promise<Map<string, RecordedOutcome> | undefined> {
  const key = occurrenceKey(send.scheduleArn, send.scheduledTime);
  const item = await awsCall(run.d, `GetItem ${key} from the ledger ${run.o.ledgerTable}`, async (opts) => {
    const answer = await run.clients.dynamodb.send(
      new GetItemCommand({
        TableName: run.o.ledgerTable,
        Key: { [LEDGER_KEY]: { S: key } },
        ConsistentRead: true,
        ProjectionExpression: "#o",
        ExpressionAttributeNames: { "#o": OCCURRENCE_ATTRIBUTES.outcomes },
      }),
      opts,
    );
    return answer.Item;
  });
  if (!item) return undefined;
  const outcomes = new Map<string, RecordedOutcome>();
  for (const [recipient, v] of Object.entries(item[OCCURRENCE_ATTRIBUTES.outcomes]?.M ?? {}))
    outcomes.set(recipient, { outcome: v.M?.outcome?.S, reason: v.M?.reason?.S });
  return outcomes;
}
