/**
 * Step 1 of planning, shared by the launcher and size-window: is this CSV record a recipient we may send to?
 * Each record becomes a RecipientRow or a Reject (reason + one line of text for rejects.csv). Same code, same counts
 * in both tools.
 */
import { LATITUDE_COLUMN, LONGITUDE_COLUMN } from "../../../infra/core/zones/coordinates";
import { PHONE_COLUMN } from "../../../infra/core/zones/phone";
import { POSTAL_CODE_COLUMN } from "../../../infra/core/zones/postal";
import { MAX_PLAN_ROW_BYTES, planLineFromJson } from "../../../infra/core/plan/plan-row";
import { scheduler, ses } from "../../../infra/core/plan/quotas";
import { InputError } from "../../../infra/core/errors";
import { CsvRecord } from "./recipients";
import { CompactSeenKeys } from "./seen-keys";
import { RowTiming, SEND_AT_COLUMN, SEND_HOUR_COLUMN, SEND_MINUTE_COLUMN } from "../../../infra/core/timing/send-rules";
import { isEmailAddress } from "../../../infra/core/send/email";
import { STEP_VARIABLE } from "../../../infra/core/plan/templates";

/** Reserved columns: the rest of the CSV becomes template data. */
export const ID_COLUMN = "id";
export const EMAIL_COLUMN = "email";
export const TIMEZONE_COLUMN = "timezone";
/**
 * ISO 3166-1 alpha-2: the zone of a row without a usable timezone when the country has one (zone-names.ts). Read as
 * written, and kept as personalization too: lists already use a `country` column in their templates.
 */
export const COUNTRY_COLUMN = "country";
/** Added to every step's template data by the planner, so a CSV column may not use it. */
export const STEP_KEY = STEP_VARIABLE;

/** SES takes at most 254 characters in an address. */
const MAX_EMAIL_LENGTH = 254;

export type RejectReason =
  | "wrong-field-count"
  | "missing-id"
  | "duplicate-id"
  | "invalid-email"
  | "duplicate-email"
  | "unknown-zone"
  /** The timezone value names several zones (`CST`) and no --zone-alias chooses (zone-abbreviations.ts). */
  | "ambiguous-zone"
  /** No usable timezone, and latitude/longitude that are not decimal degrees in range, or one without the other. */
  | "invalid-coordinates"
  /** No usable timezone, and a postal code not in its country's form (infra/core/zones/postal.ts). */
  | "invalid-postal-code"
  /** No usable timezone, and a phone number libphonenumber does not take as valid (infra/core/zones/phone.ts). */
  | "invalid-phone"
  | "too-large"
  | "send-time-passed"
  | "invalid-send-time"
  | "invalid-date"
  | "quiet-hours"
  | "missing-template-data"
  /** --bulk launches: the address is opted out in the stack's SES contact list (plan.ts, ContactListCheck). */
  | "opted-out";

export interface Reject {
  line: number;
  id: string;
  reason: RejectReason;
  /** One line for rejects.csv: what is wrong with the row. */
  text: string;
}

/** A row that passed the checks: the fields the planner uses. */
export interface RecipientRow {
  line: number;
  id: string;
  email: string;
  /** The timezone column as written (undefined when the file has none). */
  rawZone: string | undefined;
  /** The country column as written (undefined when the file has none). */
  country: string | undefined;
  /** The latitude and longitude columns as written (undefined when the file has none). */
  latitude: string | undefined;
  longitude: string | undefined;
  /** The postal_code and phone columns as written (undefined when the file has none). */
  postalCode: string | undefined;
  phone: string | undefined;
  /** The send-time control columns' values (send_at, send_hour, send_minute) and the --after column's. */
  timing: RowTiming;
  fields: string[];
  /** What was changed or deserves a look (a trimmed address, an id like another but for case), for the notes file. */
  notes?: string[];
  /** The earlier line whose id differs from this one only in case or surrounding spaces. */
  sameIdButCase?: number;
}

/** Where the reserved columns are; every other column is personalization. */
export interface Columns {
  header: string[];
  id: number;
  email: number;
  timezone?: number;
  country?: number;
  latitude?: number;
  longitude?: number;
  postalCode?: number;
  phone?: number;
  timing: TimingColumns;
  /** Indices of the personalization columns: not id, email, timezone or a send-time control column. */
  data: number[];
}

/** Where the send-time control columns are, and the column `--after` reads (it stays personalization). */
export interface TimingColumns {
  sendAt?: number;
  sendHour?: number;
  sendMinute?: number;
  after?: number;
}

/** The timing columns of a header; the `--after` column must be there. */
export function timingColumns(file: string, header: string[], afterColumn?: string): TimingColumns {
  const index = (name: string) => (header.includes(name) ? header.indexOf(name) : undefined);
  const after = afterColumn === undefined ? undefined : index(afterColumn);
  if (afterColumn !== undefined && after === undefined)
    throw new InputError(
      `${file}:1: --after ${afterColumn}: the header has no column "${afterColumn}" (found: ${header.join(", ")})`,
    );
  return {
    sendAt: index(SEND_AT_COLUMN),
    sendHour: index(SEND_HOUR_COLUMN),
    sendMinute: index(SEND_MINUTE_COLUMN),
    after,
  };
}

const NO_TIMING_COLUMNS: RowTiming = Object.freeze({});

/** A row's timing values (undefined for an absent column). */
export function rowTiming(fields: string[], c: TimingColumns): RowTiming {
  if (c.sendAt === undefined && c.sendHour === undefined && c.sendMinute === undefined && c.after === undefined)
    return NO_TIMING_COLUMNS;
  return {
    sendAt: c.sendAt === undefined ? undefined : fields[c.sendAt],
    sendHour: c.sendHour === undefined ? undefined : fields[c.sendHour],
    sendMinute: c.sendMinute === undefined ? undefined : fields[c.sendMinute],
    after: c.after === undefined ? undefined : fields[c.after],
  };
}

/**
 * Stops at a header name that cannot be read as written, before any row is: a column that looks like one of `controls`
 * when that control column itself is absent — in another case ("Timezone"), spelt otherwise ("time_zone", "tz",
 * "Time-Zone") or with an invisible character ("time\u200Bzone") — since it would be personalization, its values unread
 * (everyone at the campaign's hour in UTC, without a note); and any name holding an invisible character (a no-break
 * space, a byte order mark, a zero-width space: a template cannot name it). Each message shows the name with its
 * invisible characters as code points and says what to rename.
 */
export function refuseMisspeltControlColumns(file: string, header: string[], controls: string[]): void {
  for (const name of header) {
    if (controls.includes(name)) continue;
    const key = headerKey(name);
    const control = controls.find((c) => (LOOK_ALIKES[c] ?? [headerKey(c)]).includes(key));
    if (control === undefined || header.includes(control)) continue;
    if (name.toLowerCase() === control)
      throw new InputError(
        `${file}:1: column "${name}" is not "${control}": control columns are read only as written (${controls.join(", ")}); rename it`,
      );
    const holds = [invisibleIn(name), homoglyphsIn(name)].filter(Boolean).join(", ");
    throw new InputError(
      `${file}:1: column "${shown(name)}"${holds ? ` (it holds ${holds})` : ""} looks like the control column "${control}" but is not it: control columns are read only as written (${controls.join(", ")}); rename it "${control}", or, if it is personalization, give it a name that does not look like one`,
    );
  }
  for (const name of header) {
    const holds = invisibleIn(name);
    if (holds)
      throw new InputError(`${file}:1: column "${shown(name)}" holds ${holds}: a template cannot name it; remove it`);
  }
}

/** Names people give the control columns, as headerKey gives them. */
const LOOK_ALIKES: Record<string, string[]> = {
  [ID_COLUMN]: ["id"],
  [EMAIL_COLUMN]: ["email", "emailaddress"],
  [TIMEZONE_COLUMN]: [
    "timezone",
    "tz",
    "zone",
    "tzid",
    "tzname",
    "timezoneid",
    "timezonename",
    "ianatimezone",
    "ianazone",
  ],
  [SEND_AT_COLUMN]: ["sendat", "sendtime", "senddatetime"],
  [SEND_HOUR_COLUMN]: ["sendhour"],
  [SEND_MINUTE_COLUMN]: ["sendminute", "sendmin"],
};

/**
 * A header name without case, separators (space _ - .), compatibility forms (NFKC: fullwidth and mathematical letters)
 * or invisible characters, and with letters of other scripts that look like Latin ones read as those:
 * "Time-Zone" → "timezone", "tіmezone" (Cyrillic і) → "timezone".
 */
function headerKey(name: string): string {
  return [...name.normalize("NFKC")]
    .map((c) => HOMOGLYPHS[c] ?? c)
    .join("")
    .toLowerCase()
    .replace(/[\p{Cf}\p{Cc}\p{Z}_.-]/gu, "");
}

/**
 * Letters that look like Latin a–z in common fonts (after NFKC, which already maps fullwidth and mathematical forms),
 * from Unicode's confusables for Cyrillic, Greek, Armenian and Latin extensions; upper and lower case apart, since
 * they look like different Latin letters (Greek Ν is "N", ν is "v").
 */
const HOMOGLYPHS: Record<string, string> = Object.fromEntries(
  [
    // Cyrillic capitals and small letters
    "АA ВB СC ԀD ЕE НH ІI ЈJ КK ӀI МM ОO РP ԚQ ЅS ТT ХX УY ҮY ԜW",
    "аa вb сc ԁd еe һh іi јj кk ӏl мm нh оo рp ԛq ѕs тt хx уy үy ԝw",
    // Greek
    "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ͿJ",
    "αa βb γy εe ιi κk νv οo ρp τt υu χx ϳj",
    // Armenian
    "օo սu հh ոn",
    // Latin look-alikes outside a–z
    "ıi ȷj ɑa ɡg ɩi ᴀa ᴄc ᴅd ᴇe ᴊj ᴋk ᴍm ᴏo ᴘp ᴛt ᴜu ᴠv ᴡw ᴢz ʜh ɪi ʟl ɴn ʀr ʏy",
  ]
    .join(" ")
    .split(" ")
    .map((pair) => [pair.slice(0, -1), pair.slice(-1)]),
);

/** The letters of a name that look like Latin ones, in words ('U+0456 (looks like "i")'), or "" when there is none. */
function homoglyphsIn(name: string): string {
  const found = [...new Set([...name.normalize("NFKC")].filter((c) => HOMOGLYPHS[c] !== undefined))];
  return found.map((c) => `${codePoint(c)} (looks like "${HOMOGLYPHS[c]}")`).join(", ");
}

/**
 * Characters that do not show, or show as a plain space: format and control characters and every space but U+0020.
 * Zero-width (non-)joiners inside a name are spelling in some scripts (Persian), so only the look-alike check sets them aside.
 */
const INVISIBLE = /(?![ \u200C\u200D])[\p{Cf}\p{Cc}\p{Z}]/gu;
const SHOWN = /(?! )[\p{Cf}\p{Cc}\p{Z}]/gu;
const CHARACTER_NAMES: Record<number, string> = {
  0x09: "TAB",
  0xa0: "NO-BREAK SPACE",
  0xad: "SOFT HYPHEN",
  0x200b: "ZERO WIDTH SPACE",
  0x200c: "ZERO WIDTH NON-JOINER",
  0x200d: "ZERO WIDTH JOINER",
  0x2060: "WORD JOINER",
  0x202f: "NARROW NO-BREAK SPACE",
  0x3000: "IDEOGRAPHIC SPACE",
  0xfeff: "BYTE ORDER MARK",
};
const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** The name with every character that does not show as `<U+XXXX>`. */
function shown(name: string): string {
  return name.replace(SHOWN, (c) => `<${codePoint(c)}>`);
}

/** The invisible characters in a name, in words ("U+00A0 NO-BREAK SPACE"), or "" when there is none. */
function invisibleIn(name: string): string {
  const found = [...new Set(name.match(INVISIBLE) ?? [])];
  return found
    .map((c) => `${codePoint(c)}${CHARACTER_NAMES[c.codePointAt(0)!] ? ` ${CHARACTER_NAMES[c.codePointAt(0)!]}` : ""}`)
    .join(", ");
}

/** The header must name id and email once each; `step` is reserved for the step number. */
export function recipientColumns(file: string, header: string[], afterColumn?: string): Columns {
  refuseMisspeltControlColumns(file, header, [
    ID_COLUMN,
    EMAIL_COLUMN,
    TIMEZONE_COLUMN,
    SEND_AT_COLUMN,
    SEND_HOUR_COLUMN,
    SEND_MINUTE_COLUMN,
  ]);
  const index = (name: string) => (header.includes(name) ? header.indexOf(name) : undefined);
  const missing = [ID_COLUMN, EMAIL_COLUMN].filter((c) => index(c) === undefined);
  if (missing.length)
    throw new InputError(
      `${file}:1: the header needs columns ${missing.map((m) => `"${m}"`).join(" and ")} (found: ${header.join(", ")})`,
    );
  const dup = header.find((h, i) => header.indexOf(h) !== i);
  if (dup !== undefined) throw new InputError(`${file}:1: column "${dup}" appears twice in the header`);
  if (index(STEP_KEY) !== undefined)
    throw new InputError(
      `${file}:1: column "${STEP_KEY}" is reserved: sendtime adds the step number to the template data; rename it`,
    );
  const id = index(ID_COLUMN)!;
  const email = index(EMAIL_COLUMN)!;
  const timezone = index(TIMEZONE_COLUMN);
  const timing = timingColumns(file, header, afterColumn);
  const control = [id, email, timezone, timing.sendAt, timing.sendHour, timing.sendMinute];
  const data = header.map((_, i) => i).filter((i) => !control.includes(i));
  // latitude/longitude (decimal degrees, infra/core/zones/coordinates.ts) give the zone of a row without a usable timezone,
  // before its country. All three stay personalization too: lists already show a place in their templates, and a
  // column's role should not change with what its neighbour holds (a latitude whose longitude is blank).
  const [country, latitude, longitude, postalCode, phone] = [
    COUNTRY_COLUMN,
    LATITUDE_COLUMN,
    LONGITUDE_COLUMN,
    POSTAL_CODE_COLUMN,
    PHONE_COLUMN,
  ].map(index);
  return { header, id, email, timezone, country, latitude, longitude, postalCode, phone, timing, data };
}

/**
 * The form of an address two rows must not share: trimmed, all lower case. The domain is case-insensitive by
 * definition; the local part may be case-sensitive by RFC 5321, but mail servers treat it case-insensitively in
 * practice, and a second email cannot be taken back. Dots and `+tags` are kept: their meaning is the provider's.
 */
export function normalizedEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The form of an id two rows may share only with a note: trimmed, lower-cased (schedule names treat case as distinct). */
export function foldedId(id: string): string {
  return id.trim().toLowerCase();
}

export interface CheckOptions {
  /** Plan rows that share an address (a list that means it); by default the later ones are rejected. */
  allowDuplicateEmails?: boolean;
  /** Note rows whose id differs from an earlier planned row's only in case or surrounding spaces. */
  noticeIdsDifferingInCase?: boolean;
  /** Rows to expect (a line count): the sets of ids and addresses are sized for it. */
  expectedRows?: number;
  /** How many steps each row gets (the step number is in each line's template data). */
  steps: number;
}

export function isReject(r: RecipientRow | Reject): r is Reject {
  return "reason" in r;
}

/**
 * Checks each record in file order: field count, id present and not seen before, a valid address. The ids and
 * addresses seen so far are kept exact and compact (seen-keys.ts: a Map stops at 2^24 entries); one set serves the
 * ids and their case-folded forms. close() removes the sets' files.
 */
export class RecipientChecker {
  /** Every id seen (a later row with the same id is a duplicate); marked when its row passed the checks. */
  private readonly ids: CompactSeenKeys;
  /** Undefined when duplicate addresses are allowed. */
  private readonly emails?: CompactSeenKeys;
  private readonly noticeCase: boolean;
  private readonly lineBound: PlanLineBound;

  constructor(
    private readonly columns: Columns,
    o: CheckOptions,
  ) {
    this.noticeCase = o.noticeIdsDifferingInCase ?? false;
    this.ids = new CompactSeenKeys({ fold: this.noticeCase ? foldedId : undefined, initialCapacity: o.expectedRows });
    if (!o.allowDuplicateEmails) this.emails = new CompactSeenKeys({ initialCapacity: o.expectedRows });
    this.lineBound = new PlanLineBound(columns, o.steps);
  }

  /** The row, or why it is rejected (a Reject has a `reason`). */
  check(rec: CsvRecord): RecipientRow | Reject {
    const f = rec.fields;
    const c = this.columns;
    const id = f[c.id] ?? "";
    if (f.length !== c.header.length)
      return reject(rec, id, "wrong-field-count", `${f.length} fields where the header has ${c.header.length}`);
    if (id.trim() === "") return reject(rec, id, "missing-id", "missing id");
    const first = this.ids.firstLine(id);
    if (first !== undefined)
      return reject(rec, id, "duplicate-id", `duplicate id (first on line ${first}); a recipient is sent once`);
    const row = this.checkAddressAndSize(rec, id);
    if (isReject(row)) {
      // Seen, so that a later row with this id is a duplicate; not marked: no note refers to a rejected row.
      this.ids.add(id, rec.line, false);
      return row;
    }
    if (this.noticeCase) {
      const firstFolded = this.ids.firstMarkedLineOfFold(id);
      if (firstFolded !== undefined) {
        row.sameIdButCase = firstFolded;
        (row.notes ??= []).push(
          `id differs from line ${firstFolded}'s only in case or surrounding spaces: a separate recipient (schedule names assume case matters)`,
        );
      }
    }
    this.ids.add(id, rec.line, true);
    return row;
  }

  /** Removes the sets' files. */
  close(): void {
    this.ids.close();
    this.emails?.close();
  }

  private checkAddressAndSize(rec: CsvRecord, id: string): RecipientRow | Reject {
    const f = rec.fields;
    const c = this.columns;
    const email = f[c.email].trim();
    if (!isEmailAddress(email) || email.length > MAX_EMAIL_LENGTH)
      return reject(rec, id, "invalid-email", `invalid email address "${f[c.email]}"`);
    if (this.emails) {
      const key = normalizedEmail(email);
      const firstEmail = this.emails.firstLine(key);
      if (firstEmail !== undefined)
        return reject(
          rec,
          id,
          "duplicate-email",
          `duplicate email address (first on line ${firstEmail}); a person is sent once`,
        );
      this.emails.add(key, rec.line);
    }
    if (this.lineBound.tooLarge(id, email, f))
      return reject(
        rec,
        id,
        "too-large",
        `personalization too large: a plan row must fit a ${MAX_PLAN_ROW_BYTES}-byte batch and TemplateData ${ses.maxTemplateDataChars} characters`,
      );
    const rawZone = c.timezone === undefined ? undefined : f[c.timezone];
    const country = c.country === undefined ? undefined : f[c.country];
    const latitude = c.latitude === undefined ? undefined : f[c.latitude];
    const longitude = c.longitude === undefined ? undefined : f[c.longitude];
    const postalCode = c.postalCode === undefined ? undefined : f[c.postalCode];
    const phone = c.phone === undefined ? undefined : f[c.phone];
    const row: RecipientRow = {
      line: rec.line,
      id,
      email,
      rawZone,
      country,
      latitude,
      longitude,
      postalCode,
      phone,
      timing: rowTiming(f, c.timing),
      fields: f,
    };
    if (email !== f[c.email]) (row.notes ??= []).push(`email "${f[c.email]}" trimmed`);
    return row;
  }
}

function reject(rec: CsvRecord, id: string, reason: RejectReason, text: string): Reject {
  return { line: rec.line, id, reason, text };
}

/**
 * A row's personalization as JSON text, open for the step number: `{"first_name":"Ana","city":"Oslo",` (`{` without
 * any). The text JSON.stringify gives for an object of the columns' values (no prototype: a column named __proto__ is
 * data like any other), in its key order (integer-like names first); built from each column's key text, rendered once.
 */
export class TemplateDataJson {
  /** Column indices in JSON.stringify's key order, and each one's `{"name":` or `,"name":`. */
  private readonly order: number[];
  private readonly keys: string[];
  /** Reused: the keys and values of a row, then the closing comma. */
  private readonly pieces: string[];

  constructor(columns: Columns) {
    const probe: Record<string, number> = Object.create(null);
    for (const i of columns.data) probe[columns.header[i]] = i;
    this.order = Object.keys(probe).map((name) => probe[name]);
    this.keys = this.order.map((i, n) => (n === 0 ? "{" : ",") + JSON.stringify(columns.header[i]) + ":");
    this.pieces = new Array<string>(2 * this.order.length + 1).fill("");
    this.pieces[2 * this.order.length] = ",";
  }

  /** One flat string (joined, not concatenated into a rope): each of the row's plan lines copies it. */
  prefix(fields: string[]): string {
    const { order, keys, pieces } = this;
    if (order.length === 0) return "{";
    for (let n = 0; n < order.length; n++) {
      pieces[2 * n] = keys[n];
      pieces[2 * n + 1] = JSON.stringify(fields[order[n]]);
    }
    return pieces.join("");
  }
}

/**
 * Whether a row's plan lines could exceed what one Distributed Map batch or SES TemplateData takes, whatever its zone,
 * step, variant and template: the parts that vary are counted at their longest. Most rows are far below and pass on
 * their field lengths alone (a UTF-16 unit is at most 6 bytes of JSON).
 */
class PlanLineBound {
  /** Bytes of a line without its row-specific parts, with zone, time, name, template and variant at their longest. */
  private readonly fixedBytes: number;
  private readonly stepJson: string;
  private readonly templateData: TemplateDataJson;

  constructor(
    private readonly columns: Columns,
    steps: number,
  ) {
    this.stepJson = `"${STEP_KEY}":"${steps}"}`;
    this.templateData = new TemplateDataJson(columns);
    const longest = (n: number) => `"${"x".repeat(n)}"`;
    this.fixedBytes = planLineFromJson({
      schedule_name: longest(scheduler.nameMaxLength),
      send_at: longest(19),
      timezone: longest(scheduler.timezoneMaxLength),
      email: "",
      template: longest(64),
      template_data: "",
      recipient_id: "",
      step: String(steps),
      utc: longest(24),
      variant: longest(32),
      schedule_expression: longest(256),
    }).length;
  }

  tooLarge(id: string, email: string, fields: string[]): boolean {
    let units = id.length + email.length;
    for (const i of this.columns.data) units += fields[i].length + this.columns.header[i].length + 6;
    if (this.fixedBytes + units * 6 + 64 <= Math.min(MAX_PLAN_ROW_BYTES, ses.maxTemplateDataChars)) return false;
    const templateData = this.templateData.prefix(fields) + this.stepJson;
    if (templateData.length > ses.maxTemplateDataChars) return true;
    const bytes =
      this.fixedBytes +
      Buffer.byteLength(templateData) +
      Buffer.byteLength(JSON.stringify(email)) +
      Buffer.byteLength(JSON.stringify(id));
    return bytes > MAX_PLAN_ROW_BYTES;
  }
}
