/**
 * Step 3 of planning: the run's output folder — plan.jsonl, rejects.csv (`line,id,reason`), notes.csv
 * (`line,id,note`: every planned row that was changed or defaulted), summary.json and, with a holdout, holdout.csv
 * (`line,id,email`: the recipients deliberately not sent).
 * Written under temporary names and renamed at the end: a failed run leaves no half plan.
 */
import { createHash, Hash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { RecipientRow, Reject } from "./recipient-rows";

export interface PlanPaths {
  plan: string;
  rejects: string;
  notes: string;
  summary: string;
  /** Only with a holdout. */
  holdout?: string;
}

export class PlanFiles {
  readonly paths: PlanPaths;
  private readonly hash = createHash("sha256");
  private readonly plan: LineWriter;
  private readonly rejects: LineWriter;
  private readonly notes: LineWriter;
  private readonly heldOut?: LineWriter;
  private readonly staleHoldout: string;

  constructor(outDir: string, o: { holdout?: boolean } = {}) {
    fs.mkdirSync(outDir, { recursive: true });
    this.paths = {
      plan: path.join(outDir, "plan.jsonl"),
      rejects: path.join(outDir, "rejects.csv"),
      notes: path.join(outDir, "notes.csv"),
      summary: path.join(outDir, "summary.json"),
    };
    this.plan = new LineWriter(this.paths.plan + ".partial", this.hash);
    this.rejects = new LineWriter(this.paths.rejects + ".partial");
    this.rejects.write("line,id,reason\n");
    this.notes = new LineWriter(this.paths.notes + ".partial");
    this.notes.write("line,id,note\n");
    this.staleHoldout = path.join(outDir, "holdout.csv");
    if (o.holdout) {
      this.paths.holdout = this.staleHoldout;
      this.heldOut = new LineWriter(this.paths.holdout + ".partial");
      this.heldOut.write("line,id,email\n");
    }
  }

  /** Appends plan lines; resolves at once unless the disk is behind. */
  writePlan(text: string): Promise<void> | undefined {
    return this.plan.write(text);
  }

  reject(r: Reject): Promise<void> | undefined {
    return this.rejects.write(`${r.line},${csvField(r.id)},${csvField(r.text)}\n`);
  }

  note(row: { line: number; id: string }, note: string): Promise<void> | undefined {
    return this.notes.write(`${row.line},${csvField(row.id)},${csvField(note)}\n`);
  }

  /** A recipient in the holdout group: listed, not planned. */
  holdout(row: RecipientRow): Promise<void> | undefined {
    return this.heldOut!.write(`${row.line},${csvField(row.id)},${csvField(row.email)}\n`);
  }

  /** Flushes and closes the files; returns the plan's sha256. */
  async close(): Promise<string> {
    await this.plan.close();
    await this.rejects.close();
    await this.notes.close();
    await this.heldOut?.close();
    return this.hash.digest("hex");
  }

  /** Puts every file in place under its final name, the summary last. */
  commit(summary: object): void {
    fs.renameSync(this.paths.plan + ".partial", this.paths.plan);
    fs.renameSync(this.paths.rejects + ".partial", this.paths.rejects);
    fs.renameSync(this.paths.notes + ".partial", this.paths.notes);
    // A holdout.csv left by an earlier run in this folder would describe another plan.
    if (this.paths.holdout) fs.renameSync(this.paths.holdout + ".partial", this.paths.holdout);
    else fs.rmSync(this.staleHoldout, { force: true });
    fs.writeFileSync(this.paths.summary, JSON.stringify(summary, null, 2) + "\n");
  }

  abort(): void {
    this.plan.abort();
    this.rejects.abort();
    this.notes.abort();
    this.heldOut?.abort();
  }
}

/** RFC 4180 quoting when needed. */
function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Buffered writes with backpressure; optionally hashes what it writes. */
class LineWriter {
  private readonly stream: fs.WriteStream;
  private buffer = "";
  constructor(
    readonly file: string,
    private readonly hash?: Hash,
  ) {
    this.stream = fs.createWriteStream(file);
  }
  /** Appends; resolves at once unless the buffer is full and the disk is behind. */
  write(text: string): Promise<void> | undefined {
    this.buffer += text;
    return this.buffer.length >= 1 << 20 ? this.flush() : undefined;
  }
  private async flush(): Promise<void> {
    const chunk = this.buffer;
    this.buffer = "";
    this.hash?.update(chunk);
    if (!this.stream.write(chunk)) await new Promise<void>((r) => this.stream.once("drain", () => r()));
  }
  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
  abort(): void {
    this.stream.destroy();
    fs.rmSync(this.file, { force: true });
  }
}
