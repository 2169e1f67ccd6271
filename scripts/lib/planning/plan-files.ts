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
 */
import { createHash, Hash, randomBytes } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { reportField } from "../recipients/csv-fields";
import { InputError, OutputError } from "../../../infra/core/errors";
import { RecipientRow, Reject } from "../recipients/recipient-rows";
import { ZoneSource } from "../../../infra/core/zones/zone-names";

/** Where plan lines go besides (or instead of) plan.jsonl: e.g. an upload to S3 while planning. Whole lines only. */
export interface PlanSink {
  /** Resolves at once (undefined) unless the sink is behind; rejects when it failed. */
  write(lines: string): Promise<void> | undefined;
}

export interface PlanPaths {
  /** None when the plan is not kept locally (it went only to `planSink`). */
  plan?: string;
  rejects: string;
  notes: string;
  summary: string;
  /** Only with a holdout. */
  holdout?: string;
}

const FINAL_NAMES = ["summary.json", "plan.jsonl", "rejects.csv", "notes.csv", "holdout.csv"];
const LOCK_NAME = ".sendtime.lock";
/** Bytes a file's writer gathers before handing them on (the stream's own buffer is 16 KB). */
const FLUSH_BYTES = 1 << 16;
/**
 * Characters of notes lines kept before they are written (about a hundred rows' notes): well under the FLUSH_BYTES / 3
 * characters a LineWriter copies into its buffer as they come, so each batch goes into the buffer too.
 */
const PENDING_NOTES = FLUSH_BYTES / 8;

const failure = (where: string, e: unknown) => {
  const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  return new OutputError(`${where} (${code})`);
};

/** The files a command writes or removes in its output folder, and what its inputs are, for the message. */
export interface RunFiles {
  /** Names it writes or removes (a temporary `<name>.…` of each too). */
  names: readonly string[];
  /** What an input is: `the recipient list (--recipients list.csv)`. */
  input: (file: string) => string;
  /** When the run replaces its files, and what to move when one is refused: `before it reads the list`, `the list`. */
  when: string;
  move: string;
}

/** launch-campaign's (a dry run's) files. */
export const LAUNCH_RUN_FILES: RunFiles = {
  names: FINAL_NAMES,
  input: (file) => `the recipient list (--recipients ${file})`,
  when: "before it reads the list",
  move: "the list",
};

/**
 * Whether a run writes or removes a file of this name in its folder: a final name, the lock, or a temporary one of
 * theirs. Without case: on the file systems of macOS and Windows, Rejects.csv is rejects.csv.
 */
function isRunFileName(files: RunFiles, name: string): boolean {
  const lower = name.toLowerCase();
  return [...files.names, LOCK_NAME].some((n) => lower === n || lower.startsWith(n + "."));
}

/**
 * Throws InputError when one of `inputs` (local files the run reads) is, in output folder `dir`, a file the run writes
 * or removes (`files`): named so (as given, or where a symbolic link leads), or the same file under such a name (a
 * hard or symbolic link to it there). Touches nothing; a few stat calls.
 */
export function refuseInputsInOutputFolder(
  dir: string,
  inputs: readonly string[],
  files: RunFiles = LAUNCH_RUN_FILES,
): void {
  const realDir = realpathOrUndefined(dir);
  if (realDir === undefined) return; // no folder yet: nothing in it
  const runFiles = fs.readdirSync(realDir).filter((name) => isRunFileName(files, name));
  for (const input of inputs) {
    const stat = statOrUndefined(input);
    if (!stat) continue; // reading it will say so
    const refuse = (name: string, how: string) => {
      throw new InputError(
        `--out ${dir}: ${path.join(dir, name)} is ${files.input(input)}${how}; the run removes and rewrites ${name} ${files.when}: give another --out, or move or rename ${files.move}`,
      );
    };
    const given = path.basename(input);
    if (realpathOrUndefined(path.dirname(path.resolve(input))) === realDir && isRunFileName(files, given))
      refuse(given, "");
    const real = realpathOrUndefined(input)!;
    if (path.dirname(real) === realDir && isRunFileName(files, path.basename(real)))
      refuse(path.basename(real), " (through a symbolic link)");
    for (const name of runFiles) {
      const other = statOrUndefined(path.join(realDir, name));
      if (other && other.dev === stat.dev && other.ino === stat.ino)
        refuse(name, " (the same file under another name: a link)");
    }
  }
}

function realpathOrUndefined(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

/** Exclusive use of an output folder by this run, until release(). */
export class OutputLock {
  private released = false;
  private constructor(
    readonly dir: string,
    private readonly file: string,
    /** The local files the run reads, which it must never remove or replace. */
    readonly inputs: readonly string[],
    /** The files the run writes or removes in `dir`. */
    readonly files: RunFiles,
  ) {}

  /**
   * Creates the folder if needed and locks it; throws OutputError naming the holder when another run has it, and
   * InputError, before creating anything, when one of `inputs` is a file the run would remove or replace there.
   */
  static acquire(dir: string, inputs: readonly string[] = [], files: RunFiles = LAUNCH_RUN_FILES): OutputLock {
    if (dir === "") throw new OutputError(`--out '': cannot write the output folder (an empty path)`);
    refuseInputsInOutputFolder(dir, inputs, files);
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw failure(`${dir}: cannot write the output folder`, e);
    }
    const file = path.join(dir, LOCK_NAME);
    const holder = { pid: process.pid, host: os.hostname(), started: new Date().toISOString() };
    // The lock appears whole or not at all: written under a private name, then hard-linked into place (link fails
    // if the lock exists). A lock created empty and then written could be read, by a second run, between the two.
    const draft = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
    try {
      fs.writeFileSync(draft, JSON.stringify(holder) + "\n", { flag: "wx" });
    } catch (e) {
      throw failure(`${dir}: cannot write the output folder`, e);
    }
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          fs.linkSync(draft, file);
          return new OutputLock(dir, file, inputs, files);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST")
            throw failure(`${dir}: cannot write the output folder`, e);
        }
        const other = readHolder(file);
        if (!other || !gone(other)) {
          const who = other ? `pid ${other.pid} on ${other.host}, started ${other.started}` : "unreadable lock";
          throw new OutputError(
            `${dir}: in use by another run (${who}); wait for it to finish, or remove ${file} if that process is gone`,
          );
        }
        fs.rmSync(file, { force: true }); // its process is gone: take it over
      }
    } finally {
      fs.rmSync(draft, { force: true });
    }
    throw new OutputError(`${dir}: in use by another run (the lock ${file} keeps coming back)`);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    fs.rmSync(this.file, { force: true });
  }
}

function readHolder(file: string): { pid: number; host: string; started: string } | undefined {
  try {
    const h = JSON.parse(fs.readFileSync(file, "utf8"));
    return typeof h.pid === "number" && typeof h.host === "string" ? h : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the lock's process is known to be gone: only decidable on the same host. */
function gone(h: { pid: number; host: string }): boolean {
  if (h.host !== os.hostname()) return false;
  try {
    process.kill(h.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

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

/**
 * Buffered writes with backpressure to a temporary file; optionally hashes what it writes and hands it to a sink
 * (then the file itself may be left out: `local: false`). A write error is kept and thrown at the next write or close
 * as one OutputError naming the file; a sink's error is thrown as it is.
 */
class LineWriter {
  private readonly stream?: fs.WriteStream;
  /** Text is copied in as it comes: a line's string then dies young (held until a flush, lines outlived V8's young
   * generation and filled the old one with garbage, raising a large dry run's peak memory: see docs/benchmarks.md). */
  private buffer: Buffer = Buffer.allocUnsafe(FLUSH_BYTES);
  private filled = 0;
  /** Buffers the stream has written, for reuse: buffers dropped at each flush would pile up outside the heap. */
  private readonly spare: Buffer[] = [];
  private error?: Error;
  private readonly hash?: Hash;
  private readonly sink?: PlanSink;

  constructor(
    readonly final: string,
    readonly temp: string,
    o: { hash?: Hash; sink?: PlanSink; local?: boolean } = {},
  ) {
    this.hash = o.hash;
    this.sink = o.sink;
    if (o.local === false) return;
    this.stream = fs.createWriteStream(temp);
    this.stream.on("error", (e) => (this.error ??= e));
  }

  /** Whether the file is written (and renamed into place at the end). */
  get local(): boolean {
    return this.stream !== undefined;
  }

  /** Appends text or bytes (copied at once); resolves at once unless the buffer is full and the disk is behind. */
  write(text: string | Uint8Array): Promise<void> | undefined {
    if (typeof text !== "string") {
      if (this.filled + text.length > this.buffer.length) return this.flush(text);
      this.buffer.set(text, this.filled);
      this.filled += text.length;
      return undefined;
    }
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (this.filled + text.length * 3 <= this.buffer.length) {
      this.filled += this.buffer.write(text, this.filled);
      return undefined;
    }
    // A long text (a bulk plan line) that fits once measured: into the buffer too, not a buffer of its own.
    if (
      this.filled + text.length <= this.buffer.length &&
      this.filled + Buffer.byteLength(text) <= this.buffer.length
    ) {
      this.filled += this.buffer.write(text, this.filled);
      return undefined;
    }
    return this.flush(text);
  }

  /** Hands what the buffer holds (then `text`, if given) to the hash, the sink and the stream, in order. */
  private async flush(text?: string | Uint8Array): Promise<void> {
    this.check();
    const sent = [this.handOver()];
    if (text instanceof Uint8Array && text.length > this.buffer.length) {
      this.buffer = Buffer.from(text);
      this.filled = this.buffer.length;
      sent.push(this.handOver());
    } else if (text instanceof Uint8Array) {
      this.buffer.set(text, 0);
      this.filled = text.length;
    } else if (
      text !== undefined &&
      text.length * 3 > this.buffer.length &&
      Buffer.byteLength(text) > this.buffer.length
    ) {
      this.buffer = Buffer.from(text);
      this.filled = this.buffer.length;
      sent.push(this.handOver());
    } else if (text !== undefined) this.filled += this.buffer.write(text, this.filled);
    const stream = this.stream;
    if (stream?.writableNeedDrain)
      await new Promise<void>((resolve) => {
        const done = () => {
          stream.off("drain", done);
          stream.off("error", done);
          resolve();
        };
        stream.once("drain", done);
        stream.once("error", done);
      });
    for (const outcome of await Promise.all(sent)) if (outcome?.failed) throw outcome.error;
    this.check();
  }

  /** Gives the buffer's bytes to the hash, the sink and the stream at once; a spare buffer takes its place. */
  private handOver(): Promise<{ failed: false } | { failed: true; error: unknown }> | undefined {
    if (this.filled === 0) return undefined;
    const full = this.buffer;
    const chunk = full.subarray(0, this.filled);
    this.filled = 0;
    this.hash?.update(chunk);
    // Observed at once: the sink may fail while the local file waits for the disk, and a rejection nobody listens to
    // yet would end the process with a stack trace (and leave the upload open).
    const sent = this.sink?.write(chunk.toString("utf8"))?.then(
      () => ({ failed: false as const }),
      (error: unknown) => ({ failed: true as const, error }),
    );
    const reusable = full.length === FLUSH_BYTES;
    if (this.stream) {
      this.buffer = this.spare.pop() ?? Buffer.allocUnsafe(FLUSH_BYTES);
      this.stream.write(chunk, () => {
        if (reusable && this.spare.length < 2) this.spare.push(full);
      });
    } else if (!reusable) this.buffer = Buffer.allocUnsafe(FLUSH_BYTES);
    return sent;
  }

  async close(): Promise<void> {
    await this.flush();
    const stream = this.stream;
    if (!stream) return;
    await new Promise<void>((resolve) => stream.end(() => resolve()));
    if (!this.error && stream.errored) this.error = stream.errored;
    this.check();
  }

  private check(): void {
    if (this.error) throw failure(`${path.dirname(this.final)}: cannot write ${path.basename(this.final)}`, this.error);
  }

  abort(): void {
    if (!this.stream) return;
    this.stream.destroy();
    fs.rmSync(this.temp, { force: true });
  }
}
