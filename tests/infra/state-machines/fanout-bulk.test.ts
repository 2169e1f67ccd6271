/**
 * Bulk lines in the fan-out: a plan mixing bulk lines (entries) and recipients' lines, run by the tests' interpreter
 * against a fake Scheduler, then each bulk schedule's Input run through the sender against a fake SES: the plan
 * line → the schedule → the SendBulkEmail request, end to end.
 */
import * as assert from "assert";
import { TextDocument } from "vscode-languageserver-textdocument";
import { bulkRowProblem, bulkScheduleRequest } from "../../../infra/core/plan/bulk-request";
import {
  fanOutDefinition,
  FanOutInput,
  FanOutParameters,
  PlanRow,
} from "../../../infra/state-machines/fanout-definition";
import { BulkPlanRow, formatBulkPlanRow, parseBulkPlanRow } from "../../../infra/core/plan/bulk-plan-row";
import { senderTestParameters, withLedger } from "../../helpers/sender-ledger";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { runStateMachine, StatesError } from "../../helpers/asl-interpreter";
import { runJsonataMachine } from "../../helpers/jsonata-interpreter";
import { fanOutTestParameters, SENDER_ARN } from "../../helpers/fanout-params";

const aslValidator = require("asl-validator");
const { getLanguageService } = require("amazon-states-language-service");

const PARAMS: FanOutParameters = fanOutTestParameters({ toleratedFailurePercentage: 100, senderArn: SENDER_ARN });
const INPUT: FanOutInput = {
  campaign_id: "spring",
  plan_bucket: "recipients-bucket",
  plan_key: "plans/spring/launch-1.jsonl",
  window_minutes: 7,
  campaign_tag: "spring",
};

function bulkLine(name: string, n: number, variant: string | null, utc = "2026-12-01T09:00:00.000Z"): BulkPlanRow {
  return {
    schedule_name: name,
    send_at: utc.slice(0, 19),
    timezone: "UTC",
    utc,
    schedule_expression: `at(${utc.slice(0, 19)})`,
    step: 2,
    template: "spring-followup",
    variant,
    entries: Array.from({ length: n }, (_, i) => ({
      recipient_id: `${name}-r${i}`,
      email: `${name}.${i}@example.com`,
      template_data: {
        first_name: `Zoë "${i}"`,
        note: "line1\nline2 \\ back\\slash \u{1F600}",
        unsubscribe_url: `https://u.example/?t=${i}`,
      },
    })),
  };
}

const plainLine = (id: string): PlanRow => ({
  schedule_name: `${id}-1`,
  send_at: "2026-12-01T09:00:00",
  timezone: "America/New_York",
  email: `${id}@example.com`,
  template: "spring-sale",
  template_data: { first_name: id },
  recipient_id: id,
  step: 1,
  utc: "2026-12-01T14:00:00.000Z",
  variant: null,
  schedule_expression: "at(2026-12-01T09:00:00)",
});

/** Scheduler: keeps schedules, ConflictException on a name it has. */
function scheduler(plan: string) {
  const requests: any[] = [];
  const names = new Set<string>();
  const results: any[] = [];
  const services = {
    getObject: () => plan,
    writeResults: (_b: string, _p: string, r: any) => results.push(r),
    sdk: (service: string, action: string, params: any) => {
      assert.strictEqual(service, "scheduler");
      if (action === "createScheduleGroup") return {};
      assert.strictEqual(action, "createSchedule");
      requests.push(params);
      if (names.has(params.Name)) throw new StatesError("Scheduler.ConflictException", "exists");
      names.add(params.Name);
      return { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${params.GroupName}/${params.Name}` };
    },
  };
  return { requests, results, services };
}

const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

describe("fan-out: bulk lines", () => {
  it("the definition with bulk states passes asl-validator and AWS's language service", async () => {
    const def = fanOutDefinition(PARAMS);
    assert.deepStrictEqual(aslValidator(structuredClone(def), { checkPaths: true, checkArn: true }).errors, []);
    const ls = getLanguageService({});
    const doc = TextDocument.create("file:///f.asl.json", "json", 1, JSON.stringify(def, null, 2));
    const errors = (await ls.doValidation(doc, ls.parseJSONDocument(doc))).filter((d: any) => d.severity === 1);
    assert.deepStrictEqual(errors, []);
  });

  it("one schedule per bulk line, starting the sender with the SendBulkEmail request; the other lines start it with one entry each", () => {
    const bulk = [bulkLine("b.a", 3, "A"), bulkLine("b.b", 1, null)];
    const plain = [plainLine("ann"), plainLine("bob")];
    const run = scheduler(jsonl([plain[0], bulk[0], plain[1], bulk[1]]));
    const out = runStateMachine(fanOutDefinition(PARAMS), INPUT, run.services);
    assert.strictEqual(out.fan_out.failedItems, 0);
    assert.deepStrictEqual(
      run.requests.map((r) => [r.Name, r.Target.Arn]),
      [
        ["ann-1", SENDER_ARN],
        ["b.a", SENDER_ARN],
        ["bob-1", SENDER_ARN],
        ["b.b", SENDER_ARN],
      ],
    );
    const a = run.requests[1];
    // As bulk-request.ts builds it, to the byte (the tools that rewrite one schedule use that builder).
    const target = { ...PARAMS, senderArn: SENDER_ARN };
    assert.deepStrictEqual(a, bulkScheduleRequest(target, "spring", 7, bulk[0]));
    // And as the SES API reference shapes it, written out by hand for the first entry.
    const input = JSON.parse(a.Target.Input);
    assert.deepStrictEqual(Object.keys(input), [
      "bulk",
      "recipients",
      "campaign",
      "step",
      "schedule",
      "scheduled_time",
    ]);
    assert.deepStrictEqual(input.recipients, ["b.a-r0", "b.a-r1", "b.a-r2"]);
    assert.deepStrictEqual(
      [input.schedule, input.scheduled_time],
      ["<aws.scheduler.schedule-arn>", "<aws.scheduler.scheduled-time>"],
    );
    assert.deepStrictEqual(input.bulk.DefaultContent, {
      Template: { TemplateName: "spring-followup", TemplateData: "{}" },
    });
    assert.deepStrictEqual(input.bulk.DefaultEmailTags, [
      { Name: "campaign", Value: "spring" },
      { Name: "step", Value: "2" },
      { Name: "variant", Value: "A" },
    ]);
    assert.deepStrictEqual(input.bulk.BulkEmailEntries[0], {
      Destination: { ToAddresses: ["b.a.0@example.com"] },
      ReplacementEmailContent: {
        ReplacementTemplate: {
          ReplacementTemplateData:
            '{"first_name":"Zoë \\"0\\"","note":"line1\\nline2 \\\\ back\\\\slash 😀","unsubscribe_url":"https://u.example/?t=0"}',
        },
      },
      ReplacementHeaders: [
        { Name: "List-Unsubscribe", Value: "<https://u.example/?t=0>" },
        { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" },
      ],
    });
    assert.strictEqual(input.bulk.FromEmailAddress, "news@mail.example.com");
    assert.strictEqual(input.bulk.ConfigurationSetName, "sendtime-dev");
    assert.strictEqual("ListManagementOptions" in input.bulk, false, "SendBulkEmail has none");
    // A line without a variant has no variant tag; a one-entry line keeps its entries and headers as lists.
    const b = JSON.parse(run.requests[3].Target.Input);
    assert.deepStrictEqual(
      b.bulk.DefaultEmailTags.map((t: any) => t.Name),
      ["campaign", "step"],
    );
    assert.strictEqual(b.bulk.BulkEmailEntries.length, 1);
    assert.strictEqual(b.bulk.BulkEmailEntries[0].ReplacementHeaders.length, 2);
    // Every schedule is valid for Scheduler: name rules, and an Input within 256 KB.
    for (const r of run.requests) {
      assert.match(r.Name, /^[0-9a-zA-Z\-_.]{1,64}$/);
      assert.ok(Buffer.byteLength(r.Target.Input) <= 262_144);
      assert.deepStrictEqual(r.FlexibleTimeWindow, { Mode: "FLEXIBLE", MaximumWindowInMinutes: 7 });
      assert.strictEqual(r.ActionAfterCompletion, "DELETE");
      assert.deepStrictEqual(r.Target.DeadLetterConfig, { Arn: PARAMS.deadLetterQueueArn });
    }
  });

  it("end to end: the schedule's Input, started as the sender, makes one SendBulkEmail call carrying every entry once with its own data", async () => {
    const line = bulkLine("b.e", 50, "B");
    const run = scheduler(jsonl([line]));
    runStateMachine(fanOutDefinition(PARAMS), INPUT, run.services);
    const scheduled = JSON.parse(run.requests[0].Target.Input);
    const calls: any[] = [];
    await runJsonataMachine(
      senderDefinition(
        senderTestParameters({ deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq" }),
      ),
      {
        ...scheduled,
        schedule: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/b.e",
        scheduled_time: "2026-12-01T09:00:00Z",
      },
      withLedger({
        call: (service, action, args) => {
          assert.deepStrictEqual([service, action], ["sesv2", "sendBulkEmail"]);
          calls.push(args);
          return { BulkEmailEntryResults: args.BulkEmailEntries.map(() => ({ Status: "SUCCESS", MessageId: "m" })) };
        },
      }),
      { startTime: "2026-12-01T09:00:00Z" },
    );
    assert.strictEqual(calls.length, 1);
    assert.strictEqual(calls[0].BulkEmailEntries.length, 50);
    calls[0].BulkEmailEntries.forEach((e: any, i: number) => {
      assert.deepStrictEqual(e.Destination.ToAddresses, [line.entries[i].email]);
      assert.deepStrictEqual(
        JSON.parse(e.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData),
        line.entries[i].template_data,
      );
    });
  });

  it("a bulk line due too soon is passed, not created; a re-run finds its schedule there (exists)", () => {
    const soon = bulkLine("b.soon", 2, null, "2026-12-01T09:01:00.000Z");
    const later = bulkLine("b.later", 2, null);
    const run = scheduler(jsonl([soon, later]));
    const start = { startTime: "2026-12-01T08:59:00Z" };
    runStateMachine(fanOutDefinition({ ...PARAMS, batchSize: 1 }), INPUT, { ...run.services, ...start });
    assert.deepStrictEqual(
      run.requests.map((r) => r.Name),
      [],
      "both are due within the create lead at 08:59",
    );
    const early = scheduler(jsonl([soon, later]));
    const services = { ...early.services, startTime: "2026-12-01T07:00:00Z" };
    runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
    runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
    assert.deepStrictEqual(early.results[1].succeeded, [["exists", "exists"]]);
  });

  it("the size checks count the headers the fan-out adds: a line whose Input fits only without them is refused", () => {
    const t = { fromAddress: "news@mail.example.com", configurationSetName: "sendtime-dev" };
    // 50 entries with a ~925-character link (SES allows 995 per header value): each entry's two headers are about
    // 1,050 bytes of JSON, so 50 of them add about 52 KB to the Input.
    const line = (blob: number): BulkPlanRow => {
      const row = bulkLine("b", 50, null);
      row.entries.forEach((e, i) => {
        e.template_data = { blob: "x".repeat(blob), unsubscribe_url: `https://u.example/?t=${i}${"y".repeat(900)}` };
      });
      return row;
    };
    // By hand: the Input's bytes with and without ReplacementHeaders in each entry.
    const withHeaders = (row: BulkPlanRow) =>
      Buffer.byteLength(bulkScheduleRequest({ ...PARAMS, senderArn: SENDER_ARN }, "spring", 7, row).Target.Input);
    const headersBytes = (row: BulkPlanRow) =>
      row.entries.reduce(
        (n, e) =>
          n +
          Buffer.byteLength(
            `,"ReplacementHeaders":[{"Name":"List-Unsubscribe","Value":"<${e.template_data.unsubscribe_url}>"},{"Name":"List-Unsubscribe-Post","Value":"List-Unsubscribe=One-Click"}]`,
          ),
        0,
      );
    // Find a blob size whose Input is over 256 KB with the headers and under it without them.
    let blob = 0;
    while (withHeaders(line(blob)) <= 262_144) blob += 100;
    const row = line(blob);
    assert.ok(withHeaders(row) > 262_144 && withHeaders(row) - headersBytes(row) < 262_144);
    assert.match(bulkRowProblem(row, t, "spring")!, /schedule input of \d+ bytes, over Scheduler's 262144/);
    assert.throws(
      () => parseBulkPlanRow(formatBulkPlanRow(row)),
      /entries take \d+ bytes of the schedule's Input: at most/,
    );
  });

  it("bulkRowProblem: entries 1–50, each address once, header and size limits", () => {
    const t = { fromAddress: "news@mail.example.com", configurationSetName: "sendtime-dev" };
    assert.strictEqual(bulkRowProblem(bulkLine("b", 50, null), t, "spring"), undefined);
    assert.match(bulkRowProblem(bulkLine("b", 51, null), t, "spring")!, /51 entries; a bulk schedule holds 1 to 50/);
    assert.match(bulkRowProblem({ ...bulkLine("b", 1, null), entries: [] }, t, "spring")!, /0 entries/);
    const twice = bulkLine("b", 2, null);
    twice.entries[1].email = " B.0@Example.com";
    assert.match(bulkRowProblem(twice, t, "spring")!, /entry 2 \(b-r1\) repeats an address/);
    const tab = bulkLine("b", 1, null);
    tab.entries[0].template_data.unsubscribe_url = "https://u.example/?t=\t";
    assert.match(bulkRowProblem(tab, t, "spring")!, /header List-Unsubscribe value is not printable ASCII/);
    const linkless = bulkLine("b", 1, null);
    delete linkless.entries[0].template_data.unsubscribe_url;
    assert.match(bulkRowProblem(linkless, t, "spring")!, /entry 1 \(b-r0\) has no unsubscribe_url/);
    const big = bulkLine("b", 1, null);
    big.entries[0].template_data = { blob: "x".repeat(262_200), unsubscribe_url: "https://u.example/" };
    assert.match(bulkRowProblem(big, t, "spring")!, /template data, over SES's 262144/);
    const heavy = bulkLine("b", 50, null);
    for (const e of heavy.entries) e.template_data = { blob: "é".repeat(2_700), unsubscribe_url: "https://u.example/" };
    assert.match(bulkRowProblem(heavy, t, "spring")!, /schedule input of \d+ bytes, over Scheduler's 262144/);
    assert.match(
      bulkRowProblem({ ...bulkLine("b", 1, null), schedule_expression: "cron(0 9 * * ? *)" }, t, "spring")!,
      /one-time/,
    );
  });
});
