/**
 * The journey enrolment Lambda (bundled by esbuild into one file at program time: infra/journeys.ts).
 * Each journey's EventBridge rules invoke it with {journey, kind: "trigger" | "exit", event}. It decides with the
 * launcher's send-time rules (scripts/lib/core/journeys.ts) and creates or deletes the subscriber's step schedules.
 *
 * Configuration (environment, set by the stack): SENDTIME_JOURNEYS (the validated journey list, JSON) and
 * SENDTIME_ENROLMENT ({target, windowMinutes}: the SES target every schedule carries).
 *
 * A rejected subscriber (bad address, no id) is a result, not an error: retrying cannot fix it. An AWS failure
 * throws, so Lambda retries the event and then hands it to the on-failure destination: nothing is dropped.
 * The log line is the result, which names the recipient by its schedule-name stem and holds no address.
 */
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { Journey, parseJourneys } from "../../../infra/journeys-definition";
import { decide, EnrolmentSettings, isIanaZone, JourneyInvocation } from "../core/journeys";
import { applyDecision, EnrolmentResult, enrolmentSchedulerClient } from "./enrolment";

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
  if (!journey) throw new Error(`unknown journey ${JSON.stringify(input?.journey)} (known: ${[...state.journeys.keys()].join(", ")})`);
  if (input.kind !== "trigger" && input.kind !== "exit")
    throw new Error(`kind must be "trigger" or "exit", got ${JSON.stringify(input.kind)}`);
  const decision = decide(journey, input.kind, input.event, state.settings, Date.now());
  const result = await applyDecision(state.client, input.kind, decision);
  (result.outcome === "rejected" ? console.warn : console.log)(JSON.stringify(result));
  return result;
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
