import * as assert from "assert";
import {
  audienceFromFlags,
  baseRuleFromFlags,
  checkTemplates,
  quietTimeFromFlags,
} from "../../../../scripts/lib/cli/timing-flags";
import { UsageError } from "../../../../infra/core/errors";

/** Asserts a one-line UsageError whose message matches. */
function rejects(fn: () => unknown, message: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof UsageError, String(e));
    assert.ok(!e.message.includes("\n"), e.message);
    assert.match(e.message, message);
    return true;
  });
}

describe("timing and audience flags", () => {
  it("exactly one base rule", () => {
    assert.deepStrictEqual(baseRuleFromFlags({ date: "2026-12-01", hour: "9" }), {
      kind: "date",
      date: { year: 2026, month: 12, day: 1 },
      hour: 9,
      minute: 0,
    });
    assert.deepStrictEqual(baseRuleFromFlags({ after: "last_login:+30d", hour: "10", minute: "15" }), {
      kind: "after",
      column: "last_login",
      days: 30,
      hour: 10,
      minute: 15,
    });
    assert.deepStrictEqual(baseRuleFromFlags({ after: "cart_abandoned_at:+2h" }), {
      kind: "after",
      column: "cart_abandoned_at",
      hours: 2,
    });
    assert.deepStrictEqual(baseRuleFromFlags({ at: "2026-11-26T09:00-05:00" }), {
      kind: "at",
      utcMs: Date.parse("2026-11-26T14:00:00Z"),
    });
    rejects(
      () => baseRuleFromFlags({}),
      /^give one send-time rule: --date YYYY-MM-DD --hour H, --after COLUMN:\+Nd\|\+Nh, --at INSTANT, or --every … --until YYYY-MM-DD --hour H$/,
    );
    rejects(
      () => baseRuleFromFlags({ date: "2026-12-01", hour: "9", at: "2026-11-26T14:00Z" }),
      /^--date and --at are two send-time rules/,
    );
    rejects(
      () => baseRuleFromFlags({ after: "last_login:+30d", at: "2026-11-26T14:00Z" }),
      /^--after and --at are two send-time rules/,
    );
  });

  it("bad base-rule flags name the flag and what is allowed", () => {
    rejects(() => baseRuleFromFlags({ date: "2026-02-30", hour: "9" }), /^--date 2026-02-30: no such date$/);
    rejects(() => baseRuleFromFlags({ date: "1 Dec", hour: "9" }), /^--date 1 Dec: expected YYYY-MM-DD$/);
    rejects(() => baseRuleFromFlags({ date: "2026-12-01" }), /^--date 2026-12-01 needs --hour H/);
    rejects(
      () => baseRuleFromFlags({ date: "2026-12-01", hour: "24" }),
      /^--hour 24: must be a whole number from 0 to 23$/,
    );
    rejects(() => baseRuleFromFlags({ after: "last_login:+30d" }), /^--after last_login:\+30d needs --hour H/);
    rejects(
      () => baseRuleFromFlags({ after: "last_login:30d", hour: "9" }),
      /^--after last_login:30d: expected COLUMN:\+Nd/,
    );
    rejects(() => baseRuleFromFlags({ after: "cart:+2h", hour: "9" }), /^--hour does not apply to --after cart:\+2h/);
    rejects(() => baseRuleFromFlags({ at: "2026-11-26T14:00", minute: "5" }), /^--minute does not apply to --at/);
    rejects(
      () => baseRuleFromFlags({ at: "2026-11-26T14:00" }),
      /^--at 2026-11-26T14:00: expected an ISO 8601 instant with Z or an offset, .* \(a time without an offset is ambiguous\)$/,
    );
  });

  it("quiet time", () => {
    assert.strictEqual(quietTimeFromFlags({}), undefined);
    assert.deepStrictEqual(quietTimeFromFlags({ "quiet-hours": "21:00-08:00" }), {
      hours: { start: 1260, end: 480 },
      days: [],
      policy: "delay",
    });
    assert.deepStrictEqual(quietTimeFromFlags({ "quiet-days": "sun,SAT", quiet: "skip" }), {
      hours: undefined,
      days: [0, 6],
      policy: "skip",
    });
    rejects(
      () => quietTimeFromFlags({ "quiet-hours": "08:00-08:00" }),
      /^--quiet-hours 08:00-08:00: start and end are the same; quiet whole days are --quiet-days$/,
    );
    rejects(() => quietTimeFromFlags({ "quiet-hours": "9pm-8am" }), /^--quiet-hours 9pm-8am: expected HH:MM-HH:MM/);
    rejects(() => quietTimeFromFlags({ "quiet-hours": "21:00-24:00" }), /expected HH:MM-HH:MM/);
    rejects(
      () => quietTimeFromFlags({ "quiet-days": "SAT,FUN" }),
      /^--quiet-days SAT,FUN: unknown day "FUN"; days are MON,TUE,WED,THU,FRI,SAT,SUN$/,
    );
    rejects(() => quietTimeFromFlags({ "quiet-days": "MON,TUE,WED,THU,FRI,SAT,SUN" }), /every day is quiet/);
    rejects(() => quietTimeFromFlags({ quiet: "skip" }), /^--quiet skip needs --quiet-hours or --quiet-days$/);
    rejects(
      () => quietTimeFromFlags({ "quiet-hours": "21:00-08:00", quiet: "later" }),
      /^--quiet later: one of delay, skip$/,
    );
  });

  it("variants and holdout: 2-8 variants, percents with at most 2 decimals summing to 100", () => {
    assert.deepStrictEqual(audienceFromFlags({ variant: ["A:45", "B:45:bf-long"], holdout: "10" }), {
      variants: [
        { name: "A", basisPoints: 4500 },
        { name: "B", basisPoints: 4500, template: "bf-long" },
      ],
      holdoutBasisPoints: 1000,
    });
    assert.deepStrictEqual(
      audienceFromFlags({ variant: ["A:33.33", "B:33.33", "C:33.34"] }).variants.map((v) => v.basisPoints),
      [3333, 3333, 3334],
    );
    assert.deepStrictEqual(audienceFromFlags({ holdout: "12.5" }), { variants: [], holdoutBasisPoints: 1250 });
    rejects(
      () => audienceFromFlags({ variant: ["A:50", "B:40"] }),
      /^--variant\/--holdout: the percents must sum to 100 \(50 \+ 40 = 90\)$/,
    );
    rejects(() => audienceFromFlags({ variant: ["A:50", "B:45"], holdout: "10" }), /\(50 \+ 45 \+ holdout 10 = 105\)$/);
    rejects(
      () => audienceFromFlags({ variant: ["A:33.333", "B:66.667"] }),
      /^--variant A:33.333: the share must be a percent above 0 and below 100 with at most 2 decimals/,
    );
    rejects(() => audienceFromFlags({ variant: ["A:100"] }), /the share must be a percent/);
    rejects(() => audienceFromFlags({ variant: ["A:50", "B:0", "C:50"] }), /^--variant B:0: the share must be/);
    rejects(
      () => audienceFromFlags({ variant: ["A:60"], holdout: "40" }),
      /^--variant: give 2 to 8 variants \(got 1\)$/,
    );
    rejects(
      () => audienceFromFlags({ variant: Array.from({ length: 9 }, (_, i) => `v${i}:${i ? 11 : 12}`) }),
      /give 2 to 8 variants \(got 9\)/,
    );
    rejects(
      () => audienceFromFlags({ variant: ["A B:50", "C:50"] }),
      /^--variant A B:50: the name must be 1-32 of A-Z a-z 0-9 _ -$/,
    );
    rejects(() => audienceFromFlags({ variant: [`${"x".repeat(33)}:50`, "C:50"] }), /the name must be 1-32/);
    rejects(() => audienceFromFlags({ variant: ["A:50", "A:50"] }), /^--variant A: the name is given twice$/);
    // Names that differ only in case are refused like ids (issue 32): A and a gave schedule names differing only so.
    rejects(
      () => audienceFromFlags({ variant: ["A:50", "a:50"] }),
      /^--variant a: differs from variant A only in case; give variants names that differ in more than case$/,
    );
    rejects(
      () => audienceFromFlags({ variant: ["Sale:40", "B:20", "sALE:40"] }),
      /^--variant sALE: differs from variant Sale only in case/,
    );
    rejects(
      () => audienceFromFlags({ variant: ["A", "B:50"] }),
      /^--variant A: expected NAME:PERCENT or NAME:PERCENT:TEMPLATE$/,
    );
    rejects(
      () => audienceFromFlags({ holdout: "100" }),
      /^--holdout 100: the holdout must be a percent above 0 and below 100/,
    );
  });

  it("templates: {variant} needs variants, and every resolved name is an SES template name", () => {
    const ab = audienceFromFlags({ variant: ["short:50", "long:50"] });
    checkTemplates(ab, [
      { flag: "--template", template: "bf-{variant}" },
      { flag: "--step +1d:r-{variant}", template: "r-{variant}" },
    ]);
    rejects(
      () =>
        checkTemplates(audienceFromFlags({}), [
          { flag: "--step +3d:followup-{variant}", template: "followup-{variant}" },
        ]),
      /^--step \+3d:followup-\{variant\}: \{variant\} in a template name needs --variant$/,
    );
    rejects(
      () => checkTemplates(ab, [{ flag: "--template", template: "bf {variant}" }]),
      /^--template: "bf short" is not an SES template name/,
    );
    rejects(
      () => checkTemplates(audienceFromFlags({ variant: ["A:50:bad.name", "B:50"] }), []),
      /^--variant A: "bad.name" is not an SES template name/,
    );
    rejects(
      () => checkTemplates(ab, [{ flag: "--template", template: `${"t".repeat(60)}-{variant}` }]),
      /is not an SES template name/,
    );
  });
});
