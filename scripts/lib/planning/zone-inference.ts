/**
 * A row's zone, for the SendDecider: its zone as written, resolved once per value (row-zones.ts: what that gives
 * besides the zone), or for a row without a usable zone one inferred from its place data as --infer-zone allows
 * (coordinates, postal code, phone, country; docs/send-rules.md), once per value too.
 */
import { ZoneResolver } from "../../../infra/core/timing/send-time";
import { zoneOffsets } from "../../../infra/core/timing/zone-offsets";
import { canonicalZone, countryZone, InferSource } from "../../../infra/core/zones/zone-names";
import { readCoordinates } from "../../../infra/core/zones/coordinates";
import { readPhone } from "../../../infra/core/zones/phone";
import { readPostal } from "../../../infra/core/zones/postal";
import {
  candidatesNote,
  countryNote,
  latlonNote,
  placeNote,
  rowZoneVerdict,
  topUnknownZones,
  UnknownZoneValue,
  ZoneRejectReason,
} from "./row-zones";
import { ResolvedRawZone, RowPlace, SendRules, TimingKeyed } from "./decision-types";

/**
 * The zones of rows as written and as inferred, kept for the rows that follow, with the answer caches keyed by them
 * (`keyed`, which the decider bounds). SendDecider extends it: decide() resolves a row's zone with no extra hop.
 */
export class RowZoneResolver {
  private readonly zones: ZoneResolver;
  private readonly byRawZone = new Map<string, ResolvedRawZone>();
  /**
   * Rows without a usable zone, by zone as written, then by the zone at their coordinates (--infer-zone latlon) or
   * their country (--infer-zone country): the zone inferred, or theirs unchanged.
   */
  private readonly inferredBy: Record<InferSource, Map<ResolvedRawZone, Map<string, ResolvedRawZone>>> = {
    latlon: new Map(),
    postal: new Map(),
    phone: new Map(),
    country: new Map(),
  };
  private inferredSize = 0;
  private readonly infer: Record<InferSource, boolean>;
  /** Every byTimingKey, and their entries together (bounded like the cache). */
  protected readonly keyed: TimingKeyed[] = [];
  protected keyedEntries = 0;

  constructor(readonly rules: SendRules) {
    this.zones = new ZoneResolver(rules.defaultZone, rules.zoneAliases);
    const sources = rules.inferZone ?? [];
    this.infer = { latlon: false, postal: false, phone: false, country: false };
    for (const source of sources) this.infer[source] = true;
  }

  protected resolve(rawZone: string | undefined): ResolvedRawZone {
    const key = rawZone ?? "";
    let r = this.byRawZone.get(key);
    if (!r) {
      const resolved = this.zones.resolve(rawZone);
      const { zone, status } = resolved;
      const { notes, reject } = rowZoneVerdict(rawZone, resolved, this.rules.strictZones === true);
      r = { zone, status, notes, reject, written: key, resolved, rows: 0, byTimingKey: undefined };
      if (this.byRawZone.size < 100_000) {
        this.byRawZone.set(key, r);
        if (!reject) this.keyed.push((r.byTimingKey = { offsets: zoneOffsets(zone), answers: new Map() }));
      }
    }
    return r;
  }

  /**
   * A row without a usable zone: the zone at its coordinates, else its postal code's, else its phone number's, else
   * its country's one zone (the order of docs/send-rules.md, each as --infer-zone allows). Coordinates, a postal code
   * or a phone number that is not one refuses the row (it would otherwise be sent at a guess); a source that knows
   * no zone for the value passes the row to the next. Otherwise `z`.
   */
  protected inferred(z: ResolvedRawZone, place: RowPlace): ResolvedRawZone {
    const infer = this.infer;
    if (infer.latlon && (place.latitude !== undefined || place.longitude !== undefined)) {
      const read = readCoordinates(place.latitude, place.longitude);
      if (read !== undefined && "problem" in read) return refused(z, "invalid-coordinates", read.problem);
      const r = read === undefined ? z : this.fromData(z, "latlon", read.zone);
      if (r !== z) return r;
    }
    if (infer.postal && place.postalCode !== undefined) {
      const read = readPostal(place.postalCode, place.country);
      if (read !== undefined && "problem" in read) return refused(z, "invalid-postal-code", read.problem);
      const r = read === undefined ? z : this.fromZones(z, "postal", read.zones, place.postalCode);
      if (r !== z) return r;
    }
    if (infer.phone && place.phone !== undefined) {
      const read = readPhone(place.phone, place.country);
      if (read !== undefined && "problem" in read) return refused(z, "invalid-phone", read.problem);
      const r = read === undefined ? z : this.fromZones(z, "phone", read.zones, place.phone);
      if (r !== z) return r;
    }
    return infer.country && place.country !== undefined ? this.fromData(z, "country", place.country) : z;
  }

  /** One zone: as fromData; several: the entry of `z`'s rows with these candidates; none: `z`. */
  private fromZones(
    z: ResolvedRawZone,
    source: "postal" | "phone",
    zones: readonly string[],
    written: string,
  ): ResolvedRawZone {
    if (zones.length === 0) return z;
    if (zones.length === 1) return this.fromData(z, source, zones[0]);
    const keys = this.keysOf(z, source);
    const key = zones.join(" ");
    let r = keys.get(key);
    if (!r) {
      const candidates = zones.map((c) => canonicalZone(c)).filter((c): c is string => c !== undefined);
      if (candidates.length < 2) return candidates.length ? this.fromData(z, source, candidates[0]) : z;
      const notes = [candidatesNote(z.written, source, written, candidates)];
      const resolved = { zone: candidates[0], status: source };
      r = { zone: candidates[0], status: source, notes, written: z.written, resolved, rows: 0, candidates };
      if (this.inferredSize < 100_000) {
        keys.set(key, r);
        this.inferredSize++;
      }
    }
    return r;
  }

  private keysOf(z: ResolvedRawZone, source: InferSource): Map<string, ResolvedRawZone> {
    // Keyed by the written zone's own entry, then the zone looked up or the country: no string built per row.
    const bySource = this.inferredBy[source];
    let keys = bySource.get(z);
    if (!keys) bySource.set(z, (keys = new Map()));
    return keys;
  }

  /** The entry of `z`'s rows whose data's zone or country is `key`: its zone (noted); otherwise `z` itself. */
  private fromData(z: ResolvedRawZone, source: InferSource, key: string): ResolvedRawZone {
    const keys = this.keysOf(z, source);
    let r = keys.get(key);
    if (!r) {
      // (A zone a data set knows and our IANA list does not could not be scheduled: not taken.)
      const zone = source === "country" ? countryZone(key) : canonicalZone(key);
      if (zone === undefined) r = z;
      else {
        const resolved = { zone, status: source };
        const notes = [
          source === "latlon"
            ? latlonNote(z.written, zone)
            : source === "country"
              ? countryNote(z.written, zone, key)
              : placeNote(z.written, source, zone),
        ];
        const byTimingKey = { offsets: zoneOffsets(zone), answers: new Map() };
        r = { zone, status: source, notes, reject: undefined, written: z.written, resolved, rows: 0, byTimingKey };
      }
      if (this.inferredSize < 100_000) {
        keys.set(key, r);
        this.inferredSize++;
        if (r !== z) this.keyed.push(r.byTimingKey!);
      }
    }
    return r;
  }

  /** The most frequent values of the timezone column that are not IANA names, with what each is read as. */
  unknownZones(): UnknownZoneValue[] {
    const inferred = Object.values(this.inferredBy)
      .flatMap((byZone) => [...byZone.values()].flatMap((m) => [...m.values()]))
      .filter((r) => r.status !== "defaulted");
    return topUnknownZones([...this.byRawZone.values(), ...inferred]);
  }
}

/** A row refused for its place data: `z`'s entry with the reason (not kept: rare, and the text is the row's). */
function refused(z: ResolvedRawZone, reason: ZoneRejectReason, text: string): ResolvedRawZone {
  return { ...z, notes: [], reject: { reason, text }, rows: 0, byTimingKey: undefined, candidates: undefined };
}
