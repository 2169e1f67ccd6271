/**
 * Bulk entries into schedules: each (step, UTC instant, variant) group's entries fill its open chunk, written as one
 * plan line when the next entry would not fit (BulkChunks; bulk.ts says how); and the same count of schedules made
 * without building them, for size-window --bulk (BulkGroupCounts).
 */
import { atExpression } from "../../../infra/core/plan/schedule-expression";
import {
  BULK_LINE_END,
  bulkLineStart,
  MAX_BULK_ENTRIES,
  MAX_BULK_ENTRIES_INPUT_BYTES,
} from "../../../infra/core/plan/bulk-plan-row";
import { bulkScheduleName } from "../../../infra/core/plan/naming";
import { MAX_PLAN_ROW_BYTES } from "../../../infra/core/plan/plan-row";
import { bulkEntryRefusal } from "../../../infra/core/plan/bulk-request";
import { ZoneDecisions } from "./decision-types";
import { InstantHistogram } from "./window";
import { InternalError } from "../../../infra/core/errors";

/** What the per-entry code reads from other modules, read once (bulk.ts says why). */
const MAX_ENTRIES = MAX_BULK_ENTRIES;
const MAX_INPUT_BYTES = MAX_BULK_ENTRIES_INPUT_BYTES;
const entryRefusal = bulkEntryRefusal;

/** A plan line's text around its entries: at most this many bytes (name, instant, template ≤ 64, variant ≤ 32). */
const LINE_OVERHEAD_BYTES = 512;
export const MAX_LINE_ENTRY_BYTES = MAX_PLAN_ROW_BYTES - LINE_OVERHEAD_BYTES;

/**
 * Characters of open chunks' entries kept before the oldest open chunk is written early. It counts the entries, not
 * their buffers' sizes, so the chunks a list makes do not depend on how buffers are sized (a hostile review found a
 * buffer-size bound splitting 40,000 small open chunks early).
 */
export const MAX_OPEN_CHARS = 64 * 1024 * 1024;

/** The counts of a bulk plan, for the summary and the window. */
export interface BulkStats {
  schedules: number;
  entries: number;
  /** Chunks written before they were full because open chunks passed MAX_OPEN_CHARS (0 in a list of few instants). */
  splitEarly: number;
  /** Entries in the fullest and emptiest schedule. */
  largest: number;
  smallest: number;
  /** Bytes of plan lines, for the fan-out's cost model. */
  lineBytes: number;
  /** Schedules per instant: the invocations the window sizes against the Scheduler quota. */
  invocations: InstantHistogram;
}

/** Counts one bulk line (email or text) of `entries` entries and `bytes` bytes, invoked at `utcMs`, in `s`. */
export function countBulkLine(s: BulkStats, entries: number, bytes: number, utcMs: number): void {
  s.schedules++;
  s.entries += entries;
  s.largest = Math.max(s.largest, entries);
  s.smallest = s.smallest === 0 ? entries : Math.min(s.smallest, entries);
  s.lineBytes += bytes;
  s.invocations.add(utcMs, "UTC");
}

/** One (step, UTC instant, variant) group: its chunks so far and its open one. */
export interface Group {
  step: number;
  utcMs: number;
  /** The instant as the line writes it: `send_at` (UTC wall time) and `utc`. */
  wall: string;
  utc: string;
  variant: string | null;
  templateJson: string;
  variantJson: string;
  chunks: number;
  /**
   * The open chunk's plan line so far, as bytes: its start (name, instant, template, variant), then its entries with
   * their commas; undefined when no chunk is open. Bytes, not strings: entries kept as strings until their chunk is
   * written outlived V8's young generation and cost the collector (docs/benchmarks.md, "Bulk sends").
   */
  line?: Buffer;
  filled: number;
  /** Characters of the open chunk's entries (what MAX_OPEN_CHARS bounds). */
  openChars: number;
  /** The open chunk's addresses (unsubscribeAddress): one schedule sends each once (bulkEntryRefusal). */
  addresses: Set<string>;
  entries: number;
  /** Bytes of the open chunk's entries in the plan line and in the Input, with their commas. */
  lineBytes: number;
  inputBytes: number;
}

/** A chunk's first buffer holds at least this: its start and a few entries; it doubles as entries come. */
const FIRST_LINE_BYTES = 512;
/**
 * Buffers of written chunks kept for the next chunks to open (a buffer dropped per chunk waits for the collector
 * outside the heap: a bulk dry run's peak memory rose 6 MB with none kept).
 */
const SPARE_LINES = 32;
const MAX_SPARE_LINE_BYTES = 64 * 1024;
const COMMA = 0x2c;
const LINE_END = Buffer.from(BULK_LINE_END, "latin1");

/** Entries grouped into chunks, written as bulk plan lines through `write` as they fill. */
export class BulkChunks {
  private readonly groups = new Map<string, Group>();
  /** Groups with an open chunk, oldest first. */
  private readonly opened = new Set<Group>();
  /** Characters of the open chunks' entries. */
  private openChars = 0;
  private readonly spare: Buffer[] = [];
  readonly stats: BulkStats = {
    schedules: 0,
    entries: 0,
    splitEarly: 0,
    largest: 0,
    smallest: 0,
    lineBytes: 0,
    invocations: new InstantHistogram(),
  };

  /**
   * `repeatedAddresses`: whether the rows may share an address (--allow-duplicate-emails), so that each entry's is
   * checked against its open chunk's; otherwise the reader has refused every repeat by the same rule (trimmed and
   * case-folded: recipient-rows.ts duplicate-email), and the look-up per entry would be paid for nothing.
   */
  constructor(
    private readonly write: (bytes: Uint8Array) => Promise<void> | undefined,
    private readonly repeatedAddresses = true,
  ) {}

  /** The group of a step's instant and variant; `templateJson`/`variantJson` as JSON text. */
  group(step: number, utcMs: number, variant: string | null, templateJson: string, variantJson: string): Group {
    const key = `${step} ${utcMs} ${variantJson}`;
    let g = this.groups.get(key);
    if (!g) {
      const utc = new Date(utcMs).toISOString();
      g = {
        step,
        utcMs,
        wall: utc.slice(0, 19),
        utc,
        variant,
        templateJson,
        variantJson,
        chunks: 0,
        filled: 0,
        openChars: 0,
        addresses: new Set(),
        entries: 0,
        lineBytes: 0,
        inputBytes: 0,
      };
      this.groups.set(key, g);
    }
    return g;
  }

  /**
   * Adds one entry to `address` (unsubscribeAddress) — `head` (of `headBytes` bytes of UTF-8) then the bytes of `tail`,
   * whose sizes fitsAlone has passed — to its group; a promise only when a write waits for the disk. The open chunk is
   * written first when the entry would not fit it: its bytes, or an address it already holds (a list planned with
   * --allow-duplicate-emails: the repeat starts the group's next schedule).
   */
  add(
    g: Group,
    head: string,
    headBytes: number,
    tail: Uint8Array,
    inputBytes: number,
    address: string,
  ): Promise<void> | undefined {
    const lineBytes = headBytes + tail.length;
    if (
      g.entries &&
      (g.lineBytes + 1 + lineBytes > MAX_LINE_ENTRY_BYTES ||
        g.inputBytes + 1 + inputBytes > MAX_INPUT_BYTES ||
        (this.repeatedAddresses && entryRefusal(g.entries, g.addresses, address) !== undefined))
    ) {
      const written = this.emit(g);
      if (written) return written.then(() => this.add(g, head, headBytes, tail, inputBytes, address));
    }
    if (!g.line) this.open(g, lineBytes);
    const comma = g.entries ? 1 : 0;
    this.reserve(g, comma + lineBytes);
    const line = g.line!;
    if (comma) line[g.filled++] = COMMA;
    if (line.write(head, g.filled, "utf8") !== headBytes)
      throw new InternalError(`a bulk entry measured ${headBytes} bytes before its step was written otherwise`);
    // A tail is a dozen bytes: copied here, cheaper than TypedArray.set's call.
    for (let i = 0, at = g.filled + headBytes; i < tail.length; i++) line[at + i] = tail[i];
    g.filled += lineBytes;
    g.entries++;
    if (this.repeatedAddresses) g.addresses.add(address);
    const chars = head.length + tail.length;
    g.openChars += chars;
    this.openChars += chars;
    g.lineBytes += comma + lineBytes;
    g.inputBytes += comma + inputBytes;
    const written = g.entries === MAX_ENTRIES ? this.emit(g) : undefined;
    return written ? written.then(() => this.bound()) : this.bound();
  }

  /** Opens the group's next chunk: a buffer holding the line's start (its name is the chunk's position). */
  private open(g: Group, firstEntryBytes: number): void {
    const start = bulkLineStart({
      schedule_name: `"${bulkScheduleName(g.step, g.utcMs, g.variant, g.chunks)}"`,
      send_at: `"${g.wall}"`,
      timezone: `"UTC"`,
      utc: `"${g.utc}"`,
      schedule_expression: `"${atExpression(g.wall)}"`,
      step: String(g.step),
      template: g.templateJson,
      variant: g.variantJson,
    });
    const needed = 3 * start.length + firstEntryBytes + LINE_END.length;
    const spares = this.spare;
    g.line =
      spares.length && spares[spares.length - 1].length >= needed
        ? spares.pop()!
        : Buffer.allocUnsafe(Math.max(FIRST_LINE_BYTES, needed + firstEntryBytes));
    g.filled = g.line.write(start, 0, "utf8");
    this.opened.add(g);
  }

  /** Room for `more` bytes and the line's end in the group's buffer. */
  private reserve(g: Group, more: number): void {
    const line = g.line!;
    const needed = g.filled + more + LINE_END.length;
    if (needed <= line.length) return;
    let size = line.length;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    line.copy(grown, 0, 0, g.filled);
    g.line = grown;
  }

  /** Writes the oldest open chunks early while their entries hold more than MAX_OPEN_CHARS characters. */
  private bound(): Promise<void> | undefined {
    while (this.openChars > MAX_OPEN_CHARS) {
      const oldest = this.opened.values().next().value as Group;
      this.stats.splitEarly++;
      const written = this.emit(oldest);
      if (written) return written.then(() => this.bound());
    }
    return undefined;
  }

  /** Writes every open chunk, oldest first. */
  async close(): Promise<void> {
    for (const g of [...this.opened]) await this.emit(g);
  }

  /** Writes a group's open chunk as one plan line (`write` copies it before it returns). */
  private emit(g: Group): Promise<void> | undefined {
    const line = g.line!;
    const entries = g.entries;
    line.set(LINE_END, g.filled);
    const bytes = line.subarray(0, g.filled + LINE_END.length);
    countBulkLine(this.stats, entries, bytes.length, g.utcMs);
    this.openChars -= g.openChars;
    g.openChars = 0;
    g.chunks++;
    const written = this.write(bytes);
    // `write` has copied the bytes: the buffer can take another chunk.
    if (this.spare.length < SPARE_LINES && line.length <= MAX_SPARE_LINE_BYTES) this.spare.push(line);
    g.line = undefined;
    g.filled = 0;
    g.entries = 0;
    g.addresses.clear();
    g.lineBytes = 0;
    g.inputBytes = 0;
    this.opened.delete(g);
    return written;
  }
}

/**
 * Schedules a bulk plan takes, counted without building it (size-window --bulk): per (step, instant, variant) group,
 * ⌈recipients ÷ 50⌉ — the plan's count when entries are far below the Input's bytes (the launcher's own count is exact).
 */
export class BulkGroupCounts {
  private readonly counts = new Map<string, { utcMs: number; n: number }>();
  private readonly keysOf = new WeakMap<ZoneDecisions, string[][]>();

  add(decided: ZoneDecisions, slot: number): void {
    let bySlot = this.keysOf.get(decided);
    if (!bySlot) this.keysOf.set(decided, (bySlot = []));
    let keys = bySlot[slot];
    if (!keys) {
      keys = [];
      decided.steps.forEach((d, k) => d.time && keys!.push(`${k} ${d.time.utcMs} ${slot}`));
      bySlot[slot] = keys;
    }
    for (const key of keys) {
      const c = this.counts.get(key);
      if (c) c.n++;
      else this.counts.set(key, { utcMs: Number(key.split(" ")[1]), n: 1 });
    }
  }

  /** Schedules per instant, and in all. */
  schedules(): { invocations: InstantHistogram; schedules: number; groups: number } {
    const invocations = new InstantHistogram();
    let schedules = 0;
    for (const { utcMs, n } of this.counts.values()) {
      const chunks = Math.ceil(n / MAX_BULK_ENTRIES);
      invocations.add(utcMs, "UTC", chunks);
      schedules += chunks;
    }
    return { invocations, schedules, groups: this.counts.size };
  }
}
