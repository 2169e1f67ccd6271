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
  const digest = hash("sha256", `${campaignId}:${recipientId}`, "buffer");
  // (high × 2^32 + low) mod 10,000 in exact double arithmetic: 2^32 mod 10,000 = 7,296.
  return ((digest.readUInt32BE(0) % BASIS_POINTS) * 7_296 + digest.readUInt32BE(4)) % BASIS_POINTS;
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
