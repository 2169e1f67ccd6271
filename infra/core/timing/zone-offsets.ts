/**
 * UTC offsets of IANA zones, cached per zone and UTC day. A lookup through Intl (luxon's IANAZone) is slow next to
 * the rest of a row's work (see docs/benchmarks.md); rules that depend on the row (a send hour, a date in a column)
 * need offsets per row, so they must not each ask Intl.
 *
 * A UTC day is learnt once: the offsets at its two ends, and, when they differ, the exact instant of the change
 * (binary search to the millisecond). This relies on no zone changing its offset twice within one UTC day, which
 * holds for every zone of the IANA database since 1970 (the closest two changes are more than 2 days apart).
 */
import { IANAZone } from "luxon";

const DAY = 86_400_000;

/** A day's offset: constant, or changing once at `at`. */
type DayOffsets = number | { at: number; before: number; after: number };

/** One zone's offsets. */
export class ZoneOffsets {
  private readonly days = new Map<number, DayOffsets>();
  private readonly midnights = new Map<number, number>();
  /** The day looked up last (rows of one zone mostly ask about a few days): no map lookup when it is asked again. */
  private lastDay = NaN;
  private lastOffsets: DayOffsets = 0;

  constructor(private readonly zone: IANAZone) {}

  /** Offset from UTC, in minutes, at instant `utcMs`. */
  at(utcMs: number): number {
    const day = Math.floor(utcMs / DAY);
    let d: DayOffsets | undefined = this.lastOffsets;
    if (day !== this.lastDay) {
      d = this.days.get(day);
      if (d === undefined) this.days.set(day, (d = this.learn(day)));
      this.lastDay = day;
      this.lastOffsets = d;
    }
    return typeof d === "number" ? d : utcMs < d.at ? d.before : d.after;
  }

  /** The instant the offset changes on UTC day `day` (epoch ms ÷ 86,400,000), or undefined when it does not. */
  changeOn(day: number): number | undefined {
    let d = this.days.get(day);
    if (d === undefined) this.days.set(day, (d = this.learn(day)));
    return typeof d === "number" ? undefined : d.at;
  }

  private learn(day: number): DayOffsets {
    const before = this.atMidnight(day);
    const after = this.atMidnight(day + 1);
    if (before === after) return before;
    // The first millisecond with the new offset.
    let lo = day * DAY;
    let hi = (day + 1) * DAY;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.zone.offset(mid) === before) lo = mid;
      else hi = mid;
    }
    return { at: hi, before, after };
  }

  private atMidnight(day: number): number {
    let o = this.midnights.get(day);
    if (o === undefined) this.midnights.set(day, (o = this.zone.offset(day * DAY)));
    return o;
  }
}

const byName = new Map<string, ZoneOffsets>();

/** The cached offsets of IANA zone `zone`, for callers that look up many instants in one zone. */
export function zoneOffsets(zone: string): ZoneOffsets {
  let z = byName.get(zone);
  if (!z) byName.set(zone, (z = new ZoneOffsets(IANAZone.create(zone))));
  return z;
}

/** Offset from UTC, in minutes, of IANA zone `zone` at instant `utcMs`. */
export function cachedOffsetMinutes(zone: string, utcMs: number): number {
  return zoneOffsets(zone).at(utcMs);
}
