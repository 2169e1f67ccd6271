/** The CSV writers' two kinds of field, held against csv-parse on random values (fast-check). */
import * as assert from "assert";
import fc from "fast-check";
import { parse } from "csv-parse/sync";
import { csvField, reportField } from "../../../../scripts/lib/recipients/csv-fields";

/** Values made of the characters that matter (quotes, separators, line breaks, spaces, formula starts) and others. */
const value = fc.string({
  unit: fc.constantFrom("a", "é", "🎉", '"', ",", "\r", "\n", " ", "\t", "=", "+", "-", "@", "'", "1"),
  maxLength: 12,
});
/** The one field csv-parse reads back from a line of `field` between two others. */
const readBack = (field: string) => (parse(`x,${field},y\n`, { relax_column_count: false }) as string[][])[0][1];
const FORMULA_START = ["=", "+", "-", "@", "\t", "\r"];

describe("csv-fields: exact fields and report fields", () => {
  it("csvField: csv-parse reads every value back exactly (recipients.csv)", () => {
    fc.assert(
      fc.property(value, (v) => readBack(csvField(v)) === v),
      { numRuns: 300 },
    );
  });

  it("reportField: a value starting with = + - @ tab or CR reads back after a ', any other exactly", () => {
    fc.assert(
      fc.property(value, (v) => {
        const got = readBack(reportField(v));
        const guarded = FORMULA_START.some((c) => v.startsWith(c));
        assert.strictEqual(got, guarded ? `'${v}` : v, JSON.stringify(v));
        assert.ok(!FORMULA_START.some((c) => got.startsWith(c)), `${JSON.stringify(got)} starts a formula`);
      }),
      { numRuns: 300 },
    );
  });

  it("a guarded value is written inside quotes, as OWASP advises", () => {
    assert.strictEqual(reportField('=HYPERLINK("http://x")'), `"'=HYPERLINK(""http://x"")"`);
    assert.strictEqual(reportField("-2"), `"'-2"`);
    assert.strictEqual(reportField("plain"), "plain");
  });
});
