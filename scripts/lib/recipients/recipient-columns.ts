/**
 * A recipient CSV's header, read before any row (step 1 of planning, with recipient-rows.ts): where the reserved
 * columns are (id, email, timezone, the place and send-time columns), every other column personalization; and a
 * header name that only looks like a control column, or holds an invisible character, refused with what to rename.
 */
import { LATITUDE_COLUMN, LONGITUDE_COLUMN } from "../../../infra/core/zones/coordinates";
import { PHONE_COLUMN } from "../../../infra/core/zones/phone";
import { POSTAL_CODE_COLUMN } from "../../../infra/core/zones/postal";
import { InputError } from "../../../infra/core/errors";
import { RowTiming, SEND_AT_COLUMN, SEND_HOUR_COLUMN, SEND_MINUTE_COLUMN } from "../../../infra/core/timing/send-rules";
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
