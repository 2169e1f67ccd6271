/**
 * The zone of a journey's subscriber, read from their event's data as the launcher reads a row's, and the zone-name
 * check of journey definitions.
 */
import { Journey } from "./journeys-definition";
import { RejectReason } from "./journey-types";
import { readCoordinates } from "../zones/coordinates";
import { readPhone } from "../zones/phone";
import { readPostal } from "../zones/postal";
import { zoneNameProblem } from "../zones/zone-names";
import { canonicalZone, ResolvedZone, ZoneResolver } from "../timing/send-time";

/** A subscriber's zone, and the zones their data admits when several (each send then never early, never quiet). */
type SubscriberZone = ResolvedZone & { candidates?: readonly string[] };

/**
 * The subscriber's zone as the launcher reads a row's (docs/send-rules.md, "Zones"): the timezone, else the zone at
 * latitude/longitude (numbers or strings), else the zone(s) of the postal_code (with country), else of the phone,
 * else a country's one zone, else the journey's defaultTimezone.
 */
export function subscriberZone(
  journey: Journey,
  recipient: Record<string, unknown>,
): SubscriberZone | { reason: RejectReason; problem: string } {
  const zones = new ZoneResolver(journey.defaultTimezone ?? "UTC");
  const timezone = typeof recipient.timezone === "string" ? recipient.timezone : undefined;
  const r = zones.resolve(timezone);
  if (r.status !== "defaulted") return r;
  const read = readCoordinates(coordinateText(recipient.latitude), coordinateText(recipient.longitude));
  if (read !== undefined && "problem" in read) return { reason: "invalid-coordinates", problem: read.problem };
  const zone = read && canonicalZone(read.zone);
  if (zone !== undefined) return { zone, status: "latlon" };
  const country = typeof recipient.country === "string" ? recipient.country : undefined;
  const postal = readPostal(placeText(recipient.postal_code), country);
  if (postal !== undefined && "problem" in postal) return { reason: "invalid-postal-code", problem: postal.problem };
  const byPostal = postal && fromZones(postal.zones, "postal");
  if (byPostal) return byPostal;
  const phone = readPhone(placeText(recipient.phone), country);
  if (phone !== undefined && "problem" in phone) return { reason: "invalid-phone", problem: phone.problem };
  return (phone && fromZones(phone.zones, "phone")) ?? zones.resolveWithCountry(timezone, country);
}

function fromZones(zones: readonly string[], status: "postal" | "phone"): SubscriberZone | undefined {
  const known = zones.map((z) => canonicalZone(z)).filter((z): z is string => z !== undefined);
  if (known.length === 0) return undefined;
  return known.length === 1 ? { zone: known[0], status } : { zone: known[0], status, candidates: known };
}

/** A postal code or phone as text: a string as is, a JSON number in decimals; anything else as JSON (refused). */
function placeText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A coordinate as text: a string as is, a JSON number in decimals (1e-7 too); anything else as JSON (refused). */
function coordinateText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value !== "number") return JSON.stringify(value);
  const text = String(value);
  return /e/i.test(text) && Number.isFinite(value) ? value.toFixed(20) : text;
}

/**
 * Whether `zone` is an IANA zone name, exact case, of a place (for journey definitions): not an abbreviation such as
 * EST, which IANA keeps as a fixed UTC-5 (zone-names.ts).
 */
export function isIanaZone(zone: string): boolean {
  return zoneNameProblem(zone) === undefined;
}
