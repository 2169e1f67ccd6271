import * as assert from "assert";
import fc from "fast-check";
import { erfc, twoProportionZTest } from "../../../../scripts/lib/report/comparisons";

/** Relative closeness: p-values span many orders of magnitude. */
const close = (actual: number | null, expected: number, rel = 1e-6) =>
  assert.ok(actual !== null && Math.abs(actual - expected) <= rel * Math.abs(expected), `${actual} ≉ ${expected}`);

describe("two-proportion z-test (expected values from python3 math.erfc, pooled standard error)", () => {
  // python3: p=(x1+x2)/(n1+n2); se=sqrt(p*(1-p)*(1/n1+1/n2)); z=(x1/n1-x2/n2)/se; math.erfc(abs(z)/sqrt(2))
  const CASES: [x1: number, n1: number, x2: number, n2: number, lift: number, p: number][] = [
    [10470, 21874, 9225, 22095, 0.14642620596453734, 5.175919494976827e-38],
    [1804, 21874, 1395, 22095, 0.3062554749046592, 5.951781933245119e-15],
    [25, 40, 30, 58, 0.20833333333333326, 0.2907132030880032],
    [12, 40, 9, 58, 0.9333333333333332, 0.08591921409767542],
    [52, 1000, 45, 1000, 0.15555555555555556, 0.46622727498779576],
    [130, 1000, 100, 1000, 0.3, 0.03548845046647473],
    [0, 500, 3, 500, -1, 0.08280197671798487],
  ];
  for (const [x1, n1, x2, n2, lift, p] of CASES)
    it(`${x1}/${n1} against ${x2}/${n2}: lift ${lift.toFixed(4)}, p ${p.toExponential(3)}`, () => {
      const t = twoProportionZTest({ x: x1, n: n1 }, { x: x2, n: n2 });
      assert.strictEqual(t.rate, x1 / n1);
      assert.strictEqual(t.againstRate, x2 / n2);
      close(t.lift, lift, 1e-12);
      close(t.pValue, p);
      assert.strictEqual(t.significant, p < 0.05);
    });

  it("no base, equal extremes, counts above their base: no p-value or p = 1, never significant", () => {
    assert.deepStrictEqual(twoProportionZTest({ x: 0, n: 0 }, { x: 3, n: 10 }), {
      rate: null,
      againstRate: 0.3,
      lift: null,
      pValue: null,
      significant: false,
    });
    assert.strictEqual(twoProportionZTest({ x: 0, n: 10 }, { x: 0, n: 20 }).pValue, 1);
    assert.strictEqual(twoProportionZTest({ x: 10, n: 10 }, { x: 20, n: 20 }).pValue, 1);
    // Equal rates of different sizes: z = 0, p = erfc(0) = 1 exactly (the approximation alone gives 1.00000003).
    assert.strictEqual(twoProportionZTest({ x: 4, n: 10 }, { x: 2, n: 5 }).pValue, 1);
    // opens are events: 12 opens of 10 deliveries is not a proportion
    const t = twoProportionZTest({ x: 12, n: 10 }, { x: 3, n: 10 });
    assert.deepStrictEqual([t.pValue, t.significant, t.rate], [null, false, 1.2]);
    assert.strictEqual(twoProportionZTest({ x: 3, n: 10 }, { x: 0, n: 10 }).lift, null);
  });

  it("erfc against python3 math.erfc", () => {
    // python3 -c 'import math; print([math.erfc(x) for x in (-2, -0.5, 0, 0.1, 1, 2.5, 6)])'
    const expected = [
      1.9953222650189528, 1.5204998778130465, 1.0, 0.8875370839817152, 0.15729920705028513, 0.0004069520174449589,
      2.1519736712498916e-17,
    ];
    [-2, -0.5, 0, 0.1, 1, 2.5, 6].forEach((x, i) => close(erfc(x), expected[i], 2e-7));
  });

  it("property: the p-value is in [0, 1] and the same with the two sides swapped; the lift's sign is the rates' order", () => {
    const side = fc
      .integer({ min: 1, max: 100_000 })
      .chain((n) => fc.record({ n: fc.constant(n), x: fc.integer({ min: 0, max: n }) }));
    fc.assert(
      fc.property(side, side, (a, b) => {
        const ab = twoProportionZTest(a, b);
        const ba = twoProportionZTest(b, a);
        assert.ok(ab.pValue! >= 0 && ab.pValue! <= 1);
        assert.ok(Math.abs(ab.pValue! - ba.pValue!) <= 1e-12);
        if (ab.lift !== null) assert.strictEqual(Math.sign(ab.lift), Math.sign(a.x / a.n - b.x / b.n));
      }),
      { numRuns: 300 },
    );
  });
});
