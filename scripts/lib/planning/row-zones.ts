/**
 * What a row's zone as written gives the planner besides the zone (zone-inference.ts, once per value as written):
 * its notes, or why the row is refused — an ambiguous value (`CST`) always, a value the table maps under
 * --strict-zones — and the summary's account of the values that are not IANA names (the ten most frequent, with
 * what each is read as).
 */
import {
  readingNote,
  ResolvedZone,
  ZoneSource,
  ZONE_SOURCES,
  zoneSourceOf,
} from "../../../infra/core/zones/zone-names";

export type ZoneRejectReason =
  "unknown-zone" | "ambiguous-zone" | "invalid-coordinates" | "invalid-postal-code" | "invalid-phone";

export interface RowZoneVerdict {
  notes: string[];
  reject?: { reason: ZoneRejectReason; text: string };
}

/** `rawZone` undefined: the file has no timezone column (everyone in the default zone, nothing noted per row). */
export function rowZoneVerdict(rawZone: string | undefined, r: ResolvedZone, strictZones: boolean): RowZoneVerdict {
  const blank = rawZone === undefined || rawZone.trim() === "";
  const written = blank ? "no timezone" : `timezone "${rawZone}"`;
  const trimmed = rawZone?.trim() ?? "";
  if (r.status === "ambiguous") {
    const c = r.reading!.candidates!;
    const text = `${written} is ambiguous: ${c.slice(0, -1).join(", ")} or ${c[c.length - 1]}; choose with --zone-alias ${trimmed}=${c[0]} (or another zone)`;
    return { notes: [], reject: { reason: "ambiguous-zone", text } };
  }
  if (strictZones && r.status === "defaulted") {
    const problem = blank ? written : `${written} is not an IANA zone`;
    return { notes: [], reject: { reason: "unknown-zone", text: `${problem} (strict zones: no default)` } };
  }
  // A user's own --zone-alias is their choice, taken under strict zones too; the table's mappings are not.
  if (strictZones && r.status === "mapped" && r.reading!.mapping !== "alias")
    return {
      notes: [],
      reject: {
        reason: "unknown-zone",
        text: `${written} is not an IANA zone (it would be read as ${r.zone}; strict zones: nothing is mapped, give --zone-alias ${trimmed}=${r.zone} to take it)`,
      },
    };
  if (r.status === "defaulted")
    return rawZone === undefined
      ? { notes: [] }
      : { notes: [`${blank ? written : `${written} is not an IANA zone`}: sent in ${r.zone}, the default zone`] };
  const notes: string[] = [];
  if (r.status === "canonicalised") notes.push(`${written} read as ${r.zone}`);
  const note = r.reading && readingNote(trimmed, r.reading);
  if (note) notes.push(note);
  return { notes };
}

/** The note of a row without a usable zone sent in its country's one zone. */
export function countryNote(written: string, zone: string, country: string): string {
  const what = written.trim() === "" ? "no timezone" : `timezone "${written}" is not an IANA zone`;
  return `${what}: sent in ${zone}, the one zone of country "${country}" (tzdata zone.tab)`;
}

/** The note of a row without a usable zone sent in the zone at its coordinates. */
export function latlonNote(written: string, zone: string): string {
  const what = written.trim() === "" ? "no timezone" : `timezone "${written}" is not an IANA zone`;
  return `${what}: sent in ${zone}, the zone at its latitude/longitude (timezone-boundary-builder)`;
}

const SOURCE_NAMES = { postal: "postal code", phone: "phone number" } as const;
const DATA_SETS = { postal: "USPS ZIPs and Canadian FSAs", phone: "libphonenumber" } as const;

/** The note of a row without a usable zone sent in the zone of its postal code or phone number. */
export function placeNote(written: string, source: "postal" | "phone", zone: string): string {
  const what = written.trim() === "" ? "no timezone" : `timezone "${written}" is not an IANA zone`;
  return `${what}: sent in ${zone}, the zone of its ${SOURCE_NAMES[source]} (${DATA_SETS[source]})`;
}

/** The note of a row whose postal code or phone number admits several zones. */
export function candidatesNote(
  written: string,
  source: "postal" | "phone",
  value: string,
  zones: readonly string[],
): string {
  const what = written.trim() === "" ? "no timezone" : `timezone "${written}" is not an IANA zone`;
  return `${what}: ${SOURCE_NAMES[source]} "${value.trim()}" may be in ${zones.join(", ")} (${DATA_SETS[source]}): each send goes when its time has come in all of them, outside quiet time in all of them`;
}

/** One value of the timezone column that is not an IANA name, in the summary. */
export interface UnknownZoneValue {
  value: string;
  rows: number;
  /** The zone it is read as; null when it takes the default zone or is refused as ambiguous. */
  readAs: string | null;
  candidates?: readonly string[];
}

export const UNKNOWN_ZONES_LISTED = 10;

/** The most frequent values not IANA names (mapped, ambiguous or unknown; not merely re-cased), most rows first. */
export function topUnknownZones(
  values: Iterable<{ written: string; resolved: ResolvedZone; rows: number }>,
  limit = UNKNOWN_ZONES_LISTED,
): UnknownZoneValue[] {
  // Keyed by the value trimmed: " EST" and "EST" are one value, read alike.
  const unknown = new Map<string, UnknownZoneValue>();
  for (const { written, resolved: r, rows } of values) {
    const value = written.trim();
    if (rows === 0 || value === "" || r.status === "ok" || r.status === "canonicalised") continue;
    const seen = unknown.get(value);
    if (seen) {
      seen.rows += rows;
      continue;
    }
    const readAs = r.status === "mapped" ? r.zone : null;
    const candidates = r.status === "ambiguous" ? r.reading!.candidates : undefined;
    unknown.set(value, { value, rows, readAs, ...(candidates && { candidates }) });
  }
  return [...unknown.values()].sort((a, b) => b.rows - a.rows || (a.value < b.value ? -1 : 1)).slice(0, limit);
}

/** `EST → America/New_York 120, PST → America/Los_Angeles 3`: the mapped values of a summary, for the console. */
export function mappedText(unknown: readonly UnknownZoneValue[], shown = 3): string {
  const mapped = unknown.filter((u) => u.readAs !== null);
  const more = mapped.length > shown ? `, …` : "";
  return mapped
    .slice(0, shown)
    .map((u) => `${u.value} → ${u.readAs} ${u.rows.toLocaleString("en-US")}`)
    .join(", ")
    .concat(more);
}

const INFERRED: readonly ZoneSource[] = ["latlon", "postal", "phone", "country"];

/** `, 4 inferred (postal 1, phone 3)`: the rows whose zone came from their data, for the console; "" for none. */
export function inferredText(bySource: Record<ZoneSource, number> | undefined): string {
  const by = INFERRED.filter((s) => (bySource?.[s] ?? 0) > 0);
  if (by.length === 0) return "";
  const total = by.reduce((n, s) => n + bySource![s], 0);
  return `, ${total.toLocaleString("en-US")} inferred (${by.map((s) => `${s} ${bySource![s].toLocaleString("en-US")}`).join(", ")})`;
}

/** Rows counted per zone source, every source present. */
export function emptyBySource(): Record<ZoneSource, number> {
  return Object.fromEntries(ZONE_SOURCES.map((s) => [s, 0])) as Record<ZoneSource, number>;
}

export { zoneSourceOf };
