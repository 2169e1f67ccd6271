/**
 * A/B variants and a holdout group (Pinpoint's treatments and HoldoutPercent), assigned so that anyone can recompute
 * who got what from the campaign id and the recipient id alone:
 *
 *   b = uint64(first 8 bytes of sha256(utf8(campaign + ":" + id)), big-endian) mod 10000
 *
 * Variants take consecutive ranges of basis points (percent × 100) in the order given, starting at 0; the holdout
 * takes the last range. With a holdout and no variants, everyone outside the holdout gets the campaign as is.
 * Pure: no AWS, no I/O.
 */
import { hash } from "crypto";

export const BASIS_POINTS = 10_000;
export const VARIANT_NAME = /^[A-Za-z0-9_-]{1,32}$/;
export const MIN_VARIANTS = 2;
export const MAX_VARIANTS = 8;
/** What `{variant}` in a template name is replaced with. */
export const VARIANT_PLACEHOLDER = "{variant}";

export interface Variant {
  name: string;
  basisPoints: number;
  /** Replaces the campaign template for step 1. */
  template?: string;
}

export interface Audience {
  /** Empty, or 2–8 variants. */
  variants: Variant[];
  /** 0 when there is no holdout. Variants + holdout = 10,000 when there are variants. */
  holdoutBasisPoints: number;
}

/** The recipient's bucket, 0–9,999. */
export function audienceBucket(campaignId: string, recipientId: string): number {
  if (oneBlockMessage(campaignId, recipientId)) {
    sha256Block();
    return bucketOf(STATE[0] >>> 0, STATE[1] >>> 0);
  }
  const digest = hash("sha256", `${campaignId}:${recipientId}`, "buffer");
  return bucketOf(digest.readUInt32BE(0), digest.readUInt32BE(4));
}

/** (high × 2^32 + low) mod 10,000 in exact double arithmetic: 2^32 mod 10,000 = 7,296. */
const bucketOf = (high: number, low: number) => ((high % BASIS_POINTS) * 7_296 + low) % BASIS_POINTS;

// SHA-256 of a message of at most 55 UTF-8 bytes (one 64-byte block; campaign and recipient ids almost always fit)
// in plain code, without a buffer per row: crypto's per-call setup costs more than the hashing (see
// docs/benchmarks.md). Longer messages go through crypto.hash; a test holds the two to the same results.
const BLOCK = Buffer.alloc(64);
const WORDS = new Int32Array(64);
const STATE = new Int32Array(8);
/** SHA-256's round constants. */
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const H = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

/** The campaign whose `campaign:` bytes are at the start of BLOCK (every row of a run has the same), and their length. */
let prefixOf: string | undefined;
let prefixLength = 0;

/** `campaign:id` as UTF-8 in BLOCK, padded as SHA-256's single last block; false when it needs two blocks. */
function oneBlockMessage(campaignId: string, recipientId: string): boolean {
  if (campaignId !== prefixOf) {
    prefixOf = undefined;
    // A write that returns at most 55 bytes was not cut short: the next character would have had room.
    const n = BLOCK.write(campaignId, 0);
    if (n > 54) return false;
    BLOCK[n] = 0x3a;
    prefixLength = n + 1;
    prefixOf = campaignId;
  }
  let n = prefixLength;
  // An ASCII id is its own bytes (most ids); anything else is encoded by Buffer.
  const length = recipientId.length;
  let ascii = n + length <= 55;
  for (let i = 0; ascii && i < length; i++) {
    const c = recipientId.charCodeAt(i);
    if (c < 0x80) BLOCK[n++] = c;
    else ascii = false;
  }
  if (!ascii) {
    n = prefixLength + BLOCK.write(recipientId, prefixLength);
    if (n > 55) return false;
  }
  BLOCK[n] = 0x80;
  for (let i = n + 1; i < 62; i++) BLOCK[i] = 0;
  // The length in bits, big-endian in the last 8 bytes: at most 440, so two bytes.
  BLOCK[62] = (n * 8) >>> 8;
  BLOCK[63] = (n * 8) & 0xff;
  return true;
}

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** STATE = the SHA-256 state after the initial state and BLOCK. Every sum is cut to 32 bits (`| 0`): int32 arithmetic. */
function sha256Block(): void {
  const w = WORDS;
  const m = BLOCK;
  for (let i = 0; i < 16; i++) w[i] = (m[4 * i] << 24) | (m[4 * i + 1] << 16) | (m[4 * i + 2] << 8) | m[4 * i + 3];
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15];
    const b = w[i - 2];
    w[i] =
      ((rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)) + w[i - 16] + (rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10)) + w[i - 7]) | 0;
  }
  let a = H[0];
  let b = H[1];
  let c = H[2];
  let d = H[3];
  let e = H[4];
  let f = H[5];
  let g = H[6];
  let h = H[7];
  for (let i = 0; i < 64; i++) {
    // Ch(e, f, g) = g ^ (e & (f ^ g)); Maj(a, b, c) = (a & b) | (c & (a | b)): the same bits, fewer operations.
    const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (g ^ (e & (f ^ g))) + K[i] + w[i]) | 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) | (c & (a | b)))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  STATE[0] = H[0] + a;
  STATE[1] = H[1] + b;
}

/** Index into `audience.variants`, `HOLDOUT`, or `NO_VARIANT` (no variants, not held out). */
export const HOLDOUT = -1;
export const NO_VARIANT = -2;

/** Assigns buckets to variants or the holdout; the range boundaries are computed once. */
export class AudienceSplit {
  private readonly upperBounds: number[];
  private readonly holdoutFrom: number;

  constructor(
    readonly campaignId: string,
    readonly audience: Audience,
  ) {
    let acc = 0;
    this.upperBounds = audience.variants.map((v) => (acc += v.basisPoints));
    this.holdoutFrom = BASIS_POINTS - audience.holdoutBasisPoints;
  }

  get active(): boolean {
    return this.audience.variants.length > 0 || this.audience.holdoutBasisPoints > 0;
  }

  /** Variant index, HOLDOUT or NO_VARIANT for a bucket. */
  groupOf(bucket: number): number {
    if (bucket >= this.holdoutFrom) return HOLDOUT;
    for (let i = 0; i < this.upperBounds.length; i++) if (bucket < this.upperBounds[i]) return i;
    return NO_VARIANT;
  }

  groupOfRecipient(recipientId: string): number {
    return this.active ? this.groupOf(audienceBucket(this.campaignId, recipientId)) : NO_VARIANT;
  }
}

/**
 * The template of each step for each group: `templates[step][variant index]`, and `[step][variants.length]` for
 * recipients without a variant. `stepTemplates[0]` is the campaign's template: a variant's own TEMPLATE replaces it
 * for step 1. `{variant}` in any of them becomes the variant's name.
 */
export function templatesByVariant(audience: Audience, stepTemplates: string[]): string[][] {
  return stepTemplates.map((own, k) => [
    ...audience.variants.map((v) => (k === 0 ? (v.template ?? own) : own).split(VARIANT_PLACEHOLDER).join(v.name)),
    own,
  ]);
}
