/**
 * The bulk plan line of channel sms (`launch-campaign --bulk` with a text step, docs/sms.md "Texts in bulk"): one
 * schedule for up to SMS_MAX_ENTRIES texts of one step that share its UTC instant and variant, beside the email bulk
 * line (bulk-plan-row.ts, unchanged): the same fields, then `channel: "sms"`, and entries that carry a text's plan
 * fields (sms-input.ts SmsPlanFields) in place of an address and template data. Written and read back here. Pure.
 */
import { SMS_MAX_ENTRIES } from "../send/sender-contract";
import { SmsPlanFields } from "../send/sms-input";
import { BULK_ROW_FIELDS, BulkPlanRow, parseBulkPlanRow } from "./bulk-plan-row";
import { parseLineFields, STEP_AND_VARIANT } from "./plan-row";
import { atExpression, parseSendAt } from "./schedule-expression";

/** One text of a bulk line of channel sms: what the fan-out makes the sender's SMS entry from. */
export interface SmsBulkEntry extends Omit<SmsPlanFields, "channel"> {
  recipient_id: string;
}

/** A bulk line of channel sms: the email bulk line's fields, `channel`, and text entries. */
export interface SmsBulkPlanRow extends Omit<BulkPlanRow, "entries"> {
  channel: "sms";
  entries: SmsBulkEntry[];
}

/** The line's fields in the order they are written: the email bulk line's, `channel` before `entries`. */
export const SMS_BULK_ROW_FIELDS = [
  ...BULK_ROW_FIELDS.filter((k) => k !== "entries"),
  "channel",
  "entries",
] as const satisfies readonly (keyof SmsBulkPlanRow)[];

/** Whether a parsed bulk line (isBulkPlanValue) is one of texts. */
export function isSmsBulkPlanValue(value: unknown): boolean {
  return value !== null && typeof value === "object" && (value as { channel?: unknown }).channel === "sms";
}

/** Whether a bulk row (read back) is one of texts. */
export function isSmsBulkPlanRow(row: BulkPlanRow | SmsBulkPlanRow): row is SmsBulkPlanRow {
  return (row as SmsBulkPlanRow).channel === "sms";
}

/** One text's entry as plan JSON, fields in a fixed order (same_subject_limit only when set). */
function entryJson(e: SmsBulkEntry): string {
  const limit = e.same_subject_limit === undefined ? "" : `,"same_subject_limit":${e.same_subject_limit}`;
  return `{"recipient_id":${JSON.stringify(e.recipient_id)},"phone":${JSON.stringify(e.phone)},"body":${JSON.stringify(e.body)},"segments":${e.segments},"until":${JSON.stringify(e.until)}${limit}}`;
}

/** One bulk line of texts (with its newline). */
export function formatSmsBulkPlanRow(row: SmsBulkPlanRow): string {
  const head = SMS_BULK_ROW_FIELDS.filter((k) => k !== "entries")
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(row[k])}`)
    .join(",");
  return `{${head},"entries":[${row.entries.map(entryJson).join(",")}]}\n`;
}

const isIso = (v: unknown) => typeof v === "string" && !Number.isNaN(Date.parse(v)) && v.endsWith("Z");

/** Why entry `e` is not a text's, or undefined. */
function entryProblem(e: unknown): string | undefined {
  const x = e as Record<string, unknown>;
  if (x === null || typeof x !== "object" || Array.isArray(x)) return "not an object";
  if (typeof x.recipient_id !== "string" || x.recipient_id === "") return "recipient_id must be a non-empty string";
  if (typeof x.phone !== "string" || !/^\+[1-9]\d{6,14}$/.test(x.phone)) return "phone must be E.164 (+15551230000)";
  if (typeof x.body !== "string" || x.body === "") return "body must be a non-empty string";
  if (!Number.isInteger(x.segments) || (x.segments as number) < 1) return "segments must be a whole number ≥ 1";
  if (!isIso(x.until)) return "until must be an ISO 8601 UTC instant";
  if (
    x.same_subject_limit !== undefined &&
    !(Number.isInteger(x.same_subject_limit) && Number(x.same_subject_limit) >= 1)
  )
    return "same_subject_limit, when given, must be a whole number ≥ 1";
  return undefined;
}

/** A bulk line of texts back into its row; throws with what is wrong (field, entry index, limit). */
export function parseSmsBulkPlanRow(line: string): SmsBulkPlanRow {
  const value = parseLineFields(
    line,
    SMS_BULK_ROW_FIELDS,
    { ...STEP_AND_VARIANT, channel: (v) => v === "sms", entries: (v) => Array.isArray(v) },
    "bulk plan line of texts",
  );
  const sendAt = value.send_at as string;
  if (parseSendAt(sendAt) === undefined)
    throw new Error(`bulk plan line of texts send_at "${sendAt}" is not YYYY-MM-DDTHH:MM:SS`);
  if (value.schedule_expression !== atExpression(sendAt))
    throw new Error(
      `bulk plan line of texts schedule_expression must be at(<send_at>): bulk schedules are one-time only`,
    );
  const entries = value.entries as unknown[];
  if (entries.length < 1 || entries.length > SMS_MAX_ENTRIES)
    throw new Error(
      `bulk plan line of texts has ${entries.length} entries: 1 to ${SMS_MAX_ENTRIES} (the sender's texts per execution)`,
    );
  entries.forEach((e, i) => {
    const problem = entryProblem(e);
    if (problem) throw new Error(`bulk plan line of texts entry ${i}: ${problem}`);
  });
  return value as unknown as SmsBulkPlanRow;
}

/** A bulk line back into its row, of emails or of texts by its channel (`value`: the line already parsed). */
export function parseAnyBulkPlanRow(line: string, value: unknown): BulkPlanRow | SmsBulkPlanRow {
  return isSmsBulkPlanValue(value) ? parseSmsBulkPlanRow(line) : parseBulkPlanRow(line);
}
