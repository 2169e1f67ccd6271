/**
 * Journeys with SMS steps in the stack (issue 37), under Pulumi mocks: the program reads each SMS step's
 * `<templatesDir>/<name>/sms.txt` and hands the texts to the enrolment function in its settings; a template that
 * cannot be sent stops the program with one line, at deploy time; a bad step key is one line naming it.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as pulumi from "@pulumi/pulumi";
import { all, only, renderWith } from "../helpers/stack";
import { JourneyDefinitionError, parseJourneys } from "../../infra/core/journeys/journeys-definition";

const DIR = "tests/fixtures/journey-sms-templates";
const journey = (sms: Record<string, unknown>) => ({
  name: "texts",
  trigger: { source: "com.example.app", detailType: "TrialStarted" },
  steps: [
    { after: "+0h", template: "onboarding-welcome" },
    { after: "+1d", at: "10:00", template: "trial-reminder", channel: "sms", legalHours: "us", ...sms },
  ],
});

describe("journeys with SMS steps in the stack (issue 37)", () => {
  it("the function's settings carry the SMS template's text; only the email templates become SES templates", async () => {
    const stack = await renderWith({ journeys: JSON.stringify([journey({})]), templatesDir: DIR });
    const fn = only(stack, "aws:lambda/function:Function", "journeys-function").inputs;
    const enrolment = JSON.parse(fn.environment.variables.SENDTIME_ENROLMENT);
    assert.deepStrictEqual(enrolment.sms, {
      templates: { "trial-reminder": fs.readFileSync(`${DIR}/trial-reminder/sms.txt`, "utf8") },
      messageType: "PROMOTIONAL",
    });
    assert.deepStrictEqual(JSON.parse(fn.environment.variables.SENDTIME_JOURNEYS)[0].steps[1], {
      after: "+1d",
      at: "10:00",
      template: "trial-reminder",
      channel: "sms",
      legalHours: ["us"],
    });
    // enrol reads the same settings from the stack output.
    assert.deepStrictEqual((stack.outputs.journeyEnrolment as any).sms, enrolment.sms);
    assert.deepStrictEqual(
      all(stack, "aws:ses/template:Template").map((t) => t.inputs.name),
      ["onboarding-welcome"],
    );
  });

  it("a template without variables over the step's message parts stops the program, naming the file and the count", () =>
    // 462 GSM-7 characters: more than 3 parts of 153 (459), so 4.
    assert.rejects(
      renderWith({ journeys: JSON.stringify([journey({ template: "too-long" })]), templatesDir: DIR }),
      (e: Error) => {
        assert.ok(e instanceof pulumi.RunError, String(e));
        assert.strictEqual(
          e.message,
          `sendtime:journeys: journey texts step 2: ${DIR}/too-long/sms.txt is 4 message parts (GSM-7, 462 septets), over 3: shorten it or raise the step's maxSegments (1–10)`,
        );
        return true;
      },
    ));

  it("the same template under maxSegments: 4 is accepted", async () => {
    const stack = await renderWith({
      journeys: JSON.stringify([journey({ template: "too-long", maxSegments: 4 })]),
      templatesDir: DIR,
    });
    assert.ok(stack.outputs.journeyEnrolment);
  });

  it("an SMS step whose sms.txt is missing stops the program with one line", () =>
    assert.rejects(
      renderWith({ journeys: JSON.stringify([journey({ template: "nowhere" })]), templatesDir: DIR }),
      (e: Error) => {
        assert.strictEqual(
          e.message,
          `sendtime:journeys: journey texts step 2: SMS template ${DIR}/nowhere/sms.txt is missing (add it)`,
        );
        return true;
      },
    ));

  describe("a bad SMS step key is one line naming the journey, the step and what is allowed", () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["channel", { channel: "fax" }, 'steps[1].channel "fax" is not valid: email or sms (default email)'],
      [
        "legalHours",
        { legalHours: "eu" },
        'steps[1].legalHours "eu" is not valid: us, ca, "us,ca" or none (the legal hours\' presets, docs/sms.md)',
      ],
      [
        "maxSegments",
        { maxSegments: 0 },
        "steps[1].maxSegments 0 is not valid: a whole number of message parts from 1 to 10 (default 3)",
      ],
      [
        "maxSegments",
        { maxSegments: 11 },
        "steps[1].maxSegments 11 is not valid: a whole number of message parts from 1 to 10 (default 3)",
      ],
      [
        "legalHours on an email step",
        { channel: "email" },
        "steps[1].legalHours goes with channel: sms only (this step is an email)",
      ],
    ];
    for (const [what, change, message] of cases)
      it(what, () =>
        assert.throws(
          () => parseJourneys([journey(change)], "sendtime:journeys"),
          (e: Error) => {
            assert.ok(e instanceof JourneyDefinitionError);
            assert.strictEqual(e.message, `sendtime:journeys: journey "texts": ${message}`);
            return true;
          },
        ),
      );

    it("legalHours takes us, ca, us,ca (a string or a list) and none", () => {
      const read = (legalHours: unknown) => parseJourneys([journey({ legalHours })], "x")[0].steps[1].legalHours;
      assert.deepStrictEqual(read("us"), ["us"]);
      assert.deepStrictEqual(read("us, CA"), ["us", "ca"]);
      assert.deepStrictEqual(read(["ca"]), ["ca"]);
      assert.strictEqual(read("none"), undefined);
    });

    it("a journey's maxSegments is refused when not a whole number of parts", () =>
      assert.throws(
        () => parseJourneys([{ ...journey({}), maxSegments: "3" }], "sendtime:journeys"),
        /journey "texts": maxSegments "3" is not valid: a whole number of message parts from 1 to 10/,
      ));
  });
});
