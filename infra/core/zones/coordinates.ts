/**
 * A row's zone from its `latitude` and `longitude` columns (docs/send-rules.md, "Zones"): decimal degrees, latitude
 * -90..90 and longitude -180..180, looked up in timezone-boundary-builder's zone boundaries as
 * @photostructure/tz-lookup 11.7.0 packs them (CC0-1.0). Pure: no I/O; the table is in the package's code.
 */
import tzLookup = require("@photostructure/tz-lookup");

export const LATITUDE_COLUMN = "latitude";
export const LONGITUDE_COLUMN = "longitude";

/** Decimal degrees as people write them: `40.7128`, `-74.006`, `+2`, `.5` (no exponent, hex, comma or DMS). */
const DECIMAL_DEGREES = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** The zone at a row's coordinates, or why they are not coordinates. */
export type CoordinatesReading = { zone: string } | { problem: string };

/**
 * What a row's `latitude` and `longitude` (as written; undefined when the file has no such column) say: undefined
 * when both are missing or blank (no coordinates), otherwise the zone there or the problem, naming the value and what
 * is allowed. One of the two alone is a problem, not a guess.
 */
export function readCoordinates(
  latitude: string | undefined,
  longitude: string | undefined,
): CoordinatesReading | undefined {
  const lat = latitude?.trim() ?? "";
  const lon = longitude?.trim() ?? "";
  if (lat === "" && lon === "") return undefined;
  if (lon === "") return { problem: `latitude "${latitude}" without a longitude: give both, or neither` };
  if (lat === "") return { problem: `longitude "${longitude}" without a latitude: give both, or neither` };
  const latProblem = degreesProblem("latitude", latitude!, lat, 90);
  if (latProblem) return { problem: latProblem };
  const lonProblem = degreesProblem("longitude", longitude!, lon, 180);
  if (lonProblem) return { problem: lonProblem };
  return { zone: tzLookup(Number(lat), Number(lon)) };
}

function degreesProblem(name: string, written: string, trimmed: string, limit: number): string | undefined {
  const ok = DECIMAL_DEGREES.test(trimmed) && Math.abs(Number(trimmed)) <= limit;
  return ok ? undefined : `${name} "${written}" is not decimal degrees from -${limit} to ${limit} (e.g. 40.7128)`;
}
