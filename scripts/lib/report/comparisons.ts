/**
 * Which variant won: each variant's rate against a reference (the first variant, or the holdout), with the relative
 * lift and a two-sided two-proportion z-test (pooled standard error) at 95%. Pure arithmetic, no AWS SDK.
 *
 * The test assumes independent trials: each of `n` recipients converts or not. SES opens and clicks are events, not
 * people (one recipient opening twice counts twice), so for them it is an approximation; a count above its base is
 * not a proportion at all and gets no p-value.
 */

/** The significance level of every comparison (two-sided). */
export const SIGNIFICANCE_LEVEL = 0.05;

export interface Proportion {
  /** Successes: opens, clicks, conversions. */
  x: number;
  /** Trials: deliveries, recipients. */
  n: number;
}

export interface ZTest {
  rate: number | null;
  againstRate: number | null;
  /** (rate − againstRate) ÷ againstRate; null when either rate is unknown or the reference is 0. */
  lift: number | null;
  /** Two-sided; null when a rate is unknown or a count exceeds its base (not a proportion). */
  pValue: number | null;
  significant: boolean;
}

export function twoProportionZTest(a: Proportion, ref: Proportion): ZTest {
  const rate = a.n > 0 ? a.x / a.n : null;
  const againstRate = ref.n > 0 ? ref.x / ref.n : null;
  const lift = rate !== null && againstRate !== null && againstRate > 0 ? (rate - againstRate) / againstRate : null;
  if (rate === null || againstRate === null || a.x > a.n || ref.x > ref.n)
    return { rate, againstRate, lift, pValue: null, significant: false };
  const pooled = (a.x + ref.x) / (a.n + ref.n);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / ref.n));
  // Both 0% or both 100%: no difference to test.
  // At most 1: erfc's approximation is off by up to 1.2e-7, and erfc(0) reads 1.00000003.
  const pValue = se === 0 ? 1 : Math.min(1, erfc(Math.abs(rate - againstRate) / se / Math.SQRT2));
  return { rate, againstRate, lift, pValue, significant: pValue < SIGNIFICANCE_LEVEL };
}

/**
 * The complementary error function, fractional error below 1.2e-7 everywhere (Numerical Recipes' erfcc, a
 * Chebyshev fit): enough for a p-value, including very small ones.
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}
