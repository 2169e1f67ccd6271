/**
 * The plan format, owned here and nowhere else: one line of plan.jsonl is one schedule. The launcher writes it, the
 * fan-out state machine reads its fields, the operator scripts read `at(...)` and `cron(...)` expressions back.
 * Pure: no I/O.
 *
 * A one-time row's expression is `at(<send_at>)` and it has no `start_date`/`end_date` (absent, never null: plans of
 * one-time campaigns stay byte for byte what they were). A recurring row's expression is `cron(M H …)` in `timezone`,
 * and it also carries `start_date` and `end_date` (ISO instants in UTC) for CreateSchedule's StartDate and EndDate;
 * its `send_at`/`utc` are its first occurrence.
 *
 * Why JSON Lines and not CSV: Step Functions' CSV reader treats a backslash as an escape and drops it, so JSON text in
 * a CSV field would arrive corrupted; JSONL keeps types and text exactly.
 *
 * A bulk plan's lines (`--bulk`) are bulk-plan-row.ts's; the `at()` and `cron()` expressions schedule-expression.ts's.
 */
import { PLANS_PREFIX } from "./naming";
import { stepFunctions } from "./quotas";
import { parseSendAt } from "./schedule-expression";
import type { SmsPlanFields } from "../send/sms-input";

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
  /** The schedule's expression, which the fan-out passes to CreateSchedule as is: `at(<send_at>)` or `cron(…)`. */
  schedule_expression: string;
  /** Recurring rows only: CreateSchedule's StartDate, ISO 8601 in UTC. Absent on one-time rows. */
  start_date?: string;
  /** Recurring rows only: CreateSchedule's EndDate, ISO 8601 in UTC. Absent on one-time rows. */
  end_date?: string;
  /**
   * A text's row (channel "sms", docs/sms.md) has these after the fields above, in this order (SMS_ROW_FIELDS); an
   * email's has none of them. Their meaning is sms-input.ts SmsPlanFields'.
   */
  channel?: "sms";
  phone?: string;
  body?: string;
  segments?: number;
  until?: string;
  same_subject_limit?: number;
}

/** A text's plan row: every field of its channel present. */
export type SmsPlanRow = PlanRow & SmsPlanFields;

/** The fields of a text's row after the email row's, in the order they are written (same_subject_limit when set). */
export const SMS_ROW_FIELDS = [
  "channel",
  "phone",
  "body",
  "segments",
  "until",
  "same_subject_limit",
] as const satisfies readonly (keyof SmsPlanFields)[];

/** Whether a row is a text's (its channel "sms"); a row without `channel` is an email. */
export function isSmsPlanRow(row: PlanRow): row is SmsPlanRow {
  return row.channel === "sms";
}

/** The fields of every plan line, in the order they are written (a recurring row's dates follow them). */
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

/** The fields only recurring rows have, in the order they are written, after PLAN_ROW_FIELDS. */
export const RECURRING_ROW_FIELDS = ["start_date", "end_date"] as const satisfies readonly (keyof PlanRow)[];

/** A plan row whose every field is already JSON text: what the planner caches per zone and per row. */
export type PlanRowJson = { [K in (typeof PLAN_ROW_FIELDS)[number]]: string } & {
  start_date?: string;
  end_date?: string;
};

/**
 * The fields of a plan line that are the recipient's own or its group's (variant, and the template that goes with it);
 * the others are shared by every recipient of a decision.
 */
export type RecipientFields = "schedule_name" | "email" | "template" | "template_data" | "recipient_id" | "variant";

/**
 * A plan line's text around its recipient's and group's fields, from the shared fields already serialized as JSON: the
 * planner renders these once per answer of its decider (the same for every group), and each line is then thirteen
 * pieces (planLineFromParts). Three strings per line: after the name, after the recipient id, after the variant; a
 * planner keeps the parts of several lines one after another in one array.
 */
export type PlanLineParts = readonly string[];

export function planLineParts(
  j: Omit<PlanRowJson, RecipientFields>,
): [afterName: string, afterId: string, afterVariant: string] {
  // Each part one flat string (joined, not concatenated into a rope): the planner copies these into every line.
  return [
    [`,"send_at":`, j.send_at, `,"timezone":`, j.timezone, `,"email":`].join(""),
    [`,"step":`, j.step, `,"utc":`, j.utc, `,"variant":`].join(""),
    [
      `,"schedule_expression":`,
      j.schedule_expression,
      ...(j.start_date === undefined ? [] : [`,"start_date":`, j.start_date, `,"end_date":`, j.end_date]),
      "}\n",
    ].join(""),
  ];
}

/**
 * One plan line (with its newline) from its parts (`p[at]` to `p[at + 2]`) and the recipient's and group's fields,
 * already serialized as JSON.
 */
export function planLineFromParts(
  p: PlanLineParts,
  at: number,
  scheduleName: string,
  email: string,
  template: string,
  templateData: string,
  recipientId: string,
  variant: string,
): string {
  return (
    `{"schedule_name":` +
    scheduleName +
    p[at] +
    email +
    `,"template":` +
    template +
    `,"template_data":` +
    templateData +
    `,"recipient_id":` +
    recipientId +
    p[at + 1] +
    variant +
    p[at + 2]
  );
}

/** One plan line (with its newline) from fields already serialized as JSON. */
export function planLineFromJson(j: PlanRowJson): string {
  return planLineFromParts(
    planLineParts(j),
    0,
    j.schedule_name,
    j.email,
    j.template,
    j.template_data,
    j.recipient_id,
    j.variant,
  );
}

/** One plan line (with its newline). */
export function formatPlanRow(row: PlanRow): string {
  const j = {} as PlanRowJson;
  for (const k of PLAN_ROW_FIELDS) j[k] = JSON.stringify(row[k]);
  if (row.start_date !== undefined) for (const k of RECURRING_ROW_FIELDS) j[k] = JSON.stringify(row[k]);
  return planLineFromJson(j);
}

/**
 * A plan line as a JSON object whose every field of `fields` is `valid` (strings unless `valid` says otherwise);
 * throws naming the first field that is not (`what`: "plan line", "bulk plan line").
 */
export function parseLineFields<K extends string>(
  line: string,
  fields: readonly K[],
  valid: Partial<Record<K, (v: unknown) => boolean>>,
  what: string,
): Record<string, unknown> {
  const value = JSON.parse(line) as Record<string, unknown>;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new Error("a plan line must be a JSON object");
  for (const k of fields) {
    const check = valid[k] ?? ((v: unknown) => typeof v === "string");
    if (!check(value[k])) throw new Error(`${what} field "${k}" is missing or of the wrong type`);
  }
  return value;
}

/** A step number, an A/B variant or none: fields both kinds of plan line have. */
export const STEP_AND_VARIANT = {
  step: (v: unknown) => Number.isInteger(v),
  variant: (v: unknown) => v === null || typeof v === "string",
};

/** A plan line back into its row; throws with what is wrong. */
export function parsePlanRow(line: string): PlanRow {
  const value = parseLineFields(
    line,
    PLAN_ROW_FIELDS,
    {
      ...STEP_AND_VARIANT,
      template_data: (v) =>
        v !== null && typeof v === "object" && Object.values(v as object).every((x) => typeof x === "string"),
    },
    "plan line",
  );
  if (parseSendAt(value.send_at as string) === undefined)
    throw new Error(`plan line send_at "${value.send_at}" is not YYYY-MM-DDTHH:MM:SS`);
  const recurring = (value.schedule_expression as string).startsWith("cron(");
  for (const k of RECURRING_ROW_FIELDS) {
    const v = value[k];
    if (recurring && !(typeof v === "string" && ISO_UTC.test(v) && !Number.isNaN(Date.parse(v))))
      throw new Error(
        `plan line field "${k}" of a recurring (cron) row must be an ISO instant in UTC (YYYY-MM-DDTHH:MM:SS[.sss]Z)`,
      );
    if (!recurring && v !== undefined) throw new Error(`plan line field "${k}" is only for recurring (cron) rows`);
  }
  if (recurring && Date.parse(value.start_date as string) >= Date.parse(value.end_date as string))
    throw new Error(`plan line start_date ${value.start_date} is not before end_date ${value.end_date}`);
  smsFieldsProblem(value, recurring);
  return value as unknown as PlanRow;
}

/** A text's fields (SMS_ROW_FIELDS), each checked; throws naming the first wrong one. An email row has none. */
function smsFieldsProblem(value: Record<string, unknown>, recurring: boolean): void {
  if (value.channel === undefined || value.channel === "email") {
    const stray = SMS_ROW_FIELDS.find((k) => k !== "channel" && value[k] !== undefined);
    if (stray) throw new Error(`plan line field "${stray}" is only for a text's row (channel "sms")`);
    return;
  }
  if (value.channel !== "sms")
    throw new Error(`plan line channel ${JSON.stringify(value.channel)}: "sms", or absent for an email`);
  if (recurring) throw new Error(`plan line of channel "sms" must be one-time (at(...)): texts do not recur`);
  const checks: Record<string, (v: unknown) => boolean> = {
    phone: (v) => typeof v === "string" && /^\+[1-9]\d{6,14}$/.test(v),
    body: (v) => typeof v === "string" && v !== "",
    segments: (v) => Number.isInteger(v) && (v as number) >= 1,
    until: (v) => typeof v === "string" && ISO_UTC.test(v) && !Number.isNaN(Date.parse(v)),
    same_subject_limit: (v) => v === undefined || (Number.isInteger(v) && (v as number) >= 1),
  };
  const wrong = Object.keys(checks).find((k) => !checks[k](value[k]));
  if (wrong)
    throw new Error(
      `plan line field "${wrong}" of a text's row is missing or wrong (phone E.164, body text, segments ≥ 1, until an ISO instant in UTC, same_subject_limit a whole number)`,
    );
}

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/;

/** The S3 key of one launch's plan. */
export function planKey(campaignId: string, launchId: string): string {
  return `${PLANS_PREFIX}${campaignId}/${launchId}.jsonl`;
}
