import { StepDecision } from "./decision-types";
import { InstantHistogram } from "./window";

/**
 * The send instants of planned rows, for the window. Rows that share a decision list (same zone and timing values)
 * are counted together and added to the histogram in bulk, not once per row and step; the pending counts are bounded
 * for lists with a send time per row.
 */
export class PlannedSends {
  private readonly histogram = new InstantHistogram();
  /** Schedules planned (a recurring schedule is one, however many of its occurrences the histogram holds). */
  schedules = 0;
  private pending: PendingSends[] = [];
  private static readonly MAX_PENDING = 50_000;

  /**
   * Counts `rows` rows. The count goes to the entry the list itself points to when it is this one's, still pending, for
   * the same zone (rows share lists: no lookup per row, which with thousands of lists missed the CPU's caches);
   * otherwise to a new entry the list then points to. Each add counts in exactly one of this one's pending entries.
   */
  add(zone: string, decisions: StepDecision[], rows = 1): void {
    const list = decisions as CountedList;
    const entry = list[PENDING];
    if (entry !== undefined && entry.owner === this && entry.live && entry.zone === zone) {
      entry.count += rows;
      return;
    }
    if (this.pending.length >= PlannedSends.MAX_PENDING) this.flush();
    const fresh: PendingSends = { owner: this, live: true, zone, count: rows, decisions };
    list[PENDING] = fresh;
    this.pending.push(fresh);
  }

  /** Every planned send so far. */
  instants(): InstantHistogram {
    this.flush();
    return this.histogram;
  }

  private flush(): void {
    for (const entry of this.pending) {
      entry.live = false;
      const { decisions, zone, count } = entry;
      for (const d of decisions) {
        if (!d.time) continue;
        this.schedules += count;
        if (d.recurring) for (const utcMs of d.recurring.sized) this.histogram.add(utcMs, zone, count);
        else this.histogram.add(d.time.utcMs, zone, count);
      }
    }
    this.pending = [];
  }
}

/** Rows counted by a PlannedSends for one decision list and zone, not yet in its histogram. */
interface PendingSends {
  owner: PlannedSends;
  live: boolean;
  zone: string;
  count: number;
  decisions: StepDecision[];
}
const PENDING = Symbol("pending sends");
type CountedList = StepDecision[] & { [PENDING]?: PendingSends };
