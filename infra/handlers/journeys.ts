/**
 * The journey enrolment Lambda (bundled by esbuild into one file at program time: infra/journeys.ts).
 * Each journey's EventBridge rules invoke it with {journey, kind: "trigger" | "exit", event}. It decides with the
 * launcher's send-time rules (infra/rules/journeys.ts) and creates or deletes the subscriber's step schedules.
 *
 * Configuration (environment, set by the stack): SENDTIME_JOURNEYS (the validated journey list, JSON) and
 * SENDTIME_ENROLMENT ({target, windowMinutes}: the SES target every schedule carries).
 *
 * A rejected subscriber (bad address, no id) is a result, not an error: retrying cannot fix it. An AWS failure
 * throws, so Lambda retries the event and then hands it to the on-failure destination: nothing is dropped.
 * The log line is the result, which names the recipient by its schedule-name stem and holds no address.
 * Schedules are created all-or-nothing (enrolment.ts), so a retry starts from nothing. A step handled more than the
 * journey's lateGraceMinutes after its time is not sent: the handler writes a LATE_STEPS_METRIC line in CloudWatch's
 * Embedded Metric Format (no IAM needed), which the journeys' alarm watches.
 */
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { Journey, LATE_STEPS_METRIC, parseJourneys } from "../rules/journeys-definition";
import { decide, EnrolmentSettings, isIanaZone, JourneyInvocation } from "../rules/journeys";
import {
  applyDecision,
  CALL_TIMEOUT_MS,
  CREATE_BUDGET_MS,
  EnrolmentResult,
  enrolmentSchedulerClient,
} from "./enrolment";

/** The client class the handler uses (its bundled copy): tests mock it with aws-sdk-client-mock. */
export { SchedulerClient };

export const JOURNEYS_ENV = "SENDTIME_JOURNEYS";
export const ENROLMENT_ENV = "SENDTIME_ENROLMENT";

interface HandlerState {
  journeys: Map<string, Journey>;
  settings: EnrolmentSettings;
  client: SchedulerClient;
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
  const result = await applyDecision(state.client, input.kind, decision, CALL_TIMEOUT_MS, Date.now, CREATE_BUDGET_MS);
  (result.outcome === "rejected" ? console.warn : console.log)(JSON.stringify(result));
  const late = result.steps?.filter((s) => s.status === "late").length ?? 0;
  if (late) process.stdout.write(lateStepsMetric(journey.name, late, Date.now()) + "\n");
  return result;
}

/**
 * One Embedded Metric Format line: CloudWatch Logs turns it into the metric. Written straight to stdout, not through
 * console.log, which with the function's JSON log format would wrap it in another object.
 */
export function lateStepsMetric(journey: string, count: number, atMs: number): string {
  const { namespace, name, dimension } = LATE_STEPS_METRIC;
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
  return { journeys: new Map(journeys.map((j) => [j.name, j])), settings, client: enrolmentSchedulerClient() };
}

/** Forget the loaded configuration (tests change the environment between cases). */
export function resetForTests(): void {
  state = undefined;
}
