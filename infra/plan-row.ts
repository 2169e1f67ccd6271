/**
 * The plan format, owned here and nowhere else: one line of plan.jsonl is one schedule. The launcher writes it, the
 * fan-out state machine reads its fields, the operator scripts read `at(...)` expressions back. Pure: no I/O.
 *
 * Why JSON Lines and not CSV: Step Functions' CSV reader treats a backslash as an escape and drops it, so JSON text in
 * a CSV field would arrive corrupted; JSONL keeps types and text exactly.
 */
import { PLANS_PREFIX } from "./naming";
import { stepFunctions } from "./quotas";

/** A plan line must fit one Distributed Map batch on its own, with room for the batch wrapper and BatchInput. */
export const MAX_PLAN_ROW_BYTES = stepFunctions.maxBatchBytes - 1_024;

/** One line of plan.jsonl: one schedule. The planner writes it; the state machine reads these fields only. */
export interface PlanRow {
  schedule_name: string;
  /** Local wall-clock time in `timezone`, `YYYY-MM-DDTHH:MM:SS`. */
  send_at: string;
  /** IANA zone name, or `UTC` when the local time would be ambiguous. */
  timezone: string;
  email: string;
  template: string;
  /** Personalization, every value a string. */
  template_data: Record<string, string>;
  recipient_id: string;
  step: number;
  /** The same instant as send_at + timezone, ISO 8601 in UTC. */
  utc: string;
  /** The A/B variant the recipient is in (A-Z a-z 0-9 _ -, SES tag characters), null without variants. */
  variant: string | null;
  /** The schedule's expression, which the fan-out passes to CreateSchedule as is: `at(<send_at>)`. */
  schedule_expression: string;
}

/** The fields of a plan line, in the order they are written. */
export const PLAN_ROW_FIELDS = [
  "schedule_name",
  "send_at",
  "timezone",
  "email",
  "template",
  "template_data",
  "recipient_id",
  "step",
  "utc",
  "variant",
  "schedule_expression",
] as const satisfies readonly (keyof PlanRow)[];

/** A plan row whose every field is already JSON text: what the planner caches per zone and per row. */
export type PlanRowJson = { [K in keyof PlanRow]: string };

/**
 * One plan line (with its newline) from fields already serialized as JSON. The planner calls this two million times
 * for a million recipients × 2 steps, so it concatenates rather than calling JSON.stringify on an object.
 */
export function planLineFromJson(j: PlanRowJson): string {
  return (
    `{"schedule_name":${j.schedule_name},"send_at":${j.send_at},"timezone":${j.timezone},"email":${j.email},` +
    `"template":${j.template},"template_data":${j.template_data},"recipient_id":${j.recipient_id},"step":${j.step},"utc":${j.utc},` +
    `"variant":${j.variant},"schedule_expression":${j.schedule_expression}}\n`
  );
}

/** One plan line (with its newline). */
export function formatPlanRow(row: PlanRow): string {
  const j = {} as PlanRowJson;
  for (const k of PLAN_ROW_FIELDS) j[k] = JSON.stringify(row[k]);
  return planLineFromJson(j);
}

/** A plan line back into its row; throws with what is wrong. */
export function parsePlanRow(line: string): PlanRow {
  const value = JSON.parse(line) as Record<string, unknown>;
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("a plan line must be a JSON object");
  for (const k of PLAN_ROW_FIELDS) {
    const v = value[k];
    const ok =
      k === "step"
        ? Number.isInteger(v)
        : k === "template_data"
          ? v !== null && typeof v === "object" && Object.values(v as object).every((x) => typeof x === "string")
          : k === "variant"
            ? v === null || typeof v === "string"
            : typeof v === "string";
    if (!ok) throw new Error(`plan line field "${k}" is missing or of the wrong type`);
  }
  if (parseSendAt(value.send_at as string) === undefined)
    throw new Error(`plan line send_at "${value.send_at}" is not YYYY-MM-DDTHH:MM:SS`);
  return value as unknown as PlanRow;
}

/** A wall-clock time as `send_at` writes it; `month` is 1–12. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

/** Seconds are accepted and ignored: Scheduler's `at()` has minute precision, and the planner always writes `:00`. */
const SEND_AT = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):\d\d$/;
const AT_EXPRESSION = /^at\((.*)\)$/;

/** The wall-clock time of a `send_at` value, or undefined when it is not one. */
export function parseSendAt(sendAt: string): WallClock | undefined {
  const m = SEND_AT.exec(sendAt);
  if (!m) return undefined;
  const [year, month, day, hour, minute] = m.slice(1).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59) return undefined;
  return { year, month, day, hour, minute };
}

/** The Scheduler expression of a one-time schedule: `at(YYYY-MM-DDTHH:MM:SS)`. */
export function atExpression(sendAt: string): string {
  return `at(${sendAt})`;
}

/** The wall-clock time of an `at(...)` expression, or undefined (a rate or cron schedule, or garbage). */
export function parseAtExpression(expression: string | undefined): WallClock | undefined {
  const m = AT_EXPRESSION.exec(expression ?? "");
  return m ? parseSendAt(m[1]) : undefined;
}

/** The S3 key of one launch's plan. */
export function planKey(campaignId: string, launchId: string): string {
  return `${PLANS_PREFIX}${campaignId}/${launchId}.jsonl`;
}
