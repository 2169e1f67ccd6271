/**
 * Carries out a journey decision (infra/core/journeys/journeys.ts) against the occurrence ledger and EventBridge Scheduler.
 * A trigger first claims its enrolment in the ledger (PutItem `enr#<journey>#<subscriber>#<trigger id>` if absent):
 * a trigger already claimed — EventBridge delivering the same event again, even after a step was sent and its
 * schedule deleted itself — creates nothing and is a `duplicate`. Then CreateSchedule per step (ConflictException =
 * there already). An exit claims nothing: DeleteSchedule per step (ResourceNotFoundException = not pending), safe to
 * repeat. Every call is bounded in time.
 * An event's schedules are created all-or-nothing: on any failure the schedules this call created are deleted again
 * (each was created at least CREATE_LEAD_MS before it is due, and the whole call, undo included, ends within that
 * lead: none can have fired), then the claim is released (deleted, only if it is still this call's), then it throws,
 * so a retry starts from nothing and may send a late step at once.
 * Imports the Scheduler and DynamoDB clients only, so the deployed handler's bundle stays small.
 */
import { randomUUID } from "crypto";
import {
  CreateScheduleCommand,
  CreateScheduleCommandInput,
  DeleteScheduleCommand,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import { DeleteItemCommand, DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import type { CreateScheduleRequest } from "../core/plan/schedule-request";
import { enrolmentClaim } from "../core/journeys/journeys";
import { Decision, EnrolmentClaim, EventKind, PlannedStep, RejectReason } from "../core/journeys/journey-types";
import { CREATE_LEAD_MS, inTimeToCreate } from "../core/timing/promises";
import { ZoneStatus } from "../core/timing/send-time";
import { ENROLMENT_ATTRIBUTES, LEDGER_KEY, LEDGER_TTL_ATTRIBUTE } from "../core/send/ledger";
import { FindingsError } from "../core/errors";

/** An AWS failure while enrolling, one line, with anything that looks like an address removed (logs hold no addresses). */
export class EnrolmentError extends FindingsError {}

// As in clients.ts: the SDK's Node-version notice (Node older than 22 only) stays off stderr unless asked for.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** Longest one Scheduler call may take, SDK retries included. */
export const CALL_TIMEOUT_MS = 10_000;

/**
 * The deployed handler's budget: how long after it starts one invocation may still claim or create. With its undo
 * (each delete bounded by CALL_TIMEOUT_MS, all at once) and the claim's release (one call, CALL_TIMEOUT_MS) it ends
 * inside the function's 60-second timeout, so Lambda never stops it between a create and its undo.
 */
export const CREATE_BUDGET_MS = CREATE_LEAD_MS / 2;
/** An undo ends this long before the earliest schedule it deletes is due. */
const UNDO_MARGIN_MS = 5_000;

export function enrolmentSchedulerClient(region?: string): SchedulerClient {
  return new SchedulerClient({
    region: region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION,
    retryMode: "adaptive",
    maxAttempts: 5,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000 },
  });
}

/** The occurrence ledger as the enrolment uses it: a DynamoDB client and the table's name. */
export interface EnrolmentLedger {
  client: DynamoDBClient;
  tableName: string;
}

export interface EnrolmentClients {
  scheduler: SchedulerClient;
  ledger: EnrolmentLedger;
}

/**
 * One attempt per call, no SDK retry: a retried PutItem whose first attempt was written would fail its own condition
 * and read as a duplicate. A failed claim is released and the invocation fails instead (Lambda retries it).
 */
export function enrolmentLedgerClient(region?: string): DynamoDBClient {
  return new DynamoDBClient({
    region: region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000 },
  });
}

/**
 * A planned step as it went: created now; exists: created by an earlier delivery; passed: a backlog's step due before
 * the run, not created; late: due more than the journey's grace before it could be created, or (a slow backlog) came
 * due before its call could be made: not created, so never sent; dropped: too close to or before an earlier step;
 * skipped: an SMS step this subscriber cannot be texted (no valid phone, too long a text, no legal time): not created.
 */
export type StepOutcome = Omit<PlannedStep, "status" | "request"> & {
  status: "created" | "exists" | "passed" | "late" | "dropped" | "skipped";
};

/**
 * The handler's result and log line. Holds no address: the recipient is its schedule-name stem. `duplicate`: the
 * trigger had enrolled the subscriber before (its ledger item exists): nothing created.
 */
export interface EnrolmentResult {
  journey: string;
  kind: EventKind;
  outcome: "enrolled" | "exited" | "rejected" | "duplicate";
  recipient?: string;
  /** A trigger's id in the ledger (see triggerId in infra/core/journeys/journeys.ts). */
  trigger?: string;
  zone?: string;
  zoneStatus?: ZoneStatus;
  steps?: StepOutcome[];
  /** Exit: schedules deleted now, and those that were not pending (sent, deleted before, or never created). */
  deleted?: string[];
  notPending?: string[];
  reason?: RejectReason;
  message?: string;
}

/**
 * Carries out `d`. A trigger claims its enrolment first (a claimed one is a `duplicate`: nothing created). A step is
 * created only if it is still due at least CREATE_LEAD_MS after `clock()` when its call is made, not only when
 * decided: a backlog's calls take minutes, and Scheduler's handling of an at() in the past is undocumented (it may
 * send at once, a second time). All-or-nothing (see the file header): a failure, or no time left within `budgetMs`
 * (the handler's CREATE_BUDGET_MS), deletes what this call created, releases the claim, then throws.
 */
export async function applyDecision(
  clients: EnrolmentClients,
  kind: EventKind,
  d: Decision,
  callTimeoutMs = CALL_TIMEOUT_MS,
  clock: () => number = Date.now,
  budgetMs?: number,
): Promise<EnrolmentResult> {
  const base = { journey: d.journey, kind };
  if (d.outcome === "rejected")
    return {
      ...base,
      outcome: "rejected",
      ...(d.recipient ? { recipient: d.recipient } : {}),
      reason: d.reason,
      message: d.message,
    };
  if (d.outcome === "exit") return exit(clients.scheduler, d, callTimeoutMs);
  const start = clock();
  const left = () => (budgetMs === undefined ? callTimeoutMs : start + budgetMs - clock());
  const claim = { ...enrolmentClaim(d, start), token: randomUUID() };
  const found = { ...base, recipient: d.recipient, trigger: d.trigger };
  if (!(await claimEnrolment(clients.ledger, claim, start, Math.min(callTimeoutMs, left()))))
    return {
      ...found,
      outcome: "duplicate",
      message: `this trigger enrolled the subscriber before (${claim.key}): nothing created`,
    };
  try {
    const steps = await createSteps(clients.scheduler, d, callTimeoutMs, clock, left, budgetMs);
    return { ...found, outcome: "enrolled", zone: d.zone, zoneStatus: d.zoneStatus, steps };
  } catch (e) {
    await releaseClaim(clients.ledger, claim, callTimeoutMs, e as Error);
    throw e;
  }
}

async function exit(
  client: SchedulerClient,
  d: Extract<Decision, { outcome: "exit" }>,
  callTimeoutMs: number,
): Promise<EnrolmentResult> {
  const deleted: string[] = [];
  const notPending: string[] = [];
  for (const request of d.deletes) {
    const gone = await call(
      `DeleteSchedule ${request.GroupName}/${request.Name}`,
      "ResourceNotFoundException",
      callTimeoutMs,
      (abortSignal) => client.send(new DeleteScheduleCommand(request), { abortSignal }),
    );
    (gone ? notPending : deleted).push(request.Name);
  }
  return { journey: d.journey, kind: "exit", outcome: "exited", recipient: d.recipient, deleted, notPending };
}

type Claim = EnrolmentClaim & { token: string };

/**
 * Claims the enrolment (PutItem if no item has its key): true when claimed now, false when it was claimed before.
 * A failed call may still have written the item: it is released (only if it is this call's) before the error goes on.
 */
async function claimEnrolment(ledger: EnrolmentLedger, claim: Claim, now: number, timeoutMs: number) {
  const put = new PutItemCommand({
    TableName: ledger.tableName,
    Item: {
      [LEDGER_KEY]: { S: claim.key },
      [LEDGER_TTL_ATTRIBUTE]: { N: String(claim.expiresAt) },
      [ENROLMENT_ATTRIBUTES.claimedAt]: { S: new Date(now).toISOString() },
      [ENROLMENT_ATTRIBUTES.claim]: { S: claim.token },
    },
    ConditionExpression: "attribute_not_exists(#pk)",
    ExpressionAttributeNames: { "#pk": LEDGER_KEY },
  });
  try {
    const duplicate = await call(`PutItem ${claim.key}`, "ConditionalCheckFailedException", timeoutMs, (abortSignal) =>
      ledger.client.send(put, { abortSignal }),
    );
    return !duplicate;
  } catch (e) {
    await releaseClaim(ledger, claim, timeoutMs, e as Error, "if it was written, ");
    throw e;
  }
}

/**
 * Deletes this call's claim, so a retry of the trigger enrols (an item claimed by another call is left alone). If
 * that fails, the error thrown instead of `cause` says so: a retry would report a duplicate and enrol nothing.
 */
async function releaseClaim(
  ledger: EnrolmentLedger,
  claim: Claim,
  timeoutMs: number,
  cause: Error,
  written = "",
): Promise<void> {
  const del = new DeleteItemCommand({
    TableName: ledger.tableName,
    Key: { [LEDGER_KEY]: { S: claim.key } },
    ConditionExpression: "#claim = :token",
    ExpressionAttributeNames: { "#claim": ENROLMENT_ATTRIBUTES.claim },
    ExpressionAttributeValues: { ":token": { S: claim.token } },
  });
  try {
    await call(`DeleteItem ${claim.key}`, "ConditionalCheckFailedException", timeoutMs, (abortSignal) =>
      ledger.client.send(del, { abortSignal }),
    );
  } catch (e) {
    throw new EnrolmentError(
      withoutAddresses(
        `${cause.message}; could not release the enrolment claim (${(e as Error).message}): ${written}a retry of this trigger reports a duplicate and creates nothing; delete the ledger item ${claim.key} to enrol it again`,
      ),
    );
  }
}

/** The steps of an enrolment, created all-or-nothing within `left()` (see applyDecision). */
async function createSteps(
  client: SchedulerClient,
  d: Extract<Decision, { outcome: "enrol" }>,
  callTimeoutMs: number,
  clock: () => number,
  left: () => number,
  budgetMs: number | undefined,
): Promise<StepOutcome[]> {
  const steps: StepOutcome[] = [];
  /** Every schedule this call asked to create and did not find already there (an unanswered call included). */
  const attempted: CreateScheduleRequest[] = [];
  try {
    for (const { request, ...step } of d.steps) {
      let status: StepOutcome["status"] = request ? "late" : step.status === "planned" ? "passed" : step.status;
      if (request && inTimeToCreate(Date.parse(step.utc), clock())) {
        const remaining = left();
        if (remaining <= 0)
          throw new EnrolmentError(
            `no time left to create ${request.GroupName}/${request.Name} within ${budgetMs! / 1000} s of the invocation`,
          );
        attempted.push(request);
        const exists = await call(
          `CreateSchedule ${request.GroupName}/${request.Name}`,
          "ConflictException",
          Math.min(callTimeoutMs, remaining),
          (abortSignal) => client.send(new CreateScheduleCommand(sdkRequest(request)), { abortSignal }),
        );
        if (exists) attempted.pop(); // an earlier delivery's: not ours to undo
        status = exists ? "exists" : "created";
      }
      steps.push({ ...step, status });
    }
  } catch (e) {
    // Each was created at least CREATE_LEAD_MS before it is due: deleted before the earliest is due, none has fired.
    const earliestDue = Math.min(...attempted.map((r) => Date.parse(d.steps.find((s) => s.request === r)!.utc)));
    await undo(client, attempted, earliestDue - UNDO_MARGIN_MS, callTimeoutMs, clock, e as Error);
    throw e;
  }
  return steps;
}

/**
 * Deletes the schedules a failed call created (all at once, each bounded, all before `byMs`); what cannot be deleted
 * is named in the error thrown instead of `cause`: it stays and sends once (a retry finds it: ConflictException).
 */
async function undo(
  client: SchedulerClient,
  created: CreateScheduleRequest[],
  byMs: number,
  callTimeoutMs: number,
  clock: () => number,
  cause: Error,
): Promise<void> {
  const left = Math.max(1, Math.min(callTimeoutMs, byMs - clock()));
  const results = await Promise.allSettled(
    created.map(({ Name, GroupName }) =>
      call(`DeleteSchedule ${GroupName}/${Name}`, "ResourceNotFoundException", left, (abortSignal) =>
        client.send(new DeleteScheduleCommand({ Name, GroupName }), { abortSignal }),
      ),
    ),
  );
  const kept = created.filter((_, k) => results[k].status === "rejected").map((r) => `${r.GroupName}/${r.Name}`);
  if (kept.length)
    throw new EnrolmentError(
      withoutAddresses(
        `${cause.message}; could not undo ${kept.join(", ")} (it stays and sends once; a retry finds it and does not create it again)`,
      ),
    );
}

/** The SDK takes StartDate/EndDate (recurring schedules only; journeys have none) as Dates, not ISO text. */
function sdkRequest({ StartDate, EndDate, ...rest }: CreateScheduleRequest): CreateScheduleCommandInput {
  return {
    ...rest,
    ...(StartDate === undefined ? {} : { StartDate: new Date(StartDate), EndDate: new Date(EndDate!) }),
  };
}

/** Runs one bounded call; true when it failed with `expected` (the idempotent case), throws on any other failure. */
async function call(
  what: string,
  expected: string,
  timeoutMs: number,
  send: (signal: AbortSignal) => Promise<unknown>,
): Promise<boolean> {
  try {
    await send(AbortSignal.timeout(timeoutMs));
    return false;
  } catch (e) {
    const err = e as { name?: string; message?: string };
    if (err?.name === expected) return true;
    const reason =
      err?.name === "AbortError" || err?.name === "TimeoutError"
        ? `no answer within ${timeoutMs / 1000} s`
        : `${err?.name}: ${err?.message}`;
    throw new EnrolmentError(withoutAddresses(`${what}: ${String(reason).split("\n")[0]}`));
  }
}

export function withoutAddresses(text: string): string {
  return text.replace(/[^\s"'<>(),;:@]+@[^\s"'<>(),;:@]+/g, "<address>");
}
