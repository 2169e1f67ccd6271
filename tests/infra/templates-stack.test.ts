/**
 * The stack deploys the templates folder (sendtime:templatesDir) as SES templates, one per folder, and scopes the
 * roles' SES grants to them; a journey step whose template the folder lacks stops the preview.
 */
import * as assert from "assert";
import * as fs from "fs";
import { all, only, renderWith } from "../helpers/stack";

const FIXTURES = "tests/fixtures/templates";
/** The SES resources the one sender's role may send with (its only grant of SendEmail and SendBulkEmail). */
const sendResources = (policy: string) =>
  (JSON.parse(policy).Statement as { Sid: string; Resource: string[] }[]).find((s) => s.Sid === "SendEmail")!.Resource;
const SENDER_POLICY = "bulk-sender-permissions";

describe("templates in the stack under Pulumi mocks", function () {
  this.timeout(60_000);

  it("renders one SES template per folder, with the folder's subject, HTML and text", async () => {
    const stack = await renderWith({ templatesDir: FIXTURES, journeys: undefined });
    const templates = all(stack, "aws:ses/template:Template");
    const folders = fs.readdirSync(FIXTURES).sort();
    assert.deepStrictEqual(
      templates.map((t) => t.inputs.name),
      folders,
    );
    for (const name of folders) {
      const t = templates.find((x) => x.inputs.name === name)!;
      assert.strictEqual(t.inputs.subject, fs.readFileSync(`${FIXTURES}/${name}/subject.txt`, "utf8").trimEnd());
      assert.strictEqual(t.inputs.html, fs.readFileSync(`${FIXTURES}/${name}/body.html`, "utf8"));
      assert.strictEqual(t.inputs.text, fs.readFileSync(`${FIXTURES}/${name}/body.txt`, "utf8"));
    }
    // The sender may send those templates only, and the stack says which they are.
    assert.deepStrictEqual(
      sendResources(only(stack, "aws:iam/rolePolicy:RolePolicy", SENDER_POLICY).inputs.policy).filter((r) =>
        r.includes(":template/"),
      ),
      ["arn:aws:ses:us-east-1:123456789012:template/greeting", "arn:aws:ses:us-east-1:123456789012:template/offer"],
    );
    assert.deepStrictEqual(stack.outputs.templateNames, ["greeting", "offer"]);
  });

  it("with a frequency cap the sender's grant names the same templates", async () => {
    const stack = await renderWith({
      templatesDir: FIXTURES,
      journeys: undefined,
      frequencyCap: '{"max": 2, "per": "day"}',
    });
    assert.deepStrictEqual(
      sendResources(only(stack, "aws:iam/rolePolicy:RolePolicy", SENDER_POLICY).inputs.policy).filter((r) =>
        r.includes(":template/"),
      ),
      ["arn:aws:ses:us-east-1:123456789012:template/greeting", "arn:aws:ses:us-east-1:123456789012:template/offer"],
    );
  });

  it("templatesDir none: no template deployed, and the roles may send any of the account's (templates kept in SES)", async () => {
    const stack = await renderWith({ templatesDir: "none" });
    assert.strictEqual(all(stack, "aws:ses/template:Template").length, 0);
    assert.deepStrictEqual(
      sendResources(only(stack, "aws:iam/rolePolicy:RolePolicy", SENDER_POLICY).inputs.policy).filter((r) =>
        r.includes(":template/"),
      ),
      ["arn:aws:ses:us-east-1:123456789012:template/*"],
    );
  });

  it("a journey step whose template the folder lacks fails the preview, naming the journey, the step and the template", async () => {
    // The example stack's onboarding journey uses onboarding-welcome, -tips and -offer: not in the fixtures.
    await assert.rejects(
      renderWith({ templatesDir: FIXTURES }),
      /journey onboarding step 1: template "onboarding-welcome" is not in tests\/fixtures\/templates/,
    );
  });

  it("a folder that is not a template stops the preview in one line; a folder outside the project is refused", async () => {
    await assert.rejects(
      renderWith({ templatesDir: "tests/fixtures/no-such-templates" }),
      /tests\/fixtures\/no-such-templates: no such templates folder/,
    );
    await assert.rejects(
      renderWith({ templatesDir: "../elsewhere" }),
      /sendtime:templatesDir = "\.\.\/elsewhere" is not valid/,
    );
  });

  it("the shipped templates cover the example stack's journeys", async () => {
    const stack = await renderWith();
    const names = all(stack, "aws:ses/template:Template").map((t) => t.inputs.name);
    for (const t of ["onboarding-welcome", "onboarding-tips", "onboarding-offer"]) assert.ok(names.includes(t), t);
  });
});
