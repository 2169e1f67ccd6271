/**
 * digit-patterns.ts's verdicts on blocks of numbers equal JavaScript's own regular expressions tried on every number
 * of the block, for every pattern libphonenumber-js's min metadata has (national number, types, leading digits,
 * national prefix for parsing), on blocks where the pattern is still alive.
 */
import { strict as assert } from "assert";
import metadata from "libphonenumber-js/min/metadata";
import { DigitPattern, UnsupportedPattern, type Verdict } from "../../../../infra/core/zones/digit-patterns";

type Plan = (string | number | unknown[] | undefined)[];
const json = metadata as unknown as { countries: Record<string, Plan>; nonGeographic: Record<string, Plan> };
const plans = [...Object.values(json.countries), ...Object.values(json.nonGeographic)];
/**
 * Whole-matched patterns (national number, types) with their possible lengths, and prefix-matched ones (leading
 * digits, national prefixes for parsing).
 */
const whole = new Map<string, number[]>();
const prefixed = new Set<string>();
for (const plan of plans) {
  whole.set(plan[2] as string, plan[3] as number[]);
  for (const type of (plan[11] as [string, number[]?][] | 0 | undefined) || [])
    if (type?.[0]) whole.set(type[0], type[1] ?? (plan[3] as number[]));
  for (const i of [7, 10]) if (typeof plan[i] === "string" && plan[i]) prefixed.add(plan[i] as string);
}

let seed = 7;
const random = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * n);

/** Digits read by the pattern's automaton without dying, where it can (so blocks are often "mixed"). */
function livePrefix(p: DigitPattern, length: number): string {
  let out = "";
  let state = p.start;
  for (let i = 0; i < length; i++) {
    const alive = [...Array(10).keys()].filter((d) => p.step(state, d) >= 0);
    const d = alive.length > 0 ? alive[random(alive.length)] : random(10);
    out += d;
    state = p.step(state, d);
  }
  return out;
}

function bruteForce(test: (s: string) => boolean, prefix: string, left: number): Verdict {
  let some = false;
  let every = true;
  for (let i = 0; i < 10 ** left; i++) {
    const hit = test(left === 0 ? prefix : prefix + String(i).padStart(left, "0"));
    some ||= hit;
    every &&= hit;
  }
  return every ? "all" : some ? "mixed" : "none";
}

describe("digit patterns: verdicts on blocks of numbers", function () {
  this.timeout(20_000);

  it("match whole as ^(?:p)$ does, on every number of each block", () => {
    const seen = { all: 0, none: 0, mixed: 0 };
    for (const [pattern, lengths] of whole) {
      const p = new DigitPattern(pattern);
      const regex = new RegExp(`^(?:${pattern})$`);
      for (let i = 0; i < 3; i++) {
        // Numbers of a possible length (or one more), the last 1 to 3 digits left open.
        const length = lengths[random(lengths.length)] + random(2);
        const left = Math.min(length, 1 + random(3));
        const prefix = livePrefix(p, length - left);
        const verdict = p.whole(p.walk(prefix), left);
        assert.equal(
          verdict,
          bruteForce((s) => regex.test(s), prefix, left),
          `${pattern} ${prefix}+${left}`,
        );
        seen[verdict]++;
      }
    }
    assert.ok(seen.all > 50 && seen.none > 50, JSON.stringify(seen));
  });

  it("leads to a match and a miss in a block it calls mixed, and agrees with random numbers of the others", () => {
    const seen = { all: 0, none: 0, mixed: 0 };
    for (const [pattern, lengths] of whole) {
      const p = new DigitPattern(pattern);
      const regex = new RegExp(`^(?:${pattern})$`);
      const length = lengths[random(lengths.length)];
      const prefix = livePrefix(p, random(3));
      const left = length - prefix.length;
      const verdict = p.whole(p.walk(prefix), left);
      seen[verdict]++;
      // For a block not all missed, a match the automaton leads to; for one not all matched, a miss; each checked by
      // JavaScript. And random numbers of the block agree with "all" and "none".
      const witness = (wanted: Verdict) => {
        let out = prefix;
        for (let state = p.walk(prefix), i = 0; i < left; i++) {
          const d = [...Array(10).keys()].find((x) => p.whole(p.step(state, x), left - i - 1) !== wanted) ?? 0;
          ((out += d), (state = p.step(state, d)));
        }
        return out;
      };
      if (verdict !== "none") assert.ok(regex.test(witness("none")), `${pattern}: ${witness("none")}`);
      if (verdict !== "all") assert.ok(!regex.test(witness("all")), `${pattern}: ${witness("all")}`);
      for (let i = 0; i < 20 && verdict !== "mixed"; i++) {
        const number = prefix + Array.from({ length: left }, () => random(10)).join("");
        assert.equal(regex.test(number), verdict === "all", `${pattern}: ${number}`);
      }
    }
    assert.ok(seen.mixed > 100, JSON.stringify(seen));
  });

  it("match a prefix as ^(?:p) (exec) and search(p) === 0 do, `$` included", () => {
    const seen = { all: 0, none: 0, mixed: 0 };
    for (const pattern of prefixed) {
      const p = new DigitPattern(pattern);
      const anchored = new RegExp(`^(?:${pattern})`);
      const unanchored = new RegExp(pattern);
      for (let i = 0; i < 12; i++) {
        const left = random(4);
        const prefix = livePrefix(p, random(9));
        const verdict = p.prefixAfter(prefix, left);
        assert.equal(
          verdict,
          bruteForce((s) => anchored.test(s), prefix, left),
          `${pattern} ${prefix}+${left}`,
        );
        assert.equal(
          verdict,
          bruteForce((s) => s.search(unanchored) === 0, prefix, left),
          pattern,
        );
        seen[verdict]++;
      }
    }
    assert.ok(seen.all > 20 && seen.none > 20 && seen.mixed > 20, JSON.stringify(seen));
    // `$`: "([457]\d{6})$|1" matches 7 digits starting 4, 5 or 7 only when they end the number.
    const p = new DigitPattern("([457]\\d{6})$|1");
    assert.equal(p.prefixAfter("4", 6), "all");
    assert.equal(p.prefixAfter("4", 7), "none");
    assert.equal(p.prefixAfter("1", 9), "all");
  });

  it("refuses syntax beyond the subset the metadata uses", () => {
    for (const pattern of ["\\d+", "1*", "[^1]", "(?=1)", "\\d{2,}", "a", "1|(2", "[1-]"])
      assert.throws(() => new DigitPattern(pattern), UnsupportedPattern, pattern);
  });
});
