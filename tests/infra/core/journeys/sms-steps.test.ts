/**
 * SMS steps' core (infra/core/journeys/sms-steps.ts): legal hours and quiet time together, the text's rendering and
 * the deploy-time checks. Instants by hand (EDT −4 and CDT −5 from 2026-03-08; 2026-03-13 is a Friday, the 15th a
 * Sunday) and with luxon; hours from the laws (docs/sms.md): Canada 9:00–21:30 weekdays, 10:00–18:00 weekends;
 * Texas 9:00–21:00 Monday to Saturday, noon–21:00 on Sunday.
 */
import * as assert from "assert";
import { DateTime } from "luxon";
import type { JourneyStep } from "../../../../infra/core/journeys/journeys-definition";
import { renderSmsText, smsStepTiming, smsTemplateProblems } from "../../../../infra/core/journeys/sms-steps";
import { journeyQuietTime } from "../../../../infra/core/journeys/step-times";
import { endOfQuietAcross } from "../../../../infra/core/timing/promises";

const at = (local: string, zone: string) => DateTime.fromISO(local, { zone }).toMillis();
const text: JourneyStep = { after: "+0h", template: "t", channel: "sms" };

describe("SMS steps: timing, text and checks (issue 37)", () => {
  it("a Texas number on a Sunday morning waits for noon; Until is 21:00 that day", () => {
    const t = smsStepTiming(
      { ...text, legalHours: ["us"] },
      ["America/Chicago"],
      "+15125550123",
      at("2026-03-15T10:00", "America/Chicago"),
      15,
    );
    assert.ok(!("skipped" in t));
    assert.strictEqual(new Date(t.utcMs).toISOString(), "2026-03-15T17:00:00.000Z");
    assert.strictEqual(new Date(t.until).toISOString(), "2026-03-16T02:00:00.000Z");
    assert.strictEqual(t.moved, true);
    assert.strictEqual(t.sameSubjectLimit, undefined);
  });

  it("legal hours then quiet days: a Friday 22:00 text in Toronto under quiet weekends goes Monday 09:00, until 21:30", () => {
    const quiet = journeyQuietTime({
      name: "j",
      trigger: { source: "s", detailType: "d" },
      steps: [],
      quietDays: ["SAT", "SUN"],
    })!;
    const zones = ["America/Toronto"];
    const unquiet = (ms: number) => endOfQuietAcross(quiet, zones, ms, 15) ?? undefined;
    const t = smsStepTiming(
      { ...text, legalHours: ["ca"] },
      zones,
      "+14165550175",
      at("2026-03-13T22:00", "America/Toronto"),
      15,
      unquiet,
    );
    assert.ok(!("skipped" in t));
    assert.strictEqual(t.utcMs, at("2026-03-16T09:00", "America/Toronto"));
    assert.strictEqual(new Date(t.utcMs).toISOString(), "2026-03-16T13:00:00.000Z");
    assert.strictEqual(new Date(t.until).toISOString(), "2026-03-17T01:30:00.000Z");
  });

  it("without legal hours the text goes at its time and may wait 259,200 s", () => {
    const ms = Date.parse("2026-03-10T16:00:00Z");
    assert.deepStrictEqual(smsStepTiming(text, ["UTC"], "+447700900123", ms, 15), {
      utcMs: ms,
      until: ms + 259_200_000,
      moved: false,
    });
  });

  it("renders without HTML escaping and counts a curly apostrophe as UCS-2", () => {
    const r = renderSmsText("t", "{{name}} & co’s sale: {{step}}", { name: "Tom <3", step: "2" }, 3);
    assert.deepStrictEqual(r, { body: "Tom <3 & co’s sale: 2", segments: 1 });
    // 71 characters with one ’: over UCS-2's 70, so 2 parts, refused under 1.
    const long = renderSmsText("t", "’" + "a".repeat(70), {}, 1);
    assert.deepStrictEqual(long, { problem: "t/sms.txt renders to 2 message parts (UCS-2, 71 UTF-16 units), over 1" });
  });

  it("malformed Handlebars and an empty file are one line each at deploy time", () => {
    const journey = {
      name: "j",
      trigger: { source: "s", detailType: "d" },
      steps: [
        { after: "+0h", template: "bad", channel: "sms" as const },
        { after: "+1h", template: "empty", channel: "sms" as const },
      ],
    };
    const problems = smsTemplateProblems([journey], { bad: "Hi {{#if x}}", empty: "\n" }, "templates");
    assert.strictEqual(problems.length, 2);
    assert.match(problems[0], /^journey j step 1: templates\/bad\/sms\.txt/);
    assert.strictEqual(problems[1], "journey j step 2: templates/empty/sms.txt is empty: a text needs words");
  });
});
