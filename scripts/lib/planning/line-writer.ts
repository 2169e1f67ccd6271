/** The writer of a run's files (LineWriter), and where plan lines may go besides plan.jsonl (PlanSink). */
import { Hash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { failure } from "./output-folder";

/** Where plan lines go besides (or instead of) plan.jsonl: e.g. an upload to S3 while planning. Whole lines only. */
export interface PlanSink {
  /** Resolves at once (undefined) unless the sink is behind; rejects when it failed. */
  write(lines: string): Promise<void> | undefined;
}

/** Bytes a file's writer gathers before handing them on (the stream's own buffer is 16 KB). */
export const FLUSH_BYTES = 1 << 16;

/**
 * Buffered writes with backpressure to a temporary file; optionally hashes what it writes and hands it to a sink
 * (then the file itself may be left out: `local: false`). A write error is kept and thrown at the next write or close
 * as one OutputError naming the file; a sink's error is thrown as it is.
 */
export class LineWriter {
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
