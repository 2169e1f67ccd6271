/**
 * A text's plan row read back (parsePlanRow), its redrive rebuilt from it (redriveInput: sms-input.ts's
 * smsSenderInput), and text templates as files (templates/<name>/sms.txt beside SES's folders).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parsePlanRow, PlanRow } from "../../../../infra/core/plan/plan-row";
import { readTemplateFolder } from "../../../../infra/core/plan/templates";
import { readSmsTemplates, renderSms } from "../../../../infra/core/plan/sms-templates";
import { redriveInput } from "../../../../scripts/lib/planning/dead-letters";
import { fileSystem } from "../../../../scripts/lib/templates/campaign-templates";

const TEXT: PlanRow = {
  schedule_name: "fl-2",
  send_at: "2026-12-06T08:00:00",
  timezone: "America/New_York",
  email: "ann@example.com",
  template: "spring-sale-sms",
  template_data: { first_name: "Ann", step: "2" },
  recipient_id: "fl",
  step: 2,
  utc: "2026-12-06T13:00:00.000Z",
  variant: null,
  schedule_expression: "at(2026-12-06T08:00:00)",
  channel: "sms",
  phone: "+13055550100",
  body: "Hi Ann, 30% off until Sunday. Reply STOP to opt out.",
  segments: 1,
  until: "2026-12-07T01:00:00.000Z",
  same_subject_limit: 3,
};

describe("a text's plan row", () => {
  it("is read back with its channel's fields", () => {
    assert.deepStrictEqual(parsePlanRow(JSON.stringify(TEXT)), TEXT);
    const { same_subject_limit: _, ...withoutLimit } = TEXT;
    assert.deepStrictEqual(parsePlanRow(JSON.stringify(withoutLimit)), withoutLimit);
  });

  it("is refused naming the field when one is missing or wrong, or on an email's row, or recurring", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...TEXT, phone: "305 555 0100" }, /field "phone"/],
      [{ ...TEXT, body: undefined }, /field "body"/],
      [{ ...TEXT, segments: 0 }, /field "segments"/],
      [{ ...TEXT, until: "tomorrow" }, /field "until"/],
      [{ ...TEXT, same_subject_limit: "3" }, /field "same_subject_limit"/],
      [{ ...TEXT, channel: "fax" }, /channel "fax"/],
      [{ ...TEXT, channel: undefined }, /field "phone" is only for a text's row/],
      [
        {
          ...TEXT,
          schedule_expression: "cron(0 8 * * ? *)",
          start_date: "2026-12-06T13:00:00Z",
          end_date: "2026-12-31T00:00:00Z",
        },
        /must be one-time/,
      ],
    ];
    for (const [row, error] of cases) assert.throws(() => parsePlanRow(JSON.stringify(row)), error);
  });

  it("is redriven as the fan-out sends it: one SMS entry, its body and legal window as planned", () => {
    const sender = { fromAddress: "a@example.com", configurationSetName: "cs" };
    const input = redriveInput(sender, "spring", { kind: "recipient", row: TEXT, where: "s3", launch: 1 }, ["fl"]);
    assert.deepStrictEqual(input, {
      channel: "sms",
      sms: {
        MessageType: "PROMOTIONAL",
        Entries: [
          {
            DestinationPhoneNumber: "+13055550100",
            MessageBody: TEXT.body,
            Until: "2026-12-07T01:00:00.000Z",
            SameSubjectLimit: 3,
          },
        ],
      },
      recipients: ["fl"],
      campaign: "spring",
      step: 2,
      schedule: "<aws.scheduler.schedule-arn>",
      scheduled_time: "<aws.scheduler.scheduled-time>",
    });
    const transactional = redriveInput(
      { ...sender, smsMessageType: "TRANSACTIONAL" },
      "spring",
      { kind: "recipient", row: TEXT, where: "s3", launch: 1 },
      ["fl"],
    );
    assert.equal("sms" in transactional && transactional.sms.MessageType, "TRANSACTIONAL");
  });
});

describe("text templates as files", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-sms-templates-"));
  before(() => {
    fs.mkdirSync(path.join(dir, "hello-sms"));
    fs.writeFileSync(
      path.join(dir, "hello-sms", "sms.txt"),
      "{{#if first_name}}Hi {{first_name}}! {{/if}}Sale: {{code}}\n",
    );
    fs.mkdirSync(path.join(dir, "mail"));
    for (const f of ["subject.txt", "body.html", "body.txt"]) fs.writeFileSync(path.join(dir, "mail", f), "Hi");
  });

  it("a folder of sms.txt alone is a text's template, not an SES template", () => {
    assert.deepStrictEqual([...readTemplateFolder(dir, fileSystem).keys()], ["mail"]);
    const texts = readSmsTemplates(dir, fileSystem);
    assert.deepStrictEqual([...texts.keys()], ["hello-sms"]);
    const t = texts.get("hello-sms")!;
    assert.deepStrictEqual([t.required, t.optional], [["code"], ["first_name"]]);
    // "Sale: " with every variable empty: 6 GSM-7 septets, one part.
    assert.deepStrictEqual([t.fixed.encoding, t.fixed.units, t.fixed.segments], ["GSM-7", 6, 1]);
    assert.equal(renderSms(t, { first_name: "Zoë & <Al>", code: "X1" }), "Hi Zoë & <Al>! Sale: X1", "not HTML-escaped");
  });

  it("malformed Handlebars or an empty text is refused naming the file", () => {
    fs.mkdirSync(path.join(dir, "bad"));
    fs.writeFileSync(path.join(dir, "bad", "sms.txt"), "Hi {{#if x}}");
    assert.throws(() => readSmsTemplates(dir, fileSystem), /bad\/sms.txt: malformed Handlebars/);
    fs.writeFileSync(path.join(dir, "bad", "sms.txt"), "\n");
    assert.throws(() => readSmsTemplates(dir, fileSystem), /bad\/sms.txt: empty/);
  });
});
