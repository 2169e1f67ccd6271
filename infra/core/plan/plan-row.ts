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
 */
import { PLANS_PREFIX } from "./naming";
import { scheduler, ses, stepFunctions } from "./quotas";
import { UNSUBSCRIBE_TEMPLATE_KEY, unsubscribeHeaders } from "../consent/unsubscribe";

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
}

/** One recipient of a bulk schedule: SendBulkEmail's BulkEmailEntry is made from it. */
export interface BulkEntry {
  recipient_id: string;
  email: string;
  /**
   * The entry's ReplacementTemplateData, every value a string, `unsubscribe_url` among them: the entry's
   * ReplacementHeaders (the one-click unsubscribe pair) are made from it where the schedule's Input is built.
   */
  template_data: Record<string, string>;
}

/**
 * One line of a bulk plan (`--bulk`): one schedule for up to 50 recipients of one step who share its UTC instant,
 * template and variant, sent with SendBulkEmail by the sender state machine. One-time only (an `at()` expression).
 */
export interface BulkPlanRow {
  schedule_name: string;
  send_at: string;
  timezone: string;
  utc: string;
  schedule_expression: string;
  step: number;
  template: string;
  variant: string | null;
  entries: BulkEntry[];
}

/** The fields of a bulk plan line, in the order they are written; an entry's are BULK_ENTRY_FIELDS. */
export const BULK_ROW_FIELDS = [
  "schedule_name",
  "send_at",
  "timezone",
  "utc",
  "schedule_expression",
  "step",
  "template",
  "variant",
  "entries",
] as const satisfies readonly (keyof BulkPlanRow)[];

export const BULK_ENTRY_FIELDS = [
  "recipient_id",
  "email",
  "template_data",
] as const satisfies readonly (keyof BulkEntry)[];

/** Entries of one bulk schedule: SendBulkEmail's destinations per call. */
export const MAX_BULK_ENTRIES = ses.maxBulkEntries;

/**
 * Bytes of a bulk schedule's Input kept for what is not its entries: FromEmailAddress, ConfigurationSetName,
 * DefaultContent, DefaultEmailTags and the sender's own fields (each at most a few hundred bytes).
 */
export const BULK_INPUT_RESERVED_BYTES = 8_192;

/** Bytes the entries of one bulk schedule may take in its Input (SendBulkEmail's BulkEmailEntries, with their commas). */
export const MAX_BULK_ENTRIES_INPUT_BYTES = scheduler.maxTargetInputBytes - BULK_INPUT_RESERVED_BYTES;

/** SendBulkEmail's BulkEmailEntry for a plan entry: what the sender sends, and what the Input holds for it. */
export function bulkEmailEntry(e: BulkEntry) {
  return {
    Destination: { ToAddresses: [e.email] },
    ReplacementEmailContent: { ReplacementTemplate: { ReplacementTemplateData: JSON.stringify(e.template_data) } },
    ReplacementHeaders: unsubscribeHeaders(e.template_data[UNSUBSCRIBE_TEMPLATE_KEY]),
  };
}

/** Bytes of a BulkEmailEntry's JSON but its email (`""`), its ReplacementTemplateData (`"{}"`) and its headers (`[]`). */
const ENTRY_REQUEST_FIXED_BYTES =
  Buffer.byteLength(
    JSON.stringify({ ...bulkEmailEntry({ recipient_id: "", email: "", template_data: {} }), ReplacementHeaders: [] }),
  ) -
  '""'.length -
  '"{}"'.length -
  "[]".length;

/** UTF-8 bytes of JSON text, and how many of its characters a second JSON.stringify escapes (`"` and `\`). */
export function jsonTextBytes(text: string): { bytes: number; escapes: number } {
  let bytes = 0;
  let escapes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      bytes++;
      if (c === 34 || c === 92) escapes++;
    } else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return { bytes, escapes };
}

/**
 * Bytes of bulkEmailEntry(entry) as JSON, from the entry's parts already serialized (JSON.stringify of the email, the
 * template data object and the headers the Input adds, unsubscribeHeaders of its link): the Input of a bulk schedule
 * is these, comma-separated, plus its reserve.
 */
export function bulkEntryInputBytes(emailJson: string, templateDataJson: string, headersJson: string): number {
  return bulkEntrySizes(
    0,
    Buffer.byteLength(emailJson),
    jsonTextBytes(templateDataJson),
    Buffer.byteLength(headersJson),
  ).inputBytes;
}

/** What closes a bulk entry's JSON after its template data. */
export const BULK_ENTRY_END = "}";

const ENTRY_JSON_FIXED_BYTES = bulkEntryStart("", "").length + BULK_ENTRY_END.length;

/**
 * An entry's bytes in its plan line (bulkEntryJson) and in the schedule's Input (bulkEmailEntry), from the byte lengths
 * of its serialized parts and, for the template data, jsonTextBytes. The headers are in the Input only: the line
 * holds the link once, in its template data.
 */
export function bulkEntrySizes(
  recipientIdJsonBytes: number,
  emailJsonBytes: number,
  templateData: { bytes: number; escapes: number },
  headersJsonBytes: number,
): { lineBytes: number; inputBytes: number } {
  return {
    lineBytes: ENTRY_JSON_FIXED_BYTES + recipientIdJsonBytes + emailJsonBytes + templateData.bytes,
    // ReplacementTemplateData is the data's JSON text as a JSON string: two quotes, one backslash per `"` and `\`.
    inputBytes:
      ENTRY_REQUEST_FIXED_BYTES + emailJsonBytes + templateData.bytes + templateData.escapes + 2 + headersJsonBytes,
  };
}

/** One bulk entry as plan JSON, from its parts already serialized (JSON.stringify of each field's value). */
export function bulkEntryJson(recipientIdJson: string, emailJson: string, templateDataJson: string): string {
  return bulkEntryStart(recipientIdJson, emailJson) + templateDataJson + BULK_ENTRY_END;
}

/** A bulk entry's JSON before its template data; the entry is this, the data's JSON, then BULK_ENTRY_END. */
export function bulkEntryStart(recipientIdJson: string, emailJson: string): string {
  return `{"recipient_id":${recipientIdJson},"email":${emailJson},"template_data":`;
}

/**
 * A bulk plan line's text before its entries, from its fields already serialized as JSON; the line is this, the
 * entries' JSON joined by commas, then BULK_LINE_END.
 */
export function bulkLineStart(j: { [K in Exclude<(typeof BULK_ROW_FIELDS)[number], "entries">]: string }): string {
  return `{"schedule_name":${j.schedule_name},"send_at":${j.send_at},"timezone":${j.timezone},"utc":${j.utc},"schedule_expression":${j.schedule_expression},"step":${j.step},"template":${j.template},"variant":${j.variant},"entries":[`;
}

export const BULK_LINE_END = "]}\n";

/** One bulk plan line (with its newline). */
export function formatBulkPlanRow(row: BulkPlanRow): string {
  const j = {} as Parameters<typeof bulkLineStart>[0];
  for (const k of BULK_ROW_FIELDS) if (k !== "entries") j[k] = JSON.stringify(row[k]);
  const entries = row.entries.map((e) =>
    bulkEntryJson(JSON.stringify(e.recipient_id), JSON.stringify(e.email), JSON.stringify(e.template_data)),
  );
  return bulkLineStart(j) + entries.join(",") + BULK_LINE_END;
}

/** Whether a plan line is a bulk line (it has `entries`), from the parsed object. */
export function isBulkPlanValue(value: unknown): boolean {
  return value !== null && typeof value === "object" && "entries" in (value as object);
}

const isStringRecord = (v: unknown) =>
  v !== null &&
  typeof v === "object" &&
  !Array.isArray(v) &&
  Object.values(v as object).every((x) => typeof x === "string");

/** A bulk plan line back into its row; throws with what is wrong (field, entry index, limit). */
export function parseBulkPlanRow(line: string): BulkPlanRow {
  const value = JSON.parse(line) as Record<string, unknown>;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new Error("a plan line must be a JSON object");
  for (const k of BULK_ROW_FIELDS) {
    const v = value[k];
    const ok =
      k === "step"
        ? Number.isInteger(v)
        : k === "variant"
          ? v === null || typeof v === "string"
          : k === "entries"
            ? Array.isArray(v)
            : typeof v === "string";
    if (!ok) throw new Error(`bulk plan line field "${k}" is missing or of the wrong type`);
  }
  const sendAt = value.send_at as string;
  if (parseSendAt(sendAt) === undefined)
    throw new Error(`bulk plan line send_at "${sendAt}" is not YYYY-MM-DDTHH:MM:SS`);
  if (value.schedule_expression !== atExpression(sendAt))
    throw new Error(`bulk plan line schedule_expression must be at(<send_at>): bulk schedules are one-time only`);
  const entries = value.entries as unknown[];
  if (entries.length < 1 || entries.length > MAX_BULK_ENTRIES)
    throw new Error(
      `bulk plan line has ${entries.length} entries: 1 to ${MAX_BULK_ENTRIES} (SendBulkEmail's destinations)`,
    );
  let inputBytes = 0;
  entries.forEach((e, i) => {
    const entry = e as Record<string, unknown>;
    const ok =
      entry !== null &&
      typeof entry === "object" &&
      typeof entry.recipient_id === "string" &&
      typeof entry.email === "string" &&
      isStringRecord(entry.template_data) &&
      typeof (entry.template_data as Record<string, unknown>)[UNSUBSCRIBE_TEMPLATE_KEY] === "string";
    if (!ok)
      throw new Error(
        `bulk plan line entry ${i}: needs recipient_id, email and template_data (strings), ${UNSUBSCRIBE_TEMPLATE_KEY} among its data`,
      );
    const link = (entry.template_data as Record<string, string>)[UNSUBSCRIBE_TEMPLATE_KEY];
    inputBytes +=
      (i ? 1 : 0) +
      bulkEntryInputBytes(
        JSON.stringify(entry.email),
        JSON.stringify(entry.template_data),
        JSON.stringify(unsubscribeHeaders(link)),
      );
  });
  if (inputBytes > MAX_BULK_ENTRIES_INPUT_BYTES)
    throw new Error(
      `bulk plan line entries take ${inputBytes} bytes of the schedule's Input: at most ${MAX_BULK_ENTRIES_INPUT_BYTES}`,
    );
  return value as unknown as BulkPlanRow;
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

/** A plan line back into its row; throws with what is wrong. */
export function parsePlanRow(line: string): PlanRow {
  const value = JSON.parse(line) as Record<string, unknown>;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new Error("a plan line must be a JSON object");
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
  return value as unknown as PlanRow;
}

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/;

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

/** Day names as cron writes them, indexed like Date#getUTCDay (0 = Sunday; cron's 1–7 are SUN–SAT). */
export const CRON_DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] as const;

/** How a recurring schedule repeats. Weekdays are 0 = Sunday … 6 = Saturday; a monthly day is 1–31. */
export type Recurrence =
  { kind: "daily" } | { kind: "weekdays" } | { kind: "weekly"; days: number[] } | { kind: "monthly"; day: number };

/** A recurring schedule: the days it repeats on, at a local hour and minute in its zone. */
export interface RecurringTime {
  recurrence: Recurrence;
  hour: number;
  minute: number;
}

/** Weekly days in the order a reader expects, Monday first. */
/** A set of days (0 = Sunday) in the week's order Monday first, each once: how cron and summaries list them. */
export const daysMondayFirst = (days: readonly number[]) =>
  [...new Set(days)].sort((a, b) => ((a + 6) % 7) - ((b + 6) % 7));

/**
 * The Scheduler expression of a recurring schedule, one of four shapes (fields: minute hour day-of-month month
 * day-of-week year): `cron(M H * * ? *)` daily, `cron(M H ? * MON-FRI *)` weekdays, `cron(M H ? * MON,THU *)`
 * weekly, `cron(M H D * ? *)` monthly (a month without day D has no send: cron's rule).
 */
export function cronExpression(t: RecurringTime): string {
  const r = t.recurrence;
  const fields =
    r.kind === "daily"
      ? "* * ? *"
      : r.kind === "weekdays"
        ? "? * MON-FRI *"
        : r.kind === "weekly"
          ? `? * ${daysMondayFirst(r.days)
              .map((d) => CRON_DAY_NAMES[d])
              .join(",")} *`
          : `${r.day} * ? *`;
  return `cron(${t.minute} ${t.hour} ${fields})`;
}

const CRON = /^cron\((\d{1,2}) (\d{1,2}) (\S+) \* (\S+) \*\)$/;

/** The recurring time of a cron expression of cronExpression's four shapes, or undefined (anything else). */
export function parseCronExpression(expression: string | undefined): RecurringTime | undefined {
  const m = CRON.exec(expression ?? "");
  if (!m) return undefined;
  const [minute, hour] = [Number(m[1]), Number(m[2])];
  if (minute > 59 || hour > 23) return undefined;
  const [dayOfMonth, dayOfWeek] = [m[3], m[4]];
  let recurrence: Recurrence | undefined;
  if (dayOfMonth === "*" && dayOfWeek === "?") recurrence = { kind: "daily" };
  else if (dayOfMonth === "?" && dayOfWeek === "MON-FRI") recurrence = { kind: "weekdays" };
  else if (dayOfMonth === "?") {
    const days = dayOfWeek.split(",").map((n) => (CRON_DAY_NAMES as readonly string[]).indexOf(n));
    if (days.length && days.every((d) => d >= 0) && new Set(days).size === days.length)
      recurrence = { kind: "weekly", days };
  } else if (dayOfWeek === "?" && /^\d{1,2}$/.test(dayOfMonth) && Number(dayOfMonth) >= 1 && Number(dayOfMonth) <= 31)
    recurrence = { kind: "monthly", day: Number(dayOfMonth) };
  return recurrence && { recurrence, hour, minute };
}

/** The S3 key of one launch's plan. */
export function planKey(campaignId: string, launchId: string): string {
  return `${PLANS_PREFIX}${campaignId}/${launchId}.jsonl`;
}
