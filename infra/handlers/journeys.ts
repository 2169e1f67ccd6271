/**
 * The journey enrolment Lambda (bundled by esbuild into one file at program time: infra/journeys.ts).
 * Each journey's EventBridge rules invoke it with {journey, kind: "trigger" | "exit", event}. It decides with the
 * launcher's send-time rules (infra/core/journeys/journeys.ts) and creates or deletes the subscriber's step schedules.
 *
 * Configuration (environment, set by the stack): SENDTIME_JOURNEYS (the validated journey list, JSON),
 * SENDTIME_ENROLMENT ({target, windowMinutes, sms?}: the SES target every schedule carries and, with SMS steps, the
 * texts of their templates, templates/<name>/sms.txt, read by the stack: the function has no templates folder) and SENDTIME_LEDGER_TABLE (the
 * occurrence ledger, where each trigger's enrolment is claimed once: a duplicate of a trigger creates nothing).
 *
 * A rejected subscriber (bad address, no id) is a result, not an error: retrying cannot fix it. An AWS failure
 * throws, so Lambda retries the event and then hands it to the on-failure destination: nothing is dropped.
 * The log line is the result, which names the recipient by its schedule-name stem and holds no address.
 * Schedules are created all-or-nothing and a failed enrolment's claim is released (enrolment.ts), so a retry starts
 * from nothing. A step handled more than the journey's lateGraceMinutes after its time is not sent: the handler writes
 * a LATE_STEPS_METRIC line in CloudWatch's Embedded Metric Format (no IAM needed), which the journeys' alarm watches;
 * a duplicate trigger, a DUPLICATE_TRIGGERS_METRIC line (counted, not alarmed: EventBridge delivers at least once).
 */
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DUPLICATE_TRIGGERS_METRIC,
  Journey,
  LATE_STEPS_METRIC,
  parseJourneys,
} from "../core/journeys/journeys-definition";
import { decide } from "../core/journeys/journeys";
import { EnrolmentSettings, JourneyInvocation } from "../core/journeys/journey-types";
import { isIanaZone } from "../core/journeys/subscriber-zone";
import { smsTemplateNames } from "../core/journeys/sms-steps";
import {
  applyDecision,
  CALL_TIMEOUT_MS,
  CREATE_BUDGET_MS,
  EnrolmentClients,
  enrolmentLedgerClient,
  EnrolmentResult,
  enrolmentSchedulerClient,
} from "./enrolment";

/** The client classes the handler uses (its bundled copies): tests mock them with aws-sdk-client-mock. */
export { SchedulerClient, DynamoDBClient };

export const JOURNEYS_ENV = "SENDTIME_JOURNEYS";
export const ENROLMENT_ENV = "SENDTIME_ENROLMENT";
export const LEDGER_TABLE_ENV = "SENDTIME_LEDGER_TABLE";

interface HandlerState {
  journeys: Map<string, Journey>;
  settings: EnrolmentSettings;
  clients: EnrolmentClients;
}

let state: HandlerState | undefined;

export async function handler(input: JourneyInvocation): Promise<EnrolmentResult> {
  state ??= loadState(process.env);
  const journey = state.journeys.get(input?.journey);
  // A rule pointing at a journey this function does not know is a deployment fault: fail, so the event is kept.
  if (!journey)
    throw new Error(
      `unknown journey ${JSON.stringify(input?.journey)} (known: ${[...state.journeys.keys()].join(", ")})`,
    );
  if (input.kind !== "trigger" && input.kind !== "exit")
    throw new Error(`kind must be "trigger" or "exit", got ${JSON.stringify(input.kind)}`);
  const decision = decide(journey, input.kind, input.event, state.settings, Date.now());
  const result = await applyDecision(state.clients, input.kind, decision, CALL_TIMEOUT_MS, Date.now, CREATE_BUDGET_MS);
  (result.outcome === "rejected" ? console.warn : console.log)(JSON.stringify(result));
  const late = result.steps?.filter((s) => s.status === "late").length ?? 0;
  if (late) process.stdout.write(journeyMetric(LATE_STEPS_METRIC, journey.name, late, Date.now()) + "\n");
  if (result.outcome === "duplicate")
    process.stdout.write(journeyMetric(DUPLICATE_TRIGGERS_METRIC, journey.name, 1, Date.now()) + "\n");
  return result;
}

/**
 * One Embedded Metric Format line: CloudWatch Logs turns it into the metric. Written straight to stdout, not through
 * console.log, which with the function's JSON log format would wrap it in another object.
 */
export function journeyMetric(
  metric: { namespace: string; name: string; dimension: string },
  journey: string,
  count: number,
  atMs: number,
): string {
  const { namespace, name, dimension } = metric;
  return JSON.stringify({
    _aws: {
      Timestamp: atMs,
      CloudWatchMetrics: [
        { Namespace: namespace, Dimensions: [[dimension]], Metrics: [{ Name: name, Unit: "Count" }] },
      ],
    },
    [dimension]: journey,
    [name]: count,
  });
}

function loadState(env: NodeJS.ProcessEnv): HandlerState {
  const read = (key: string) => {
    try {
      return JSON.parse(env[key] ?? "");
    } catch {
      throw new Error(`environment ${key} is missing or not JSON`);
    }
  };
  const journeys = parseJourneys(read(JOURNEYS_ENV), JOURNEYS_ENV, isIanaZone);
  const settings = read(ENROLMENT_ENV) as EnrolmentSettings;
  if (!settings?.target?.targetRoleArn || !(settings.windowMinutes >= 1))
    throw new Error(`environment ${ENROLMENT_ENV} lacks target or windowMinutes`);
  // A deployment fault, as an unknown journey: fail (the event is kept) rather than skip every text.
  const lacking = smsTemplateNames(journeys).filter((t) => typeof settings.sms?.templates?.[t] !== "string");
  if (lacking.length) throw new Error(`environment ${ENROLMENT_ENV} lacks the SMS templates ${lacking.join(", ")}`);
  const tableName = env[LEDGER_TABLE_ENV];
  if (!tableName) throw new Error(`environment ${LEDGER_TABLE_ENV} (the occurrence ledger's table) is missing`);
  return {
    journeys: new Map(journeys.map((j) => [j.name, j])),
    settings,
    clients: { scheduler: enrolmentSchedulerClient(), ledger: { client: enrolmentLedgerClient(), tableName } },
  };
}

/** Forget the loaded configuration (tests change the environment between cases). */
export function resetForTests(): void {
  state = undefined;
}
