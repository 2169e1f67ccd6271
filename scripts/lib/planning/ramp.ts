/**
 * A warm-up (--ramp PRESET|FILE): at most a cap of sends per UTC day, the launch's first UTC day first, the last cap
 * repeating. Recipients are placed in list order: one whose sends would take a day past its cap moves to the next
 * day at its own local time, its later steps with it (the decider plans the row again, every step a day later), and
 * again until all of its sends fit. So the first rows of the list keep their day; moved rows are noted.
 */
import * as fs from "fs";
import { UsageError } from "../../../infra/core/errors";
import { ZoneDecisions } from "./decision-types";
import type { SendDecider } from "./decisions";
import type { RecipientRow } from "../recipients/recipient-rows";
import { count } from "../text/format";

const DAY_MS = 86_400_000;

/**
 * The presets. `new-identity`: 2,000 sends the first day, doubled each day while under 100,000, then × 1.5 while
 * under 400,000, then × 1.25, up to 1,000,000 a day (which repeats): the progression of Batch's warm-up guide
 * (doc.batch.com, "Domain and IP warm-up", step 4: never more than twice the day before; × 1.5 from 100K, × 1.25
 * from 400K), started at 2,000.
 */
export const RAMP_PRESETS: Record<string, () => number[]> = {
  "new-identity": () => {
    const caps = [2_000];
    while (caps.at(-1)! < 1_000_000) {
      const last = caps.at(-1)!;
      caps.push(Math.min(1_000_000, Math.round(last * (last < 100_000 ? 2 : last < 400_000 ? 1.5 : 1.25))));
    }
    return caps;
  },
};

export interface Ramp {
  /** Sends per UTC day, the first UTC day of the launch first; the last one repeats. */
  caps: number[];
  /** Where the caps came from, for the summary: "--ramp new-identity" or "--ramp FILE". */
  source: string;
  /** 00:00 UTC of the launch's first day (epoch ms). */
  firstDayMs: number;
}

/** --ramp: a preset's name, else a file of one cap per line (whole numbers ≥ 1; blank lines and # comments skipped). */
export function rampFromFlag(raw: string | undefined, nowMs: number): Ramp | undefined {
  if (raw === undefined) return undefined;
  const firstDayMs = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const preset = RAMP_PRESETS[raw];
  if (preset) return { caps: preset(), source: `--ramp ${raw}`, firstDayMs };
  let text: string;
  try {
    text = fs.readFileSync(raw, "utf8");
  } catch (e) {
    throw new UsageError(
      `--ramp ${raw}: neither a preset (${Object.keys(RAMP_PRESETS).join(", ")}) nor a readable file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  const caps: number[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const value = line.replace(/#.*$/, "").trim();
    if (value === "") return;
    const n = /^\d[\d,_]*$/.test(value) ? Number(value.replace(/[,_]/g, "")) : NaN;
    if (!(Number.isSafeInteger(n) && n >= 1))
      throw new UsageError(`${raw}:${i + 1}: "${value}" is not a cap: one whole number of sends (1 or more) a line`);
    caps.push(n);
  });
  if (!caps.length) throw new UsageError(`${raw}: no cap in the file: one whole number of sends per UTC day a line`);
  return { caps, source: `--ramp ${raw}`, firstDayMs };
}

/**
 * `--sms-daily-cap N` (a 10DLC number's daily cap: texts per UTC day) as a ramp of N every day; with `--ramp` too,
 * each day's cap is the lower of the two. Recipients past a day's cap move to the next day, as with --ramp.
 */
export function withDailyCap(ramp: Ramp | undefined, dailyCap: number | undefined, nowMs: number): Ramp | undefined {
  if (dailyCap === undefined) return ramp;
  const source = `--sms-daily-cap ${dailyCap}`;
  if (!ramp) return { caps: [dailyCap], source, firstDayMs: Math.floor(nowMs / DAY_MS) * DAY_MS };
  return { ...ramp, caps: ramp.caps.map((c) => Math.min(c, dailyCap)), source: `${ramp.source} and ${source}` };
}

/** A recipient placed: its decisions (moved or not) and by how many days. */
export interface Placed {
  decided: ZoneDecisions;
  shiftDays: number;
  /** Moved: the first day of its planned sends that had no room left (days from the first). */
  fullDay?: number;
}

/** The most days a recipient is moved before the ramp gives up (a cap too small for its sends of one day). */
export const MAX_SHIFT_DAYS = 1_000;

/** Each UTC day's sends against its cap, as recipients are placed in list order. */
export class RampDays {
  private readonly sends = new Map<number, number>();
  /** Recipients moved to a later day, and their sends. */
  moved = 0;

  constructor(readonly ramp: Ramp) {}

  private dayOf(utcMs: number): number {
    return Math.floor((utcMs - this.ramp.firstDayMs) / DAY_MS);
  }

  capOf(day: number): number {
    const { caps } = this.ramp;
    return caps[Math.min(Math.max(day, 0), caps.length - 1)];
  }

  /** The first day a send of `d` would take past its cap, or undefined when every one fits. */
  private fullDayOf(d: ZoneDecisions): number | undefined {
    const wanted = new Map<number, number>();
    for (const s of d.steps) {
      if (!s.time) continue;
      const day = this.dayOf(s.time.utcMs);
      wanted.set(day, (wanted.get(day) ?? 0) + 1);
    }
    for (const [day, n] of wanted) if ((this.sends.get(day) ?? 0) + n > this.capOf(day)) return day;
    return undefined;
  }

  /**
   * The first of `decided`, then `decideShifted(1)`, `decideShifted(2)`, … whose sends all fit (a shifted answer that
   * sends nothing, or is rejected, is passed over). Nothing is counted until `take`.
   */
  place(decided: ZoneDecisions, decideShifted: (days: number) => ZoneDecisions): Placed {
    const fullDay = this.fullDayOf(decided);
    if (fullDay === undefined) return { decided, shiftDays: 0 };
    for (let days = 1; days <= MAX_SHIFT_DAYS; days++) {
      const d = decideShifted(days);
      if (d.reject || d.noSendLeft) continue;
      if (this.fullDayOf(d) === undefined) return { decided: d, shiftDays: days, fullDay };
    }
    throw new UsageError(
      `${this.ramp.source}: a recipient's sends fit no day within ${MAX_SHIFT_DAYS} days (a cap smaller than its sends on one UTC day?); raise the caps`,
    );
  }

  /** Counts a placed recipient's sends. */
  take(p: Placed): void {
    for (const s of p.decided.steps)
      if (s.time) {
        const day = this.dayOf(s.time.utcMs);
        this.sends.set(day, (this.sends.get(day) ?? 0) + 1);
      }
    if (p.shiftDays) this.moved++;
  }

  /** The note of a moved recipient (notes.csv). */
  note(p: Placed): string {
    const day = p.fullDay!;
    const date = new Date(this.ramp.firstDayMs + day * DAY_MS).toISOString().slice(0, 10);
    return `ramp: moved ${p.shiftDays} ${p.shiftDays === 1 ? "day" : "days"} later, each step at its local time: ${date} (UTC) had no room left under its cap of ${count(this.capOf(day))} sends (${this.ramp.source})`;
  }

  /** The cap of the UTC day of `date` (YYYY-MM-DD). */
  capOfDate(date: string): number {
    return this.capOf(this.dayOf(Date.parse(`${date}T00:00:00Z`)));
  }
}

/** A row placed by the ramp: as decided, or decided again that many days later (SendDecider.decide's shiftDays). */
export function placeRow(ramp: RampDays, decider: SendDecider, row: RecipientRow, decided: ZoneDecisions): Placed {
  return ramp.place(decided, (k) => decider.decide(row.rawZone, row.timing, row, k));
}
