/**
 * The zones a row's `phone` column suggests (docs/send-rules.md, "Zones"): the number is read and validated as
 * libphonenumber-js 1.12.31 does with its `min` metadata (phone-validity.ts), in E.164 form (`+1 907 555 0100`) or
 * national with the row's `country` (ISO 3166-1 alpha-2, any case); its zones are those of the longest prefix of its
 * E.164 digits in libphonenumber's time-zone map (phone-zones.ts). Pure: no I/O.
 */
import { isSupportedCountry, type CountryCode, type MetadataJson } from "libphonenumber-js/core";
import minMetadata from "libphonenumber-js/min/metadata";
import { PhoneValidity, type ValidNumber } from "./phone-validity";
import { MIXED_CLOCK_CALLING_CODES, PHONE_ZONES } from "./phone-zones";

export const PHONE_COLUMN = "phone";

/**
 * A number's zones (sorted; one when the map is sure, several candidates, or none: the map knows only its country
 * calling code, whose zones keep different clocks, or nothing) and its E.164 form; or why it is not a number.
 */
export type PhoneReading = { zones: readonly string[]; e164: string } | { problem: string };

const NO_ZONES: readonly string[] = Object.freeze([]);
const ZONES_BY_PREFIX = new Map<string, readonly string[]>();
for (const [list, prefixes] of Object.entries(PHONE_ZONES)) {
  const zones = Object.freeze(list === "" ? [] : list.split(" "));
  for (const prefix of prefixes.split(" ")) ZONES_BY_PREFIX.set(prefix, zones);
}
const LONGEST_PREFIX = Math.max(...[...ZONES_BY_PREFIX.keys()].map((p) => p.length));
const MIXED_CLOCKS = new Set(MIXED_CLOCK_CALLING_CODES.split(" "));
const METADATA = minMetadata as MetadataJson;
const VALIDITY = new PhoneValidity();

/** Digits as people write them: a leading `+` for E.164, spaces, dashes, dots and parentheses between. */
const WRITTEN = /^\+?[0-9 ().-]+$/;
const SEPARATORS = /[ ().-]/g;
const PLAIN_E164 = /^\+[0-9]+$/;
const EXAMPLE = "+1 907 555 0100";

/**
 * What a row's `phone` (as written; undefined when the file has no such column) says, with its `country` for a
 * national number: undefined when blank; the problem, naming the value and what is allowed, when it is not a valid
 * number; else its E.164 form and zones (PhoneReading).
 */
export function readPhone(phone: string | undefined, country: string | undefined): PhoneReading | undefined {
  const written = phone?.trim() ?? "";
  if (written === "") return undefined;
  const digits = PLAIN_E164.test(written) ? written : WRITTEN.test(written) ? written.replace(SEPARATORS, "") : "";
  if (!/[0-9]/.test(digits)) {
    return {
      problem: `phone "${phone}" is not a phone number: digits (${EXAMPLE}), spaces, dashes, dots, parentheses`,
    };
  }
  if (digits[0] === "+") {
    const number = VALIDITY.e164(digits);
    if (!number) return { problem: `phone "${phone}" is not a valid number (libphonenumber): e.g. ${EXAMPLE}` };
    return { zones: zonesOf(number), e164: number.e164 };
  }
  const code = country?.trim().toUpperCase() ?? "";
  if (!/^[A-Z]{2}$/.test(code) || !isSupportedCountry(code as CountryCode, METADATA)) {
    const which =
      code === ""
        ? "the row has no country"
        : `country "${country}" is not an ISO 3166-1 alpha-2 code libphonenumber knows`;
    return { problem: `phone "${phone}" has no + and country code (${EXAMPLE}) and ${which} to read it by` };
  }
  const number = VALIDITY.national(digits, code as CountryCode);
  if (!number)
    return { problem: `phone "${phone}" is not a valid number in ${code} (libphonenumber): e.g. ${EXAMPLE}` };
  return { zones: zonesOf(number), e164: number.e164 };
}

/**
 * The zones of the longest prefix of the number's E.164 digits in the map; none when that prefix is its calling code
 * alone and the code's zones keep different clocks (all of North America for +1: the map does not know where).
 */
function zonesOf({ e164, callingCode }: ValidNumber): readonly string[] {
  for (let length = Math.min(LONGEST_PREFIX, e164.length - 1); length >= callingCode.length; length--) {
    const zones = ZONES_BY_PREFIX.get(e164.slice(1, 1 + length));
    if (zones) return length === callingCode.length && MIXED_CLOCKS.has(callingCode) ? NO_ZONES : zones;
  }
  return NO_ZONES;
}
