/**
 * A set of strings kept as 64-bit hashes in one open-addressing table of Uint32 pairs: 8 bytes a slot, at most half
 * full, so 1,000,000 ids take 16–32 MB instead of the ~100 MB of a Set<string> (each string is a heap object).
 *
 * The price is a false "already seen" when two different ids share all 64 bits: with n ids the odds of any such pair
 * are about n² / 2^65 (1 in 37 million for 1,000,000 ids). Callers report a hit as a duplicate with its id, so such a
 * collision would show up by name in their skipped file, never as a second send.
 */
export class HashedIdSet {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private count = 0;

  constructor(initialSlots = 1 << 16) {
    this.hi = new Uint32Array(initialSlots);
    this.lo = new Uint32Array(initialSlots);
  }

  get size(): number {
    return this.count;
  }

  /** Adds `id`; returns false when it (or an id with the same 64-bit hash) was already there. */
  add(id: string): boolean {
    const [h, l] = hash64(id);
    if (this.count * 2 >= this.hi.length) this.grow();
    if (!insert(this.hi, this.lo, h, l)) return false;
    this.count++;
    return true;
  }

  private grow() {
    const hi = new Uint32Array(this.hi.length * 2);
    const lo = new Uint32Array(this.lo.length * 2);
    for (let i = 0; i < this.hi.length; i++) if (this.hi[i] !== 0 || this.lo[i] !== 0) insert(hi, lo, this.hi[i], this.lo[i]);
    this.hi = hi;
    this.lo = lo;
  }
}

/** Linear probing; (0, 0) marks an empty slot, so a hash of (0, 0) is stored as (0, 1). */
function insert(hi: Uint32Array, lo: Uint32Array, h: number, l: number): boolean {
  if (h === 0 && l === 0) l = 1;
  const mask = hi.length - 1;
  for (let i = (l ^ h) & mask; ; i = (i + 1) & mask) {
    if (hi[i] === 0 && lo[i] === 0) {
      hi[i] = h;
      lo[i] = l;
      return true;
    }
    if (hi[i] === h && lo[i] === l) return false;
  }
}

/** Two independent 32-bit hashes of the UTF-16 code units (FNV-1a and a murmur3-style mix), finalised with fmix32. */
export function hash64(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    let k = Math.imul(c, 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    b ^= k;
    b = Math.imul((b << 13) | (b >>> 19), 5) + 0xe6546b64;
  }
  return [fmix32(a) >>> 0, fmix32(b) >>> 0];
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
