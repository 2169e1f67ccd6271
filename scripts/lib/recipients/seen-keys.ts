/**
 * An exact, compact record of the keys seen so far (recipient ids, normalized emails) and the line each was first seen
 * on, for lists of tens of millions of rows.
 *
 * Why not a Map: a JavaScript Map holds at most 2^24 (16.7M) entries ("Map maximum size exceeded") and costs far more
 * memory an entry. Here memory holds only an open-addressing table of 4-byte slots (a few bytes a key, a little more
 * after growing: see docs/benchmarks.md); the keys themselves go to an append-only log file on disk.
 *
 * A slot holds the key's ordinal (the n-th key added), which finds its record in the log, and a fingerprint of the key's
 * hash in the bits the ordinal leaves: 11 bits up to 2^21 slots (about 1.9M keys), 7 from 2^24 slots on. The byte
 * offset of every 64th record is kept in memory, and a record is read with its group (a few KB). Past 2^25 - 2 keys the
 * table switches to 8-byte slots (20-bit fingerprint, 32-bit ordinal). Each record keeps the full 32-bit hash, so the
 * table grows by re-reading the log, without holding an old table and a new one at once.
 *
 * Why it is exact: a fingerprint match is never taken as a duplicate on its own. The candidate's key is read back from
 * the log and compared; only an equal key is a duplicate. With at most 0.9 of the slots used, about one new key in
 * 2^bits costs such a read for nothing (1% with 7 bits), and a key whose hash collides with another's is added as new.
 * An ASCII key (nearly every id and address) is compared as bytes: it is written where its record would go before the
 * lookup, with its hash computed in the same pass, and add() then only writes the record's header.
 *
 * Keys that fold alike (`fold`, e.g. trimmed and lower-cased ids) share a hash, so one table also answers "the first
 * marked key that folds to this one" (firstMarkedLineOfFold): ids and ids differing only in case in one set.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { InternalError } from "../../../infra/core/errors";

/** A 32-bit hash of a key; injectable so tests can force collisions. */
export type KeyHash = (key: string) => number;

/** A log record: [hash u32][line u32][mark bit | byte length u32][UTF-8 bytes]. */
const RECORD_HEADER = 12;
const MARK = 0x8000_0000;
/** Every GROUP-th record's byte offset is kept in memory. */
const GROUP = 64;
const MAX_LOAD = 0.9;
/** The load a table sized from the expected count starts towards: room for a few more keys before it grows. */
const SIZED_LOAD = 0.85;
const GROWTH = 1.5;
const BUFFER_BYTES = 1 << 20;
/** A narrow slot's ordinal takes at most 25 bits, a wide one's 32 (and 20 bits of fingerprint). */
const NARROW = { ordinalBits: 25 };
const WIDE = { fingerprintBits: 20, ordinalBits: 32 };
/** Ordinal + 1 must stay below 2^ordinalBits (0 marks an empty slot). */
const NARROW_MAX_KEYS = 2 ** NARROW.ordinalBits - 2;
const WIDE_MAX_KEYS = 2 ** WIDE.ordinalBits - 2;

/** Logs still open, removed if the process exits without closing them (an error mid-plan). */
const openDirs = new Set<string>();
process.once("exit", () => {
  for (const dir of openDirs) fs.rmSync(dir, { recursive: true, force: true });
});

export interface SeenKeysOptions {
  hash?: KeyHash;
  /** Keys sharing a fold share a hash (default: each key is its own fold). */
  fold?: (key: string) => string;
  /** How many keys to expect (e.g. the list's line count): the table is sized for it and need not grow. */
  initialCapacity?: number;
  tmpDir?: string;
  /** Keys held in 4-byte slots before switching to 8-byte ones (tests lower it). */
  narrowMaxKeys?: number;
}

export class CompactSeenKeys {
  private readonly hashOf: KeyHash;
  private readonly fold: (key: string) => string;
  private readonly narrowMaxKeys: number;
  private slots: Uint32Array | Float64Array = new Uint32Array(0);
  private capacity = 0;
  /** 2^ordinalBits: a slot is fingerprint × span + ordinal + 1. */
  private span = 0;
  private fingerprintShift = 0;
  private count = 0;
  /** Byte offset of records 0, GROUP, 2·GROUP, … in the log. */
  private groupStarts: Float64Array;
  private readonly dir: string;
  private readonly file: string;
  private readonly fd: number;
  /** Bytes already written to the file; the buffer holds what follows. */
  private flushed = 0;
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private filled = 0;
  private scratch = Buffer.allocUnsafe(4096);
  /** The last key hashed, and its hash: a row's id is looked up more than once. */
  private lastKey: string | undefined;
  private lastHash = 0;
  /** Set by readRecord: the record's line and mark, and where its key's bytes are in `recordBytes`. */
  private recordLine = 0;
  private recordMarked = false;
  private recordBytes: Buffer = this.scratch;
  private recordStart = 0;
  private recordLength = 0;
  /** The empty slot firstLine() ended on, for the add() of the same key that usually follows; a rebuild clears it. */
  private pendingKey: string | undefined;
  private pendingSlot = 0;
  private pendingHash = 0;
  /** The pending key's byte length when encodeAhead() wrote it, else -1. */
  private pendingEncoded = -1;
  /** encodeAhead()'s hash of the key it wrote: the default hash, used when there is no `hash` or `fold` option. */
  private aheadHash = 0;
  private readonly inlineHash: boolean;

  constructor(options: SeenKeysOptions = {}) {
    this.hashOf = options.hash ?? fnv1a32;
    this.fold = options.fold ?? ((key) => key);
    this.inlineHash = options.hash === undefined && options.fold === undefined;
    this.narrowMaxKeys = Math.min(options.narrowMaxKeys ?? NARROW_MAX_KEYS, NARROW_MAX_KEYS);
    this.dir = fs.mkdtempSync(path.join(options.tmpDir ?? os.tmpdir(), "sendtime-seen-"));
    this.file = path.join(this.dir, "keys.log");
    this.fd = fs.openSync(this.file, "w+");
    openDirs.add(this.dir);
    const expected = Math.max(8, options.initialCapacity ?? 1 << 16);
    this.groupStarts = new Float64Array(Math.ceil(expected / GROUP) + 1);
    this.allocate(primeAtLeast(Math.ceil(expected / SIZED_LOAD)), false);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes of memory the table and its offsets take (for the benchmark). */
  get tableBytes(): number {
    return this.slots.byteLength + this.groupStarts.byteLength;
  }

  /** The line `key` was first seen on, or undefined when it has not been added. */
  firstLine(key: string): number | undefined {
    // Whatever was pending, its bytes are about to be overwritten: an add() of it looks it up again.
    this.pendingKey = undefined;
    // An ASCII key is written where its record would go (it is then compared as bytes, and add() only adds the
    // record's header); the default hash is computed in the same pass.
    const encoded = this.encodeAhead(key);
    const hash = encoded >= 0 && this.inlineHash ? this.aheadHash : this.hashOfKey(key);
    const { slots, capacity } = this;
    const lo = this.fingerprint(hash) * this.span;
    const hi = lo + this.span;
    const step = stepOf(hash, capacity);
    let slot = hash % capacity;
    for (let v = slots[slot]; v !== 0; v = slots[slot]) {
      if (
        v > lo &&
        v < hi &&
        this.readRecord(v - lo - 1) === hash &&
        (encoded >= 0 ? this.recordEqualsAhead(encoded) : this.recordKeyEquals(key))
      )
        return this.recordLine;
      slot += step;
      if (slot >= capacity) slot -= capacity;
    }
    // Where add(key) will go if it comes next (the usual pattern: look up, then add).
    this.pendingKey = key;
    this.pendingSlot = slot;
    this.pendingHash = hash;
    this.pendingEncoded = encoded;
    return undefined;
  }

  /** The first line of a marked key that folds like `key` (itself included), or undefined. */
  firstMarkedLineOfFold(key: string): number | undefined {
    const folded = this.fold(key);
    const hash = this.hashOfKey(key);
    const { slots, capacity } = this;
    const lo = this.fingerprint(hash) * this.span;
    const hi = lo + this.span;
    const step = stepOf(hash, capacity);
    let first: number | undefined;
    for (let slot = hash % capacity, v = slots[slot]; v !== 0; v = slots[slot]) {
      const candidate = v > lo && v < hi && this.readRecord(v - lo - 1) === hash;
      if (candidate && this.recordMarked && (first === undefined || this.recordLine < first)) {
        const other = this.recordBytes.toString("utf8", this.recordStart, this.recordStart + this.recordLength);
        if (this.fold(other) === folded) first = this.recordLine;
      }
      slot += step;
      if (slot >= capacity) slot -= capacity;
    }
    return first;
  }

  /** Records `key` as first seen on `line`; the caller has checked that it is new (firstLine returned undefined). */
  add(key: string, line: number, marked = false): void {
    if (this.pendingKey !== key) {
      if (this.firstLine(key) !== undefined) throw new Error("add() of a key already present");
      return this.add(key, line, marked);
    }
    this.pendingKey = undefined;
    const hash = this.pendingHash;
    const ordinal =
      this.pendingEncoded >= 0
        ? this.appendHeader(hash, line, marked, this.pendingEncoded)
        : this.append(key, hash, line, marked);
    this.slots[this.pendingSlot] = this.fingerprint(hash) * this.span + ordinal + 1;
    this.count++;
    if (this.count > this.capacity * MAX_LOAD || this.count === this.narrowMaxKeys) {
      const wide = this.span === 2 ** WIDE.ordinalBits || this.count >= this.narrowMaxKeys;
      const capacity =
        this.count > this.capacity * MAX_LOAD ? primeAtLeast(Math.ceil(this.capacity * GROWTH)) : this.capacity;
      this.rebuild(capacity, wide);
    }
  }

  /** firstLine, then add when new: the line `key` was first seen on, or undefined (and it is now recorded). */
  firstLineOrAdd(key: string, line: number): number | undefined {
    const first = this.firstLine(key);
    if (first === undefined) this.add(key, line);
    return first;
  }

  /** Deletes the key log. The set cannot be used afterwards. */
  close(): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      // already closed
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
    openDirs.delete(this.dir);
  }

  private hashOfKey(key: string): number {
    if (key !== this.lastKey) {
      this.lastKey = key;
      this.lastHash = this.hashOf(this.fold(key)) >>> 0;
    }
    return this.lastHash;
  }

  private fingerprint(hash: number): number {
    return mix(hash) >>> this.fingerprintShift;
  }

  /** An empty table of `capacity` slots, narrow (4 bytes) or wide (8). */
  private allocate(capacity: number, wide: boolean): void {
    this.slots = new Uint32Array(0); // let the old table go before the new one is allocated
    this.slots = wide ? new Float64Array(capacity) : new Uint32Array(capacity);
    this.capacity = capacity;
    // A narrow slot's ordinal needs only the bits the table's keys can count to (it grows before they are full): the
    // fingerprint takes the rest, 11 bits at a million keys, so fewer lookups read a record for nothing.
    const ordinalBits = wide ? WIDE.ordinalBits : Math.min(NARROW.ordinalBits, Math.ceil(Math.log2(capacity + 1)));
    this.span = 2 ** ordinalBits;
    this.fingerprintShift = wide ? 32 - WIDE.fingerprintBits : ordinalBits;
    this.pendingKey = undefined;
  }

  /** A new table, filled from the log's records (their hashes, in order): no second table is held meanwhile. */
  private rebuild(capacity: number, wide: boolean): void {
    if (this.count > WIDE_MAX_KEYS) throw new Error(`more than ${WIDE_MAX_KEYS} distinct keys`);
    this.flush();
    this.allocate(capacity, wide);
    const chunk = Buffer.allocUnsafe(BUFFER_BYTES);
    let chunkStart = 0;
    let chunkEnd = 0;
    let position = 0;
    for (let ordinal = 0; ordinal < this.count; ordinal++) {
      if (position + RECORD_HEADER > chunkEnd) {
        chunkStart = position;
        chunkEnd = position + this.readAt(chunk, position, Math.min(chunk.length, this.flushed - position));
      }
      const hash = chunk.readUInt32LE(position - chunkStart);
      const length = chunk.readUInt32LE(position - chunkStart + 8) & ~MARK;
      position += RECORD_HEADER + length;
      const step = stepOf(hash, capacity);
      let slot = hash % capacity;
      while (this.slots[slot] !== 0) {
        slot += step;
        if (slot >= capacity) slot -= capacity;
      }
      this.slots[slot] = this.fingerprint(hash) * this.span + ordinal + 1;
    }
  }

  /** Appends a record to the log; returns its ordinal. */
  private append(key: string, hash: number, line: number, marked: boolean): number {
    this.makeRoom(RECORD_HEADER + key.length * 3);
    const length = writeUtf8(this.buffer, key, this.filled + RECORD_HEADER);
    return this.appendHeader(hash, line, marked, length);
  }

  /**
   * Writes the header of a record whose `length` key bytes already follow it in the buffer (append, or encodeAhead
   * with nothing written since) and counts the record in; returns its ordinal.
   */
  private appendHeader(hash: number, line: number, marked: boolean, length: number): number {
    const ordinal = this.count;
    if (ordinal % GROUP === 0) {
      const group = ordinal / GROUP;
      if (group === this.groupStarts.length) {
        const grown = new Float64Array(group * 2);
        grown.set(this.groupStarts);
        this.groupStarts = grown;
      }
      this.groupStarts[group] = this.flushed + this.filled;
    }
    this.buffer.writeUInt32LE(hash, this.filled);
    this.buffer.writeUInt32LE(line >>> 0, this.filled + 4);
    this.buffer.writeUInt32LE((marked ? MARK : 0) + length, this.filled + 8);
    this.filled += RECORD_HEADER + length;
    return ordinal;
  }

  /** Flushes the buffer if `bytes` more do not fit, and grows it if they never would. */
  private makeRoom(bytes: number): void {
    if (this.filled + bytes > this.buffer.length) {
      this.flush();
      if (bytes > this.buffer.length) this.buffer = Buffer.allocUnsafe(bytes);
    }
  }

  /**
   * Writes an ASCII key's bytes where its record's key would go, and its default hash (fnv1a32) to aheadHash; returns
   * its length, or -1 for a key with another character (it takes the general path: hashed and compared as a string).
   */
  private encodeAhead(key: string): number {
    this.makeRoom(RECORD_HEADER + key.length);
    const buffer = this.buffer;
    const at = this.filled + RECORD_HEADER;
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) return -1;
      buffer[at + i] = c;
      h = Math.imul(h ^ c, 0x01000193);
    }
    this.aheadHash = fmix32(h);
    return key.length;
  }

  /** Whether the record readRecord() found holds the `length` key bytes encodeAhead() wrote. */
  private recordEqualsAhead(length: number): boolean {
    if (this.recordLength !== length) return false;
    const record = this.recordBytes;
    const buffer = this.buffer;
    const at = this.filled + RECORD_HEADER;
    for (let i = 0, r = this.recordStart; i < length; i++, r++) if (record[r] !== buffer[at + i]) return false;
    return true;
  }

  private flush(): void {
    let done = 0;
    while (done < this.filled)
      done += fs.writeSync(this.fd, this.buffer, done, this.filled - done, this.flushed + done);
    this.flushed += this.filled;
    this.filled = 0;
  }

  /** Finds record `ordinal` (reading its group from the buffer or the file); sets the record fields; returns its hash. */
  private readRecord(ordinal: number): number {
    const group = Math.floor(ordinal / GROUP);
    const start = this.groupStarts[group];
    const written = this.flushed + this.filled;
    const end = (group + 1) * GROUP < this.count ? this.groupStarts[group + 1] : written;
    let bytes: Buffer;
    let at: number;
    if (start >= this.flushed) {
      bytes = this.buffer;
      at = start - this.flushed;
    } else {
      if (this.scratch.length < end - start) this.scratch = Buffer.allocUnsafe(end - start);
      const fromFile = Math.min(end, this.flushed) - start;
      this.readAt(this.scratch, start, fromFile);
      if (end > this.flushed) this.buffer.copy(this.scratch, fromFile, 0, end - this.flushed);
      bytes = this.scratch;
      at = 0;
    }
    for (let skip = ordinal % GROUP; skip > 0; skip--) at += RECORD_HEADER + (bytes.readUInt32LE(at + 8) & ~MARK);
    const lengthAndMark = bytes.readUInt32LE(at + 8);
    this.recordLine = bytes.readUInt32LE(at + 4);
    this.recordMarked = lengthAndMark >= MARK;
    this.recordLength = lengthAndMark & ~MARK;
    this.recordBytes = bytes;
    this.recordStart = at + RECORD_HEADER;
    return bytes.readUInt32LE(at);
  }

  private recordKeyEquals(key: string): boolean {
    // A key of another byte length cannot be equal (ASCII keys: length in bytes = length in characters).
    if (this.recordLength !== key.length && this.recordLength !== Buffer.byteLength(key, "utf8")) return false;
    return this.recordBytes.toString("utf8", this.recordStart, this.recordStart + this.recordLength) === key;
  }

  /** Reads `length` bytes of the log at `position` into `target`; returns `length`. */
  private readAt(target: Buffer, position: number, length: number): number {
    let done = 0;
    while (done < length) {
      const n = fs.readSync(this.fd, target, done, length - done, position + done);
      if (n === 0) throw new Error(`key log ${this.file} ends early at byte ${position + done}`);
      done += n;
    }
    return length;
  }
}

/**
 * Buffer.write is slow for short strings; ids and addresses are nearly always ASCII, copied here byte by byte. A key
 * holding a lone UTF-16 surrogate is refused: UTF-8 would store it as U+FFFD, and the key would never compare equal to
 * itself again (a duplicate missed). Inputs never carry one (CSV is checked UTF-8; the Pinpoint importer skips such
 * endpoints): this guards the invariant, on the non-ASCII path only.
 */
function writeUtf8(buffer: Buffer, text: string, at: number): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) {
      if (LONE_SURROGATE.test(text))
        throw new InternalError(`a key that is not well-formed Unicode (a lone surrogate): ${JSON.stringify(text)}`);
      return buffer.write(text, at, "utf8");
    }
    buffer[at + i] = c;
  }
  return text.length;
}

const LONE_SURROGATE = /\p{Cs}/u;

/** A second hash from the first (murmur3's fmix32 of a shifted value): the probe step and the fingerprint. */
function mix(hash: number): number {
  return fmix32((hash ^ 0x9e3779b9) >>> 0);
}

/** murmur3's finalizer: every input bit affects every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Double hashing: the step is in [1, capacity - 1], and capacity is prime, so a probe visits every slot. */
function stepOf(hash: number, capacity: number): number {
  return 1 + ((mix(hash) & 0x1ffffff) % (capacity - 1));
}

function primeAtLeast(n: number): number {
  for (let c = Math.max(11, n) | 1; ; c += 2) {
    let prime = true;
    for (let d = 3; d * d <= c; d += 2)
      if (c % d === 0) {
        prime = false;
        break;
      }
    if (prime) return c;
  }
}

/** FNV-1a over UTF-16 code units with a final avalanche (murmur3's fmix32), so every bit of the hash mixes well. */
export function fnv1a32(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return fmix32(h);
}
