import { RecipientRow, RejectReason } from "../recipients/recipient-rows";
import { StepDecision } from "./decision-types";
import { Prepared } from "./plan-lines";
import { PlannedSends } from "./planned-sends";
import { emptyBySource, UnknownZoneValue } from "./row-zones";

/** The run's counts, kept as rows stream by. */
export class PlanTally {
  rows = 0;
  planned = 0;
  rejected = 0;
  heldOut = 0;
  readonly byReason: Partial<Record<RejectReason, number>> = {};
  defaulted = 0;
  canonicalised = 0;
  mapped = 0;
  readonly bySource = emptyBySource();
  unknownZones: UnknownZoneValue[] = [];
  skipped = 0;
  sentNow = 0;
  movedToNextDay = 0;
  quietDelayed = 0;
  quietSkipped = 0;
  readonly schedulesByStep: number[];
  /** Recipients per "step with": a step not planned because it came too close to another. */
  readonly collisions = new Map<string, number>();
  idsDifferingOnlyInCase = 0;
  /** Per variant, the last slot for no variant. */
  readonly recipientsByGroup: number[];
  readonly schedulesByGroup: number[];
  /** `schedulesByStepAndGroup[step][group]`. */
  readonly schedulesByStepAndGroup: number[][];
  /** Send instants of the planned schedules. */
  readonly sends = new PlannedSends();
  /** Recurring sends: the latest EndDate of any planned schedule. */
  lastEndMs = 0;
  /** What planned rows share, with rows counted by plan() but not yet taken in (bounded like PlannedSends'). */
  private untallied: Prepared[] = [];
  private static readonly MAX_UNTALLIED = 50_000;

  constructor(steps: number, variants: number) {
    this.schedulesByStep = new Array(steps).fill(0);
    this.recipientsByGroup = new Array(variants + 1).fill(0);
    this.schedulesByGroup = new Array(variants + 1).fill(0);
    this.schedulesByStepAndGroup = Array.from({ length: steps }, () => new Array(variants + 1).fill(0));
  }

  /** Every row is planned, rejected or held out: rows = planned + rejected + held out. */
  checkRows(): void {
    if (this.rows !== this.planned + this.rejected + this.heldOut)
      throw new Error(
        `internal: ${this.rows} rows but ${this.planned} planned + ${this.rejected} rejected + ${this.heldOut} held out`,
      );
  }

  reject(reason: RejectReason): void {
    this.rejected++;
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
  }

  /** Counts what happened to each step's send, for `rows` rows; returns how many steps are sent. */
  steps(decisions: StepDecision[], rows = 1): number {
    let sent = 0;
    for (let k = 0; k < decisions.length; k++) {
      const d = decisions[k];
      if (d.outcome === "skipped") this.skipped += rows;
      if (d.outcome === "sent-now") this.sentNow += rows;
      if (d.outcome === "next-day") this.movedToNextDay += rows;
      // A delayed step that then came too close to another is not sent: a collision, not a delayed send.
      if (d.quiet === "delayed" && d.time) this.quietDelayed += rows;
      if (d.quiet === "skipped") this.quietSkipped += rows;
      if (d.outcome === "collided" || d.outcome === "out-of-order") {
        const key = `${d.step.number} ${d.collidedWith} ${d.outcome === "collided" ? "too-close" : "out-of-order"}`;
        this.collisions.set(key, (this.collisions.get(key) ?? 0) + rows);
      }
      if (d.time) {
        this.schedulesByStep[k] += rows;
        sent++;
      }
    }
    return sent;
  }

  /**
   * Counts a planned row in the group with `slot`. Only the rows planned and ids differing in case are counted here;
   * everything its answer decides (zones, schedules per step and variant, missed and quiet outcomes, collisions, send
   * instants) is counted per answer and group, for all its rows at once, when the tally is read (flush).
   */
  plan(row: RecipientRow, p: Prepared, slot: number): void {
    this.planned++;
    if (row.sameIdButCase !== undefined) this.idsDifferingOnlyInCase++;
    p.untallied[slot]++;
    if (p.untalliedRows++ === 0) {
      this.untallied.push(p);
      if (this.untallied.length >= PlanTally.MAX_UNTALLIED) this.flush();
    }
  }

  /** Takes in every row counted by plan(); before the counts are read. */
  flush(): void {
    for (const p of this.untallied) {
      const d = p.decided;
      const rows = p.untalliedRows;
      p.untalliedRows = 0;
      if (d.status === "defaulted") this.defaulted += rows;
      if (d.status === "canonicalised") this.canonicalised += rows;
      if (d.status === "mapped") this.mapped += rows;
      this.bySource[p.zoneSource] += rows;
      const sent = this.steps(d.steps, rows);
      p.untallied.forEach((inSlot, slot) => {
        this.recipientsByGroup[slot] += inSlot;
        this.schedulesByGroup[slot] += sent * inSlot;
        d.steps.forEach((step, k) => step.time && (this.schedulesByStepAndGroup[k][slot] += inSlot));
        p.untallied[slot] = 0;
      });
      this.sends.add(d.zone, d.steps, rows);
      const recurring = d.steps[0]?.recurring;
      if (recurring && recurring.endMs > this.lastEndMs) this.lastEndMs = recurring.endMs;
    }
    this.untallied = [];
  }
}
