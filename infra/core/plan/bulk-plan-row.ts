/**
 * The bulk plan format (`--bulk`): one line is one schedule for up to 50 recipients, sent with SendBulkEmail by the one
 * sender; its entries, how many bytes each takes in the line and in the schedule's Input, and the line written and
 * read back. Pure: no I/O.
 */
import { scheduler, ses } from "./quotas";
import { atExpression, parseSendAt } from "./schedule-expression";
import { parseLineFields, STEP_AND_VARIANT } from "./plan-row";
import { UNSUBSCRIBE_TEMPLATE_KEY, unsubscribeHeaders } from "../consent/unsubscribe";

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
  const value = parseLineFields(
    line,
    BULK_ROW_FIELDS,
    { ...STEP_AND_VARIANT, entries: (v) => Array.isArray(v) },
    "bulk plan line",
  );
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
