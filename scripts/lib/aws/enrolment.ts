/**
 * Carries out a journey decision (scripts/lib/core/journeys.ts) against EventBridge Scheduler: CreateSchedule per
 * step (ConflictException = already enrolled), DeleteSchedule per step on exit (ResourceNotFoundException = not
 * pending). Both are safe to repeat, which is what at-least-once delivery needs. Every call is bounded in time.
 * Imports the Scheduler client only, so the deployed handler's bundle stays small.
 */
import { CreateScheduleCommand, CreateScheduleCommandInput, DeleteScheduleCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import type { CreateScheduleRequest } from "../../../infra/schedule-request";
import { CREATE_MARGIN_MS, Decision, EventKind, PlannedStep, RejectReason } from "../core/journeys";
import { ZoneStatus } from "../../../infra/rules/send-time";

// As in clients.ts: the SDK's Node-version notice (the README states it) stays off stderr unless asked for.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** Longest one Scheduler call may take, SDK retries included. */
export const CALL_TIMEOUT_MS = 10_000;

export function enrolmentSchedulerClient(region?: string): SchedulerClient {
  return new SchedulerClient({
    region: region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION,
    retryMode: "adaptive",
    maxAttempts: 5,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000 },
  });
}

/**
 * A planned step as it went: created now; exists: created by an earlier delivery; passed: due already when decided,
 * not created; late: came due before its call could be made (a slow backlog), not created, so never sent.
 */
export type StepOutcome = Omit<PlannedStep, "status" | "request"> & { status: "created" | "exists" | "passed" | "late" };

/** The handler's result and log line. Holds no address: the recipient is its schedule-name stem. */
export interface EnrolmentResult {
  journey: string;
  kind: EventKind;
  outcome: "enrolled" | "exited" | "rejected";
  recipient?: string;
  zone?: string;
  zoneStatus?: ZoneStatus;
  steps?: StepOutcome[];
  /** Exit: schedules deleted now, and those that were not pending (sent, deleted before, or never created). */
  deleted?: string[];
  notPending?: string[];
  reason?: RejectReason;
  message?: string;
}

/** An AWS failure, one line, with anything that looks like an address removed (logs hold no addresses). */
export class EnrolmentError extends Error {}

/**
 * Carries out `d`. A step is created only if it is still due at least CREATE_MARGIN_MS after `clock()` when its call
 * is made, not only when decided: a backlog's calls take minutes, and Scheduler's handling of an at() in the past is
 * undocumented (it may send at once, a second time).
 */
export async function applyDecision(
  client: SchedulerClient,
  kind: EventKind,
  d: Decision,
  callTimeoutMs = CALL_TIMEOUT_MS,
  clock: () => number = Date.now,
): Promise<EnrolmentResult> {
  const base = { journey: d.journey, kind };
  if (d.outcome === "rejected")
    return { ...base, outcome: "rejected", ...(d.recipient ? { recipient: d.recipient } : {}), reason: d.reason, message: d.message };
  if (d.outcome === "exit") {
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
    return { ...base, outcome: "exited", recipient: d.recipient, deleted, notPending };
  }
  const steps: StepOutcome[] = [];
  for (const { request, ...step } of d.steps) {
    let status: StepOutcome["status"] = request ? "late" : "passed";
    if (request && Date.parse(step.utc) >= clock() + CREATE_MARGIN_MS) {
      const exists = await call(`CreateSchedule ${request.GroupName}/${request.Name}`, "ConflictException", callTimeoutMs, (abortSignal) =>
        client.send(new CreateScheduleCommand(sdkRequest(request)), { abortSignal }),
      );
      status = exists ? "exists" : "created";
    }
    steps.push({ ...step, status });
  }
  return { ...base, outcome: "enrolled", recipient: d.recipient, zone: d.zone, zoneStatus: d.zoneStatus, steps };
}

/** The SDK takes StartDate/EndDate (recurring schedules only; journeys have none) as Dates, not ISO text. */
function sdkRequest({ StartDate, EndDate, ...rest }: CreateScheduleRequest): CreateScheduleCommandInput {
  return { ...rest, ...(StartDate === undefined ? {} : { StartDate: new Date(StartDate), EndDate: new Date(EndDate!) }) };
}

/** Runs one bounded call; true when it failed with `expected` (the idempotent case), throws on any other failure. */
async function call(what: string, expected: string, timeoutMs: number, send: (signal: AbortSignal) => Promise<unknown>): Promise<boolean> {
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
