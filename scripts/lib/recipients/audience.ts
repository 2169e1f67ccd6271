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
import { SHA256_IV, sha256Compress } from "../../../infra/core/crypto/sha256";

export const BASIS_POINTS = 10_000;
export const VARIANT_NAME = /^[A-Za-z0-9_-]{1,32}$/;
/**
 * What two variant names must differ in: more than case (`A` and `a` would give schedule names, tags and report rows
 * that differ only in case, as ids that differ only so are told apart and noted, never silently).
 */
export const variantKey = (name: string): string => name.toLowerCase();
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
// with sha256.ts's compression, without a buffer per row: crypto's per-call setup costs more than the hashing (see
// docs/benchmarks.md). Longer messages go through crypto.hash; a test holds the two to the same results.
const BLOCK = Buffer.alloc(64);
const STATE = new Int32Array(8);
// Read once: the CLI's transpiler (esbuild, CommonJS) makes each use of an import a getter call.
const compress = sha256Compress;

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

/** STATE = the SHA-256 state after the initial state and BLOCK. */
function sha256Block(): void {
  STATE.set(SHA256_IV);
  compress(STATE, BLOCK, 0);
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
