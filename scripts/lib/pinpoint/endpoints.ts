/**
 * One Amazon Pinpoint endpoint (a line of an export job's output: an EndpointResponse as newline-delimited JSON) →
 * one sendtime recipient, or the reason it is skipped; an SMS endpoint → the phone and place it gives its user's
 * recipient. Pure: no I/O.
 *
 * Fields read (Pinpoint API reference, EndpointResponse): ChannelType, EndpointStatus, OptOut, Address, Id,
 * User.UserId, User.UserAttributes, Attributes, Demographic.Timezone, Location.Latitude, Location.Longitude,
 * Location.PostalCode, Location.Country. Metrics, Location.City and Region and the other Demographic fields are not
 * imported.
 */
import { isEmailAddress } from "../../../infra/core/send/email";
import { LATITUDE_COLUMN, LONGITUDE_COLUMN } from "../../../infra/core/zones/coordinates";
import { PHONE_COLUMN } from "../../../infra/core/zones/phone";
import { POSTAL_CODE_COLUMN } from "../../../infra/core/zones/postal";
import { ALPHA3_COUNTRIES } from "../../../infra/core/zones/country-codes";
import { COUNTRY_COLUMN } from "../recipients/recipient-columns";
import { readPhone } from "../../../infra/core/zones/phone";

/**
 * The parts of an EndpointResponse the importer reads; every field is optional in an export. Ids are strings in the
 * API, but a hand-made or converted file may hold numbers (read exactly only up to 2^53).
 */
export interface PinpointEndpoint {
  Id?: string | number;
  EffectiveDate?: string;
  ChannelType?: string;
  Address?: string;
  EndpointStatus?: string;
  OptOut?: string;
  Attributes?: Record<string, unknown>;
  Demographic?: { Timezone?: string };
  /** Pinpoint gives numbers for Latitude and Longitude and strings for the others; a hand-made file may not. */
  Location?: { Latitude?: unknown; Longitude?: unknown; PostalCode?: unknown; Country?: unknown };
  User?: { UserId?: string | number; UserAttributes?: Record<string, unknown> };
}

export type SkipReason =
  | "not-email"
  | "inactive"
  | "opted-out"
  | "invalid-address"
  | "missing-id"
  | "invalid-text"
  | "imprecise-number"
  | "missing-address"
  | "invalid-number"
  | "superseded"
  | "opted-out-elsewhere"
  | "duplicate-user"
  | "duplicate-id";
export const SKIP_REASONS: SkipReason[] = [
  "not-email",
  "inactive",
  "opted-out",
  "invalid-address",
  "missing-id",
  "invalid-text",
  "imprecise-number",
  "missing-address",
  "invalid-number",
  "superseded",
  "opted-out-elsewhere",
  "duplicate-user",
  "duplicate-id",
];

/** Where a personalization value came from: the endpoint's Attributes or its User.UserAttributes. */
export type AttributeSource = "endpoint" | "user";

/** What an endpoint's Location says, as the CSV writes it ("" where it says nothing). */
export interface EndpointLocation {
  /** Both or neither: one alone is dropped (the launcher refuses a latitude without a longitude). */
  latitude: string;
  longitude: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2 when Pinpoint holds one, or an alpha-3 code it maps (`USA` → `US`); otherwise as written. */
  country: string;
  /** Whether `country` was mapped from an alpha-3 code. */
  countryFromAlpha3: boolean;
}

export interface EndpointRecipient {
  id: string;
  idFrom: "UserId" | "Id";
  email: string;
  timezone: string;
  location: EndpointLocation;
  attributes: { source: AttributeSource; name: string; value: string }[];
}

/**
 * A usable SMS endpoint: its number (E.164) and the place it gives; `userId` is its User.UserId, or its endpoint Id
 * when it has none (`idFrom`).
 */
export interface SmsContact {
  userId: string;
  idFrom: "UserId" | "Id";
  phone: string;
  timezone: string;
  location: EndpointLocation;
}

export type EndpointOutcome = { recipient: EndpointRecipient } | { skip: SkipReason; detail: string };

/** Separator between the values of a multi-valued attribute (`["Science", "Music"]` → `Science;Music`). */
export const DEFAULT_VALUE_SEPARATOR = ";";

/**
 * Decides one endpoint on its own, before what needs the whole export (superseded lines, opt-outs elsewhere,
 * duplicates: the importer's). Checked in this order: an EMAIL channel, ACTIVE (a missing status counts as active),
 * OptOut NONE or absent (optsOut), an address SES accepts, no number past 2^53 in a field read, an id (User.UserId,
 * else Id), well-formed text.
 */
export function endpointOutcome(e: PinpointEndpoint, separator = DEFAULT_VALUE_SEPARATOR): EndpointOutcome {
  if (e.ChannelType !== "EMAIL") return { skip: "not-email", detail: `ChannelType ${e.ChannelType ?? "missing"}` };
  if (e.EndpointStatus !== undefined && e.EndpointStatus !== "ACTIVE")
    return { skip: "inactive", detail: `EndpointStatus ${e.EndpointStatus}` };
  if (optsOut(e)) return { skip: "opted-out", detail: `OptOut ${e.OptOut}` };
  const email = typeof e.Address === "string" ? e.Address.trim() : "";
  if (!isEmailAddress(email) || email.length > 254)
    return {
      skip: "invalid-address",
      detail: e.Address === undefined ? "no Address" : `Address "${String(e.Address)}" is not an email address`,
    };
  const ids = endpointIds(e);
  if ("skip" in ids) return ids;
  const { userId, endpointId } = ids;
  const attributes: EndpointRecipient["attributes"] = [];
  for (const [name, value] of Object.entries(e.Attributes ?? {}))
    attributes.push({ source: "endpoint", name, value: joinValues(value, separator) });
  for (const [name, value] of Object.entries(e.User?.UserAttributes ?? {}))
    attributes.push({ source: "user", name, value: joinValues(value, separator) });
  const recipient: EndpointRecipient = {
    id: userId || endpointId,
    idFrom: userId ? "UserId" : "Id",
    email,
    timezone: text(e.Demographic?.Timezone).trim(),
    location: endpointLocation(e),
    attributes,
  };
  // JSON can carry a lone UTF-16 surrogate (`"\ud800"`), which no UTF-8 file can: written out it would become U+FFFD,
  // a mangled id (two users merged into one) or a mangled personalization value.
  const bad = malformedField(recipient);
  return bad ? { skip: "invalid-text", detail: `${bad} is not valid Unicode (a lone surrogate)` } : { recipient };
}

/** No field read holds a number past 2^53, and the endpoint has an id (User.UserId, else Id); trimmed. */
function endpointIds(
  e: PinpointEndpoint,
): { userId: string; endpointId: string } | { skip: SkipReason; detail: string } {
  const imprecise = impreciseField(e);
  if (imprecise)
    return {
      skip: "imprecise-number",
      detail: `${imprecise} is a number past 2^53: its digits are lost when read (export it as a string)`,
    };
  const userId = text(e.User?.UserId).trim();
  const endpointId = text(e.Id).trim();
  if (userId === "" && endpointId === "") return { skip: "missing-id", detail: "neither User.UserId nor Id" };
  return { userId, endpointId };
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Whether `s` is well-formed Unicode (no lone surrogate), so that UTF-8 carries it exactly. */
export function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/**
 * The first field read that holds a number JSON cannot carry exactly into a double (magnitude past 2^53 - 1:
 * 12345678901234567890 and 12345678901234567891 both read as 12345678901234567000), named as in the export.
 */
function impreciseField(e: PinpointEndpoint): string | undefined {
  const imprecise = (v: unknown): boolean =>
    typeof v === "number"
      ? !(Math.abs(v) <= Number.MAX_SAFE_INTEGER)
      : typeof v === "object" && v !== null && Object.values(v).some(imprecise);
  if (imprecise(e.User?.UserId)) return "User.UserId";
  if (imprecise(e.Id)) return "Id";
  if (imprecise(e.Demographic?.Timezone)) return "Demographic.Timezone";
  if (imprecise(e.Location?.PostalCode)) return "Location.PostalCode";
  for (const [name, value] of Object.entries(e.Attributes ?? {})) if (imprecise(value)) return `Attributes.${name}`;
  for (const [name, value] of Object.entries(e.User?.UserAttributes ?? {}))
    if (imprecise(value)) return `User.UserAttributes.${name}`;
  return undefined;
}

/** An endpoint opts out unless its OptOut is NONE or absent (ALL, or any other value: an email cannot be taken back). */
export function optsOut(e: PinpointEndpoint): boolean {
  return e.OptOut !== undefined && e.OptOut !== "NONE";
}

/** An address as opt-outs are matched: trimmed and lower-cased (`" D@Example.com"` opts out `d@example.com`). */
export function foldAddress(address: string): string {
  return address.trim().toLowerCase();
}

/** The endpoint's Address as text (an export's is a string; anything else as its JSON text). */
export function addressText(e: PinpointEndpoint): string {
  return text(e.Address);
}

/** The endpoint Id as it identifies the endpoint (exact, untrimmed); undefined when missing, empty or not exact text. */
export function endpointIdKey(e: PinpointEndpoint): string | undefined {
  const id =
    typeof e.Id === "string" ? e.Id : typeof e.Id === "number" && Number.isSafeInteger(e.Id) ? String(e.Id) : "";
  return id !== "" && isWellFormed(id) ? id : undefined;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * EffectiveDate as epoch milliseconds, or undefined when it is missing or not an ISO 8601 instant with a zone (Pinpoint
 * writes `2026-10-01T12:00:00.000Z`): such a line cannot be ordered against the endpoint's other lines.
 */
export function effectiveDateMs(e: { EffectiveDate?: unknown }): number | undefined {
  const d = e.EffectiveDate;
  if (typeof d !== "string" || !ISO_INSTANT.test(d)) return undefined;
  const ms = Date.parse(d);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The first field of the row to write that holds a lone surrogate, named as in the export; undefined when none. */
function malformedField(r: EndpointRecipient): string | undefined {
  if (LONE_SURROGATE.test(r.id)) return r.idFrom === "UserId" ? "User.UserId" : "Id";
  if (LONE_SURROGATE.test(r.timezone)) return "Demographic.Timezone";
  const location = locationProblem(r.location);
  if (location) return location;
  for (const a of r.attributes) {
    const where = a.source === "user" ? "User.UserAttributes" : "Attributes";
    if (LONE_SURROGATE.test(a.name)) return `${where} name`;
    if (LONE_SURROGATE.test(a.value)) return `${where}.${a.name}`;
  }
  return undefined;
}

/** Pinpoint attribute values are lists of strings; they are joined in their order. A lone value is kept as is. */
export function joinValues(value: unknown, separator: string): string {
  if (Array.isArray(value)) return value.map(text).join(separator);
  return text(value);
}

function text(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
}

/**
 * The Location fields as the CSV writes them: coordinates as JSON gives the numbers (JavaScript's shortest text that
 * reads back the same: 47.6, -0.1), a string trimmed, both or neither; PostalCode trimmed; Country trimmed, an
 * ISO 3166-1 alpha-3 code (any case) as its alpha-2 code, anything else as written.
 */
export function endpointLocation(e: PinpointEndpoint): EndpointLocation {
  const l = e.Location ?? {};
  const degrees = (v: unknown) => (typeof v === "number" || typeof v === "string" ? String(v).trim() : "");
  const [latitude, longitude] = [degrees(l.Latitude), degrees(l.Longitude)];
  const pair = latitude !== "" && longitude !== "";
  const written = text(l.Country).trim();
  const alpha2 = /^[A-Za-z]{3}$/.test(written) ? ALPHA3_COUNTRIES[written.toUpperCase()] : undefined;
  return {
    latitude: pair ? latitude : "",
    longitude: pair ? longitude : "",
    postalCode: text(l.PostalCode).trim(),
    country: alpha2 ?? written,
    countryFromAlpha3: alpha2 !== undefined,
  };
}

/** Whether a Location gives anything the CSV writes: the coordinates, a postal code or a country. */
export function hasLocation(l: EndpointLocation): boolean {
  return l.latitude !== "" || l.postalCode !== "" || l.country !== "";
}

/** The Location field that holds a lone surrogate, named as in the export; undefined when none. */
function locationProblem(l: EndpointLocation): string | undefined {
  if (LONE_SURROGATE.test(l.latitude)) return "Location.Latitude";
  if (LONE_SURROGATE.test(l.longitude)) return "Location.Longitude";
  if (LONE_SURROGATE.test(l.postalCode)) return "Location.PostalCode";
  return LONE_SURROGATE.test(l.country) ? "Location.Country" : undefined;
}

/**
 * An SMS endpoint (ChannelType SMS) → its contact, or the reason it is skipped. Checked in this order: ACTIVE (a
 * missing status counts as active), OptOut NONE or absent, an Address, a number libphonenumber takes as valid (E.164,
 * or national with the endpoint's Location.Country), no number past 2^53 in a field read, an id (User.UserId, else
 * Id), well-formed text. Whether it still counts once the whole export is known is the importer's.
 */
export function smsOutcome(e: PinpointEndpoint): { contact: SmsContact } | { skip: SkipReason; detail: string } {
  if (e.EndpointStatus !== undefined && e.EndpointStatus !== "ACTIVE")
    return { skip: "inactive", detail: `EndpointStatus ${e.EndpointStatus}` };
  if (optsOut(e)) return { skip: "opted-out", detail: `OptOut ${e.OptOut}` };
  const written = typeof e.Address === "string" ? e.Address.trim() : "";
  if (written === "")
    return { skip: "missing-address", detail: e.Address === undefined ? "no Address" : "Address is empty" };
  const location = endpointLocation(e);
  const phone = smsNumber(e);
  if (!phone) {
    const read = readPhone(written, location.country);
    return { skip: "invalid-number", detail: read && "problem" in read ? read.problem : `Address "${written}"` };
  }
  const ids = endpointIds(e);
  if ("skip" in ids) return ids;
  const { userId, endpointId } = ids;
  const contact: SmsContact = {
    userId: userId || endpointId,
    idFrom: userId ? "UserId" : "Id",
    phone,
    timezone: text(e.Demographic?.Timezone).trim(),
    location,
  };
  const bad = !isWellFormed(contact.userId)
    ? userId
      ? "User.UserId"
      : "Id"
    : !isWellFormed(contact.timezone)
      ? "Demographic.Timezone"
      : locationProblem(location);
  return bad ? { skip: "invalid-text", detail: `${bad} is not valid Unicode (a lone surrogate)` } : { contact };
}

/** An SMS endpoint's number in E.164 (national numbers read with its Location.Country), or undefined when invalid. */
export function smsNumber(e: PinpointEndpoint): string | undefined {
  if (e.ChannelType !== "SMS" || typeof e.Address !== "string") return undefined;
  const read = readPhone(e.Address, endpointLocation(e).country);
  return read && "e164" in read ? read.e164 : undefined;
}

/**
 * The address an opt-out is matched by: an SMS endpoint's number in E.164 when it is a valid one (`+1 (206) 555-0100`
 * opts out `+12065550100`), otherwise the Address folded (foldAddress).
 */
export function consentAddress(e: PinpointEndpoint): string {
  return smsNumber(e) ?? foldAddress(addressText(e));
}

/** The SMS endpoint's contact for its user's EMAIL row, or undefined when it is skipped (smsOutcome). */
export function smsContact(e: PinpointEndpoint): SmsContact | undefined {
  if (e.ChannelType !== "SMS") return undefined;
  const o = smsOutcome(e);
  return "contact" in o ? o.contact : undefined;
}

/** Where a recipient is, as its row says it: its EMAIL endpoint's, completed from its user's SMS endpoint. */
export interface RecipientPlace {
  timezone: string;
  location: EndpointLocation;
  phone: string;
  /** What came from the SMS endpoint because the EMAIL endpoint gave none. */
  fromSms: { timezone: boolean; location: boolean };
}

/**
 * The row's place: the phone is the SMS endpoint's; Demographic.Timezone and Location are the EMAIL endpoint's, each
 * taken from the SMS endpoint only when the EMAIL endpoint has none. A Location is taken whole from one endpoint,
 * never assembled from two (a postal code of one with another's country would name no place).
 */
export function recipientPlace(r: EndpointRecipient, sms: Omit<SmsContact, "userId"> | undefined): RecipientPlace {
  const timezone = r.timezone === "" && sms !== undefined && sms.timezone !== "";
  const location = !hasLocation(r.location) && sms !== undefined && hasLocation(sms.location);
  return {
    timezone: timezone ? sms!.timezone : r.timezone,
    location: location ? sms!.location : r.location,
    phone: sms?.phone ?? "",
    fromSms: { timezone, location },
  };
}

/** The place columns, in the order written after id, email and timezone; one no row has a value for is left out. */
export const PLACE_COLUMNS = [LATITUDE_COLUMN, LONGITUDE_COLUMN, POSTAL_CODE_COLUMN, COUNTRY_COLUMN, PHONE_COLUMN];

/** A row's place as the values of PLACE_COLUMNS, in their order. */
export function placeValues(p: RecipientPlace): string[] {
  return [p.location.latitude, p.location.longitude, p.location.postalCode, p.location.country, p.phone];
}

/** Columns sendtime reads itself; an attribute of one of these names would change a send, so it is renamed. */
export const CONTROL_COLUMNS = [
  "id",
  "email",
  "timezone",
  "send_at",
  "send_hour",
  "send_minute",
  "step",
  ...PLACE_COLUMNS,
];

/**
 * Column names for the attributes seen, in the order given (each `{source, name}` once):
 * - the attribute's name, trimmed, when no control column and no other attribute has that name (ignoring case);
 * - otherwise `attr_<name>` (endpoint attribute) or `user_<name>` (user attribute);
 * - then, should that still clash with a name already given (ignoring case), `_2`, `_3`, … appended.
 */
export function columnNames(keys: { source: AttributeSource; name: string }[]): string[] {
  const lower = (k: { name: string }) => k.name.trim().toLowerCase();
  const uses = new Map<string, number>();
  for (const k of keys) uses.set(lower(k), (uses.get(lower(k)) ?? 0) + 1);
  const plain = keys.map((k) => lower(k) !== "" && uses.get(lower(k)) === 1 && !CONTROL_COLUMNS.includes(lower(k)));
  // Names kept as they are are taken first, so a prefixed name never takes a name an attribute really has.
  const taken = new Set(CONTROL_COLUMNS);
  keys.forEach((k, i) => plain[i] && taken.add(lower(k)));
  return keys.map((k, i) => {
    if (plain[i]) return k.name.trim();
    const base = `${k.source === "endpoint" ? "attr" : "user"}_${k.name.trim()}`;
    let name = base;
    for (let s = 2; taken.has(name.toLowerCase()); s++) name = `${base}_${s}`;
    taken.add(name.toLowerCase());
    return name;
  });
}
