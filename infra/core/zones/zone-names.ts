/**
 * How a row's written zone is read (docs/send-rules.md, "Zones"): in this order,
 *  1. a `--zone-alias X=ZONE` the user gave for the value (any case);
 *  2. an abbreviation or POSIX legacy name (zone-abbreviations.ts) or a Windows zone name (windows-zones.ts, CLDR):
 *     mapped to the zone of a place, or refused when it names several (`CST`) — never a silent fixed offset;
 *  3. `GMT+N` / `UTC+N`: the offset people mean, UTC+N, which IANA spells with the POSIX sign inverted (Etc/GMT-N);
 *  4. an IANA name (links such as US/Eastern too), re-cased when it differs only in case (Scheduler matches exactly);
 *  5. anything else: unknown (the caller's default zone).
 * Pure: no I/O. Callers cache per value as written (zone-inference.ts).
 */
import { COUNTRY_ZONES } from "./country-zones";
import { IANA_ZONE_NAMES } from "./iana-zones";
import { WINDOWS_ZONES } from "./windows-zones";
import { ZONE_ABBREVIATIONS } from "./zone-abbreviations";

const EXACT_NAMES = new Set(IANA_ZONE_NAMES);
const NAMES_BY_LOWER_CASE = new Map(IANA_ZONE_NAMES.map((n) => [n.toLowerCase(), n]));
const WINDOWS_BY_LOWER_CASE = new Map(WINDOWS_ZONES.map(([w, z]) => [w.toLowerCase(), z]));

/**
 * The IANA name for `raw`: itself when it is one (links such as US/Eastern included), the IANA spelling when it
 * differs only in case (`america/chicago` → `America/Chicago`), otherwise undefined. Spaces matter.
 */
export function canonicalZone(raw: string): string | undefined {
  if (EXACT_NAMES.has(raw)) return raw;
  return NAMES_BY_LOWER_CASE.get(raw.toLowerCase());
}

/**
 * ok: an IANA name as written; canonicalised: re-cased or trimmed; mapped: read through an alias, the table or as a
 * UTC offset; ambiguous: the table names several zones (the row is refused); defaulted: missing or unknown.
 */
export type ZoneStatus =
  "ok" | "canonicalised" | "mapped" | "ambiguous" | "latlon" | "postal" | "phone" | "country" | "defaulted";

/** Where a row's zone came from, as notes.csv and the summaries name it. */
export type ZoneSource = "given" | "mapped" | "latlon" | "postal" | "phone" | "country" | "default";
export const ZONE_SOURCES: readonly ZoneSource[] = [
  "given",
  "mapped",
  "latlon",
  "postal",
  "phone",
  "country",
  "default",
];

export function zoneSourceOf(status: ZoneStatus): ZoneSource {
  if (status === "ok" || status === "canonicalised") return "given";
  return status === "ambiguous" || status === "defaulted" ? "default" : status;
}

/** The sources a row's missing or unknown zone may be inferred from (--infer-zone), in the order they are tried. */
export type InferSource = "latlon" | "postal" | "phone" | "country";
export const INFER_SOURCES: readonly InferSource[] = ["latlon", "postal", "phone", "country"];

/** The one zone of an ISO 3166-1 alpha-2 country (any case, trimmed), if it has one (country-zones.ts, tzdata). */
export function countryZone(country: string): string | undefined {
  const code = country.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) && Object.prototype.hasOwnProperty.call(COUNTRY_ZONES, code)
    ? COUNTRY_ZONES[code]
    : undefined;
}

/** How a mapped value was read. */
export type ZoneMapping = "alias" | "abbreviation" | "windows" | "offset";

export interface ZoneReading {
  /** The IANA zone; undefined when ambiguous or unknown. */
  zone?: string;
  status: Exclude<ZoneStatus, "defaulted"> | "unknown";
  mapping?: ZoneMapping;
  /** Ambiguous: every zone the value may mean. */
  candidates?: readonly string[];
}

/** User aliases (`--zone-alias`), keyed by the value trimmed and upper-cased. */
export type ZoneAliases = ReadonlyMap<string, string>;
const NO_ALIASES: ZoneAliases = new Map();

/** `GMT+1`, `UTC-05`, `UTC+05:00`: whole hours only (no Etc zone has another offset). */
const OFFSET = /^(?:GMT|UTC)\s*([+-])\s*(\d{1,2})(?::?00)?$/i;

/** What `written` (trimmed, not blank) means, by the order in this file's comment. */
export function readZone(written: string, aliases: ZoneAliases = NO_ALIASES): ZoneReading {
  const upper = written.toUpperCase();
  const alias = aliases.get(upper);
  if (alias) return { zone: alias, status: "mapped", mapping: "alias" };
  const abbreviation = ZONE_ABBREVIATIONS[upper];
  if (typeof abbreviation === "string") return { zone: abbreviation, status: "mapped", mapping: "abbreviation" };
  if (abbreviation) return { status: "ambiguous", mapping: "abbreviation", candidates: abbreviation };
  const windows = WINDOWS_BY_LOWER_CASE.get(written.toLowerCase());
  if (windows) return { zone: windows, status: "mapped", mapping: "windows" };
  const offset = OFFSET.exec(written);
  // (GMT+0 and GMT-0 are IANA names, read as such below.)
  if (offset && !EXACT_NAMES.has(written)) {
    const hours = Number(offset[2]);
    const zone = hours === 0 ? "Etc/UTC" : `Etc/GMT${offset[1] === "+" ? "-" : "+"}${hours}`;
    if (EXACT_NAMES.has(zone)) return { zone, status: "mapped", mapping: "offset" };
  }
  const zone = canonicalZone(written);
  if (zone === undefined) return { status: "unknown" };
  return { zone, status: zone === written ? "ok" : "canonicalised" };
}

/** `Etc/GMT+5` → "UTC-05:00": what a fixed Etc zone means (POSIX sign: Etc/GMT+N is N hours behind UTC). */
export function etcOffsetText(zone: string): string | undefined {
  const m = /^Etc\/GMT([+-])(\d{1,2})$/.exec(zone);
  if (!m || m[2] === "0") return undefined;
  return `UTC${m[1] === "+" ? "-" : "+"}${m[2].padStart(2, "0")}:00`;
}

/** The note of a value read as something else than it says, or of a fixed Etc offset given as such. */
export function readingNote(written: string, r: ZoneReading): string | undefined {
  const fixed = r.zone && etcOffsetText(r.zone);
  const allYear = fixed ? `, ${fixed} all year (a fixed offset: no daylight saving)` : "";
  switch (r.mapping) {
    case "alias":
      return `timezone "${written}" read as ${r.zone} (--zone-alias)${allYear}`;
    case "abbreviation":
      return `timezone "${written}" is an abbreviation: read as ${r.zone}, with that zone's daylight saving rules (--zone-alias ${written}=ZONE to choose another)`;
    case "windows":
      return `timezone "${written}" is a Windows zone name: read as ${r.zone} (CLDR windowsZones)${allYear}`;
    case "offset":
      return `timezone "${written}" is a UTC offset: read as ${r.zone}${allYear}; IANA's Etc names have the POSIX sign, inverted`;
  }
  if (fixed)
    return `timezone "${written}" is ${fixed} all year (a fixed offset: no daylight saving; POSIX sign: Etc/GMT+N is N hours behind UTC)`;
  return undefined;
}

/**
 * Why `written` cannot be a zone given once for many (a flag such as --default-timezone, a journey's
 * defaultTimezone): undefined for an IANA zone as IANA spells it; otherwise the problem, naming the zone meant when the
 * table knows it (`EST`: IANA's fixed UTC-5, not New York's time).
 */
export function zoneNameProblem(written: string): string | undefined {
  const r = readZone(written);
  if (r.status === "ok") return undefined;
  if (r.status === "canonicalised") return `not an IANA time zone name as IANA spells it (${r.zone})`;
  if (r.status === "mapped")
    return `an abbreviation, legacy or Windows name or offset: give the zone it means, ${r.zone}`;
  if (r.status === "ambiguous") return `ambiguous: give one of ${r.candidates!.join(", ")}`;
  return "not an IANA time zone name (e.g. America/New_York)";
}

export interface ResolvedZone {
  zone: string;
  status: ZoneStatus;
  reading?: ZoneReading;
}

/** Resolves a row's zone, falling back to the default. Callers cache (zone-inference.ts, per zone as written). */
export class ZoneResolver {
  constructor(
    readonly defaultZone: string,
    readonly aliases: ZoneAliases = NO_ALIASES,
  ) {
    if (canonicalZone(defaultZone) !== defaultZone)
      throw new Error(`default time zone "${defaultZone}" is not an IANA zone name`);
  }

  /** Surrounding spaces are trimmed like case is corrected: either way the row reports the zone "canonicalised". */
  resolve(raw: string | undefined): ResolvedZone {
    const trimmed = raw?.trim();
    if (trimmed === undefined || trimmed === "") return { zone: this.defaultZone, status: "defaulted" };
    const reading = readZone(trimmed, this.aliases);
    if (reading.status === "unknown") return { zone: this.defaultZone, status: "defaulted" };
    if (reading.status === "ambiguous") return { zone: this.defaultZone, status: "ambiguous", reading };
    const zone = reading.zone!;
    const status = reading.status === "ok" && trimmed !== raw ? "canonicalised" : reading.status;
    // (The reading is kept when it says more than the zone: a mapping, or a fixed Etc offset to note.)
    return status === "mapped" || etcOffsetText(zone) ? { zone, status, reading } : { zone, status };
  }

  /** resolve(), then for a missing or unknown zone its country's one zone, if it has one (status "country"). */
  resolveWithCountry(raw: string | undefined, country: string | undefined): ResolvedZone {
    const r = this.resolve(raw);
    const zone = r.status === "defaulted" && country !== undefined ? countryZone(country) : undefined;
    return zone === undefined ? r : { zone, status: "country" };
  }
}

/**
 * `--zone-alias X=ZONE` values, checked: X is any value but blank, ZONE an IANA zone of a place (not itself an
 * abbreviation, a Windows name or an offset the table maps). Returns the aliases or what is wrong with one.
 */
export function parseZoneAliases(values: readonly string[]): ZoneAliases | string {
  const aliases = new Map<string, string>();
  for (const v of values) {
    const eq = v.indexOf("=");
    const from = v.slice(0, eq).trim();
    const to = v.slice(eq + 1).trim();
    if (eq < 0 || from === "" || to === "") return `--zone-alias ${v}: expected VALUE=ZONE (e.g. CST=America/Chicago)`;
    const r = readZone(to);
    if (r.status !== "ok" && r.status !== "canonicalised")
      return `--zone-alias ${v}: ${to} is not an IANA zone of a place (e.g. America/Chicago)`;
    const previous = aliases.get(from.toUpperCase());
    if (previous !== undefined && previous !== r.zone)
      return `--zone-alias ${v}: ${from} is already an alias of ${previous}`;
    aliases.set(from.toUpperCase(), r.zone!);
  }
  return aliases;
}
