/**
 * Step 3 of planning: the run's output folder — plan.jsonl, rejects.csv (`line,id,reason`), notes.csv
 * (`line,id,note,zone_source,zone_candidates`: every planned row that was changed, mapped, inferred or defaulted, with
 * where its zone came from and, when its data admits several, the candidates), summary.json and, with a holdout, holdout.csv
 * (`line,id,email`: the recipients deliberately not sent). The CSV files are reports for people: their values are
 * written with reportField (a value a spreadsheet would take for a formula gets a leading `'`); the plan is exact.
 *
 * A folder holds one run at a time and only whole runs:
 * - the run locks the folder (`.sendtime.lock`: pid, host, start); a second run is refused naming the holder, and a
 *   lock whose process is gone (same host) is taken over;
 * - the previous run's files are removed when the run starts, so a failed run leaves nothing that could be taken
 *   for its plan;
 * - files are written under names unique to the run and renamed into place at the end, the summary last;
 * - a write that fails (a full disk, an unwritable folder) is one line naming the file, and the run's partial files
 *   are removed;
 * - the run never removes or replaces its input: a recipient list in the folder under a name the run writes or removes
 *   (the files above, the lock, their temporary names), also through a symbolic link or as a hard link, stops the run
 *   before anything is touched.
 *
 * Its parts: the folder's lock and the guard of the run's inputs (output-folder.ts), the files' buffered writer
 * (line-writer.ts).
 */
import { createHash, randomBytes } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { reportField } from "../recipients/csv-fields";
import { RecipientRow, Reject } from "../recipients/recipient-rows";
import { ZoneSource } from "../../../infra/core/zones/zone-names";
import { failure, FINAL_NAMES, OutputLock, refuseInputsInOutputFolder } from "./output-folder";
import { FLUSH_BYTES, LineWriter, PlanSink } from "./line-writer";

export interface PlanPaths {
  /** None when the plan is not kept locally (it went only to `planSink`). */
  plan?: string;
  rejects: string;
  notes: string;
  summary: string;
  /** Only with a holdout. */
  holdout?: string;
}

/**
 * Characters of notes lines kept before they are written (about a hundred rows' notes): well under the FLUSH_BYTES / 3
 * characters a LineWriter copies into its buffer as they come, so each batch goes into the buffer too.
 */
const PENDING_NOTES = FLUSH_BYTES / 8;

export class PlanFiles {
  readonly paths: PlanPaths;
  private readonly hash = createHash("sha256");
  private readonly writers: LineWriter[] = [];
  private readonly plan: LineWriter;
  private readonly rejects: LineWriter;
  private readonly notes: LineWriter;
  /** Notes lines not yet handed to the writer (PENDING_NOTES): notes come a few per row, and are written in batches. */
  private pendingNotes = "";
  private readonly heldOut?: LineWriter;

  /**
   * Opens the run's files in a folder this run has locked; earlier runs' files there are removed first. The plan
   * lines also go to `planSink`, in the same chunks that are hashed; `localPlan: false` writes no plan.jsonl.
   */
  constructor(lock: OutputLock, o: { holdout?: boolean; planSink?: PlanSink; localPlan?: boolean } = {}) {
    const dir = lock.dir;
    refuseInputsInOutputFolder(dir, lock.inputs, lock.files); // again: the folder may have changed since it was locked
    try {
      for (const name of FINAL_NAMES) fs.rmSync(path.join(dir, name), { force: true });
    } catch (e) {
      throw failure(`${dir}: cannot remove the previous run's files`, e);
    }
    this.paths = {
      plan: o.localPlan === false ? undefined : path.join(dir, "plan.jsonl"),
      rejects: path.join(dir, "rejects.csv"),
      notes: path.join(dir, "notes.csv"),
      summary: path.join(dir, "summary.json"),
    };
    if (o.holdout) this.paths.holdout = path.join(dir, "holdout.csv");
    const suffix = `.${process.pid}-${randomBytes(4).toString("hex")}.partial`;
    const open = (final: string, header?: string) => {
      const w = new LineWriter(final, final + suffix);
      this.writers.push(w);
      // (Into the empty buffer: it never waits.)
      if (header) void w.write(header);
      return w;
    };
    const planFile = path.join(dir, "plan.jsonl");
    this.plan = new LineWriter(planFile, planFile + suffix, {
      hash: this.hash,
      sink: o.planSink,
      local: this.paths.plan !== undefined,
    });
    this.writers.push(this.plan);
    this.rejects = open(this.paths.rejects, "line,id,reason\n");
    this.notes = open(this.paths.notes, "line,id,note,zone_source,zone_candidates\n");
    if (this.paths.holdout) this.heldOut = open(this.paths.holdout, "line,id,email\n");
  }

  /** Appends plan lines; resolves at once unless the disk is behind. */
  /** Appends plan text or its UTF-8 bytes (copied before this returns). */
  writePlan(text: string | Uint8Array): Promise<void> | undefined {
    return this.plan.write(text);
  }

  reject(r: Reject): Promise<void> | undefined {
    return this.rejects.write(`${lineText(r.line)},${reportField(r.id)},${reportField(r.text)}\n`);
  }

  /**
   * A row's notes, one line each: its own, then those its decisions share, already quoted (quotedNoteLines: once per
   * shared list, not per row). They wait with earlier rows' notes until PENDING_NOTES characters (or close()) and are
   * then written together: a promise only when that write waits for the disk.
   */
  notesOf(
    row: { line: number; id: string },
    own: readonly string[] | undefined,
    sharedQuoted: readonly string[],
    zoneFields: string,
  ): Promise<void> | undefined {
    if (!own?.length && !sharedQuoted.length) return undefined;
    const start = `${lineText(row.line)},${reportField(row.id)},`;
    let pending = this.pendingNotes;
    if (own) for (const note of own) pending += `${start}${reportField(note)},${zoneFields}\n`;
    for (let i = 0; i < sharedQuoted.length; i++) pending += start + sharedQuoted[i];
    this.pendingNotes = pending;
    if (pending.length < PENDING_NOTES) return undefined;
    return this.writeNotes();
  }

  /** Writes the notes lines waiting in pendingNotes. */
  private writeNotes(): Promise<void> | undefined {
    const text = this.pendingNotes;
    this.pendingNotes = "";
    return this.notes.write(text);
  }

  /** A recipient in the holdout group: listed, not planned. */
  holdout(row: RecipientRow): Promise<void> | undefined {
    return this.heldOut!.write(`${lineText(row.line)},${reportField(row.id)},${reportField(row.email)}\n`);
  }

  /** Flushes and closes the files; returns the plan's sha256. */
  async close(): Promise<string> {
    await this.writeNotes();
    for (const w of this.writers) await w.close();
    return this.hash.digest("hex");
  }

  /** Puts every file in place under its final name, the summary last. */
  commit(summary: object): void {
    try {
      for (const w of this.writers) if (w.local) fs.renameSync(w.temp, w.final);
      const temp = this.paths.summary + this.writers[0].temp.slice(this.writers[0].final.length);
      fs.writeFileSync(temp, JSON.stringify(summary, null, 2) + "\n");
      fs.renameSync(temp, this.paths.summary);
    } catch (e) {
      this.abort();
      for (const w of this.writers) fs.rmSync(w.final, { force: true });
      throw failure(`${path.dirname(this.paths.summary)}: cannot put the plan in place`, e);
    }
  }

  /** Removes this run's partial files. */
  abort(): void {
    for (const w of this.writers) w.abort();
  }
}

/**
 * The zone_source and zone_candidates fields of a row's notes.csv lines: where its zone came from, and the zones its
 * data admits when several (space-separated; IANA names hold no comma or quote).
 */
export function zoneFields(source: ZoneSource, candidates: readonly string[] | undefined): string {
  return candidates ? `${source},${candidates.join(" ")}` : `${source},`;
}

/**
 * Notes as the note, zone_source and zone_candidates fields of notes.csv lines with their line breaks
 * (PlanFiles.notesOf's `sharedQuoted`).
 */
export function quotedNoteLines(notes: readonly string[], fields: string): readonly string[] {
  return notes.map((note) => [reportField(note), ",", fields, "\n"].join("")); // flat: copied into every row's text
}

const UNDER_1000 = Array.from({ length: 1000 }, (_, i) => String(i));
const PADDED_TO_3 = UNDER_1000.map((digits) => digits.padStart(3, "0"));

/**
 * A line number (a whole number ≥ 0) in decimal, built from 3-digit groups rather than by `String(n)`: V8 keeps the
 * strings it converts numbers to in a cache, so a string per noted row outlived the young generation and cost
 * garbage collection time (see docs/benchmarks.md).
 */
export function lineText(n: number): string {
  return n < 1000 ? UNDER_1000[n] : lineText(Math.floor(n / 1000)) + PADDED_TO_3[n % 1000];
}
