/**
 * An exact, compact record of the keys seen so far (recipient ids, normalized emails) and the line each was first seen
 * on, for lists of tens of millions of rows.
 *
 * Why not a Map: a JavaScript Map holds at most 2^24 (16.7M) entries ("Map maximum size exceeded") and costs ~100 bytes
 * an entry. Here the table is typed arrays (8 bytes a slot: a 32-bit hash and where the key is kept) and the keys
 * themselves go to an append-only log file on disk, so memory stays around 11 bytes a key at any count. The table is
 * 256 segments (by the hash's top byte), each growing on its own, so a growth briefly holds 1/256 of it twice, not all.
 *
 * Why it is exact: a hash match is never taken as a duplicate on its own. The candidate's key is read back from the log
 * (from the write buffer, or one positioned read of the file) and compared; only an equal key is a duplicate. Every
 * true duplicate costs that one read; a false match of the 32-bit hash (about n²/2^33 of them over n keys) costs one
 * more and the key is then added as new.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

/** A 32-bit hash of a key; injectable so tests can force collisions. */
export type KeyHash = (key: string) => number;

/** Keys are stored as [line u32][byte length u32][UTF-8 bytes], padded to 4 bytes, so a 32-bit word index addresses 16 GiB. */
const WORD = 4;
const RECORD_HEADER = 8;
const MAX_WORDS = 0xffff_fffe; // slot value is word index + 1; 0 marks an empty slot
const MAX_LOAD = 0.85;
const GROWTH = 1.3;
const SEGMENTS = 256;
const BUFFER_BYTES = 1 << 20;

/** Logs still open, removed if the process exits without closing them (an error mid-plan). */
const openDirs = new Set<string>();
process.once("exit", () => {
  for (const dir of openDirs) fs.rmSync(dir, { recursive: true, force: true });
});

export class CompactSeenKeys {
  private readonly hashOf: KeyHash;
  /** Per segment: each slot's hash, and the word index of its key's log record plus one (0 = empty slot). */
  private readonly hashes: Uint32Array[] = [];
  private readonly places: Uint32Array[] = [];
  private readonly counts = new Array<number>(SEGMENTS).fill(0);
  private count = 0;
  private readonly dir: string;
  private readonly file: string;
  private readonly fd: number;
  /** Bytes already written to the file; the buffer holds what follows. */
  private flushed = 0;
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private filled = 0;
  private readonly scratch = Buffer.allocUnsafe(RECORD_HEADER);
  /** The empty slot firstLine() ended on, for the add() that usually follows; any other insert invalidates it. */
  private pending: { key: string; hash: number; segment: number; slot: number } | undefined;

  constructor(options: { hash?: KeyHash; initialCapacity?: number; tmpDir?: string } = {}) {
    this.hashOf = options.hash ?? fnv1a32;
    const capacity = Math.max(8, Math.ceil((options.initialCapacity ?? 1 << 16) / MAX_LOAD / SEGMENTS));
    for (let i = 0; i < SEGMENTS; i++) {
      this.hashes.push(new Uint32Array(capacity));
      this.places.push(new Uint32Array(capacity));
    }
    this.dir = fs.mkdtempSync(path.join(options.tmpDir ?? os.tmpdir(), "sendtime-seen-"));
    this.file = path.join(this.dir, "keys.log");
    this.fd = fs.openSync(this.file, "w+");
    openDirs.add(this.dir);
  }

  get size(): number {
    return this.count;
  }

  /** The line `key` was first seen on, or undefined when it has not been added. */
  firstLine(key: string): number | undefined {
    const hash = this.hashOf(key) >>> 0;
    const segment = hash >>> 24;
    const hashes = this.hashes[segment];
    const places = this.places[segment];
    const capacity = hashes.length;
    let slot = home(hash, capacity);
    for (;;) {
      const place = places[slot];
      if (place === 0) break;
      if (hashes[slot] === hash) {
        const first = this.lineIfSameKey(place - 1, key);
        if (first !== undefined) return first;
      }
      slot = slot + 1 === capacity ? 0 : slot + 1;
    }
    // Where add(key) will go if it comes next (the usual pattern: look up, then add).
    this.pending = { key, hash, segment, slot };
    return undefined;
  }

  /** Records `key` as first seen on `line`; the caller has checked that it is new (firstLine returned undefined). */
  add(key: string, line: number): void {
    const pending = this.pending;
    this.pending = undefined;
    if (!pending || pending.key !== key) {
      if (this.firstLine(key) !== undefined) throw new Error("add() of a key already present");
      return this.add(key, line);
    }
    const { segment, slot, hash } = pending;
    const word = this.append(key, line);
    this.hashes[segment][slot] = hash;
    this.places[segment][slot] = word + 1;
    this.count++;
    if (++this.counts[segment] > this.hashes[segment].length * MAX_LOAD) this.grow(segment);
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

  private append(key: string, line: number): number {
    const maxBytes = RECORD_HEADER + key.length * 3 + WORD;
    if (this.filled + maxBytes > this.buffer.length) {
      this.flush();
      if (maxBytes > this.buffer.length) this.buffer = Buffer.allocUnsafe(maxBytes);
    }
    const start = this.flushed + this.filled;
    if (start / WORD > MAX_WORDS) throw new Error(`key log above ${(MAX_WORDS * WORD) / 2 ** 30} GiB: too many or too long keys`);
    const length = writeUtf8(this.buffer, key, this.filled + RECORD_HEADER);
    this.buffer.writeUInt32LE(line >>> 0, this.filled);
    this.buffer.writeUInt32LE(length, this.filled + 4);
    this.filled += RECORD_HEADER + Math.ceil(length / WORD) * WORD;
    return start / WORD;
  }

  private flush(): void {
    let done = 0;
    while (done < this.filled) done += fs.writeSync(this.fd, this.buffer, done, this.filled - done, this.flushed + done);
    this.flushed += this.filled;
    this.filled = 0;
  }

  /** Reads the record at `word` and returns its line when its key equals `key`. */
  private lineIfSameKey(word: number, key: string): number | undefined {
    const offset = word * WORD;
    if (offset >= this.flushed) {
      const at = offset - this.flushed;
      const length = this.buffer.readUInt32LE(at + 4);
      return this.buffer.toString("utf8", at + RECORD_HEADER, at + RECORD_HEADER + length) === key
        ? this.buffer.readUInt32LE(at)
        : undefined;
    }
    this.readAt(this.scratch, offset);
    const length = this.scratch.readUInt32LE(4);
    // A key of another byte length cannot be equal: no need to read it.
    if (length !== Buffer.byteLength(key, "utf8")) return undefined;
    const bytes = Buffer.allocUnsafe(length);
    this.readAt(bytes, offset + RECORD_HEADER);
    return bytes.toString("utf8") === key ? this.scratch.readUInt32LE(0) : undefined;
  }

  private readAt(target: Buffer, position: number): void {
    let done = 0;
    while (done < target.length) {
      const n = fs.readSync(this.fd, target, done, target.length - done, position + done);
      if (n === 0) throw new Error(`key log ${this.file} ends early at byte ${position + done}`);
      done += n;
    }
  }

  /** A larger segment; entries move by their stored hash (the keys stay in the log). */
  private grow(segment: number): void {
    this.pending = undefined;
    const oldHashes = this.hashes[segment];
    const oldPlaces = this.places[segment];
    const capacity = Math.ceil(oldHashes.length * GROWTH);
    const hashes = new Uint32Array(capacity);
    const places = new Uint32Array(capacity);
    for (let i = 0; i < oldHashes.length; i++) {
      const place = oldPlaces[i];
      if (place === 0) continue;
      const hash = oldHashes[i];
      let slot = home(hash, capacity);
      while (places[slot] !== 0) slot = slot + 1 === capacity ? 0 : slot + 1;
      hashes[slot] = hash;
      places[slot] = place;
    }
    this.hashes[segment] = hashes;
    this.places[segment] = places;
  }
}

/** Buffer.write is slow for short strings; ids and addresses are nearly always ASCII, copied here byte by byte. */
function writeUtf8(buffer: Buffer, text: string, at: number): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return buffer.write(text, at, "utf8");
    buffer[at + i] = c;
  }
  return text.length;
}

/**
 * The slot a hash starts probing at in its segment: the low 24 bits (the top 8 chose the segment) multiply-shifted
 * onto [0, capacity), so capacities need not be powers of two.
 */
function home(hash: number, capacity: number): number {
  const slot = Math.floor(((hash & 0xffffff) / 16777216) * capacity);
  return slot < capacity ? slot : capacity - 1;
}

/** FNV-1a over UTF-16 code units with a final avalanche (murmur3's fmix32), so the high bits that pick the slot mix well. */
export function fnv1a32(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
