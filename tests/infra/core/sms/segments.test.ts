/**
 * Segments: hand-counted examples (the counts worked out in the comments), and every text of a random sample against
 * a second count written here a different way (the GSM-7 text encoded to its septets, with the escape 0x1B as its own
 * septet, then cut into parts by index; UCS-2 cut by UTF-16 index and moved back one unit when it would split a pair).
 */
import { strict as assert } from "assert";
import fc from "fast-check";
import { countSegments, GSM7_BASIC, GSM7_EXTENSION, isGsm7 } from "../../../../infra/core/sms/segments";

const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 0) || 300;

/** The second count: the number of parts and where each begins, by index into the encoded form. */
function reference(text: string): { encoding: string; units: number; segments: number } {
  const gsm = [...text].every((ch) => GSM7_BASIC.includes(ch) || GSM7_EXTENSION.includes(ch));
  if (gsm) {
    // Each extension character is the escape septet and the character's own septet: "E" then "x".
    const septets: string[] = [];
    for (const ch of text) {
      if (GSM7_EXTENSION.includes(ch)) septets.push("E", "x");
      else septets.push("b");
    }
    if (septets.length === 0) return { encoding: "GSM-7", units: 0, segments: 0 };
    if (septets.length <= 160) return { encoding: "GSM-7", units: septets.length, segments: 1 };
    let parts = 0;
    for (let i = 0; i < septets.length; parts++) {
      let end = Math.min(i + 153, septets.length);
      if (septets[end - 1] === "E") end -= 1; // an escape never ends a part
      i = end;
    }
    return { encoding: "GSM-7", units: septets.length, segments: parts };
  }
  const n = text.length;
  if (n <= 70) return { encoding: "UCS-2", units: n, segments: 1 };
  let parts = 0;
  for (let i = 0; i < n; parts++) {
    let end = Math.min(i + 67, n);
    const last = text.charCodeAt(end - 1);
    if (end < n && last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate stays with its low one
    i = end;
  }
  return { encoding: "UCS-2", units: n, segments: parts };
}

describe("SMS segments", () => {
  it("counts hand-worked GSM-7 texts: 160 in one, 153 per part, an extension character as two", () => {
    assert.deepEqual(countSegments(""), { encoding: "GSM-7", units: 0, segments: 0, parts: [] });
    assert.equal(countSegments("a".repeat(160)).segments, 1);
    // 161 septets: two parts, 153 + 8.
    const two = countSegments("a".repeat(161));
    assert.equal(two.segments, 2);
    assert.deepEqual(
      two.parts.map((p) => p.length),
      [153, 8],
    );
    // 306 = 2 × 153 septets: two parts; 307: three.
    assert.equal(countSegments("a".repeat(306)).segments, 2);
    assert.equal(countSegments("a".repeat(307)).segments, 3);
    // 80 euro signs: 160 septets, one message; 81: 162 septets, two parts (76 € = 152 septets, then 5 €).
    assert.deepEqual(countSegments("€".repeat(80)).units, 160);
    assert.equal(countSegments("€".repeat(80)).segments, 1);
    const euros = countSegments("€".repeat(81));
    assert.deepEqual(
      euros.parts.map((p) => p.length),
      [76, 5],
    );
    // 159 letters and a "{": 161 septets; parts of 153 letters, then 6 letters and the brace (8 septets).
    const brace = countSegments("a".repeat(159) + "{");
    assert.equal(brace.units, 161);
    assert.deepEqual(
      brace.parts.map((p) => [...p].length),
      [153, 7],
    );
    // 152 letters, a "{" (septets 153 and 154) and 10 more: the brace starts the second part, whole.
    const edge = countSegments("a".repeat(152) + "{" + "a".repeat(10));
    assert.deepEqual(edge.parts[0], "a".repeat(152));
    assert.equal(edge.parts[1][0], "{");
  });

  it("takes the default alphabet's letters (é, ñ, Ø, Δ) as GSM-7 and anything else (ç, á, ’, emoji) as UCS-2", () => {
    assert.ok(isGsm7("Café Ñandù ØΔ @£$¥ [~] {^} \\|€\f"));
    for (const text of ["façade", "más", "it’s", "🎉"]) assert.ok(!isGsm7(text), text);
    assert.ok(isGsm7("Ç")); // capital C cedilla is in the default alphabet; small ç is not
    assert.equal(countSegments("Your code is 123456").encoding, "GSM-7");
  });

  it("counts hand-worked UCS-2 texts: 70 code units in one, 67 per part, a surrogate pair never split", () => {
    assert.equal(countSegments("á".repeat(70)).segments, 1);
    assert.equal(countSegments("á".repeat(71)).segments, 2);
    assert.equal(countSegments("á".repeat(134)).segments, 2);
    assert.equal(countSegments("á".repeat(135)).segments, 3);
    // 35 emoji: 70 code units, one message; 36: 72 units, parts of 33 emoji (66 units: the 34th would make 68) and 3.
    assert.equal(countSegments("🎉".repeat(35)).segments, 1);
    const party = countSegments("🎉".repeat(36));
    assert.equal(party.units, 72);
    assert.deepEqual(
      party.parts.map((p) => p.length),
      [66, 6],
    );
    // 66 letters then an emoji: 68 units; the emoji cannot end the first part at unit 67.
    const split = countSegments("á" + "a".repeat(65) + "🎉" + "b".repeat(10));
    assert.deepEqual(
      split.parts.map((p) => p.length),
      [66, 12],
    );
  });

  it("agrees with a second count on random texts, and its parts join to the text", () => {
    const gsmChar = fc.constantFrom(...GSM7_BASIC, ...GSM7_EXTENSION);
    const anyChar = fc.oneof(gsmChar, fc.constantFrom("á", "ç", "’", "🎉", "😀", "中", "\u{1F600}"));
    const text = fc.oneof(
      fc.array(gsmChar, { maxLength: 480 }).map((a) => a.join("")),
      fc.array(anyChar, { maxLength: 240 }).map((a) => a.join("")),
      fc.string({ unit: "grapheme", maxLength: 200 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        const got = countSegments(t);
        const want = reference(t);
        assert.deepEqual({ encoding: got.encoding, units: got.units, segments: got.segments }, want);
        assert.equal(got.parts.join(""), t);
        for (const p of got.parts) {
          const size =
            got.encoding === "UCS-2"
              ? p.length
              : [...p].reduce((n, ch) => n + (GSM7_EXTENSION.includes(ch) ? 2 : 1), 0);
          assert.ok(
            size <= (got.segments === 1 ? (got.encoding === "UCS-2" ? 70 : 160) : got.encoding === "UCS-2" ? 67 : 153),
          );
          assert.ok(!/[\uD800-\uDBFF]$/.test(p) && !/^[\uDC00-\uDFFF]/.test(p), "a surrogate pair split");
        }
      }),
      { numRuns: RUNS },
    );
  });
});
