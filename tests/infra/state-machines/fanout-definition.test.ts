import * as assert from "assert";
import { TextDocument } from "vscode-languageserver-textdocument";
import {
  cleanupAt,
  fanOutDefinition,
  FanOutInput,
  FanOutParameters,
  PlanRow,
  RETRYABLE_SCHEDULER_ERRORS,
} from "../../../infra/state-machines/fanout-definition";
import { PLAN_ROW_FIELDS, RECURRING_ROW_FIELDS } from "../../../infra/core/plan/plan-row";
import { batchSecondsWithOneSlowRow, stepFunctions } from "../../../infra/core/plan/quotas";
import { runStateMachine, RunStats, Services, StatesError } from "../../helpers/asl-interpreter";
import { definitionOf, renderWith } from "../../helpers/stack";
import { fanOutTestParameters, SENDER_ARN } from "../../helpers/fanout-params";

const aslValidator = require("asl-validator");
const { getLanguageService } = require("amazon-states-language-service");

const PARAMS: FanOutParameters = fanOutTestParameters();

async function languageServiceErrors(definition: object): Promise<string[]> {
  const ls = getLanguageService({});
  const doc = TextDocument.create("file:///fanout.asl.json", "json", 1, JSON.stringify(definition, null, 2));
  const diagnostics = await ls.doValidation(doc, ls.parseJSONDocument(doc));
  return diagnostics.filter((d: any) => d.severity === 1).map((d: any) => d.message);
}

/** Every `.$` expression in the definition. */
function expressions(node: any, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => expressions(n, out));
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k.endsWith(".$")) out.push(v as string);
      else expressions(v, out);
    }
  }
  return out;
}

// Pinned to the contract in plan-row.test.ts.
const PLAN_FIELDS: readonly (keyof PlanRow)[] = [...PLAN_ROW_FIELDS, ...RECURRING_ROW_FIELDS];
const INPUT_FIELDS: (keyof FanOutInput)[] = [
  "campaign_id",
  "plan_bucket",
  "plan_key",
  "window_minutes",
  "campaign_tag",
  "cleanup_at",
];

/** A fake EventBridge Scheduler: keeps schedules, answers like the API, and can throttle. */
class FakeScheduler {
  groups = new Set<string>();
  schedules = new Map<string, any>();
  requests: any[] = [];
  updates: any[] = [];
  /** How many times each schedule name is throttled before it goes through. */
  throttle = new Map<string, { times: number; error: string }>();

  services(plan: string): Services & { results: any[] } {
    const results: any[] = [];
    return {
      results,
      getObject: (bucket, key) => {
        assert.deepStrictEqual([bucket, key], ["recipients-bucket", "plans/spring/launch-1.jsonl"]);
        return plan;
      },
      writeResults: (_b, _p, r) => results.push(r),
      sdk: (service, action, params) => {
        assert.strictEqual(service, "scheduler");
        if (action === "createScheduleGroup") {
          if (this.groups.has(params.Name)) throw new StatesError("Scheduler.ConflictException", "group exists");
          this.groups.add(params.Name);
          return { ScheduleGroupArn: `arn:aws:scheduler:us-east-1:123456789012:schedule-group/${params.Name}` };
        }
        if (action === "getSchedule") {
          const found = this.schedules.get(`${params.GroupName}/${params.Name}`);
          if (!found) throw new StatesError("Scheduler.ResourceNotFoundException", "no such schedule");
          return structuredClone(found);
        }
        if (action === "updateSchedule") {
          const key = `${params.GroupName}/${params.Name}`;
          if (!this.schedules.has(key))
            throw new StatesError("Scheduler.ResourceNotFoundException", "no such schedule");
          this.updates.push(params);
          this.schedules.set(key, params);
          return { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${key}` };
        }
        assert.strictEqual(action, "createSchedule");
        this.requests.push(params);
        const t = this.throttle.get(params.Name);
        if (t && t.times > 0) {
          t.times--;
          throw new StatesError(t.error, "Rate exceeded");
        }
        const key = `${params.GroupName}/${params.Name}`;
        if (this.schedules.has(key)) throw new StatesError("Scheduler.ConflictException", "schedule exists");
        this.schedules.set(key, params);
        return { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${key}` };
      },
    };
  }
}

function planRows(n: number): PlanRow[] {
  return Array.from({ length: n }, (_, i) => ({
    schedule_name: `r${i}-1`,
    send_at: "2026-12-01T09:00:00",
    timezone: i % 2 ? "America/New_York" : "Asia/Kathmandu",
    email: `user${i}@example.com`,
    template: "spring-sale",
    template_data: { first_name: `Zoë "${i}"`, note: "line1\nline2 \\ back\\slash \u{1F600}", step: "1" },
    recipient_id: `r${i}`,
    step: 1,
    utc: "2026-12-01T14:00:00.000Z",
    variant: null,
    schedule_expression: "at(2026-12-01T09:00:00)",
  }));
}

const INPUT: FanOutInput = {
  campaign_id: "spring",
  plan_bucket: "recipients-bucket",
  plan_key: "plans/spring/launch-1.jsonl",
  window_minutes: 7,
  campaign_tag: "spring",
};
const toJsonl = (rows: PlanRow[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

/** What a valid CreateSchedule request looks like (API reference ranges and patterns). */
function assertValidCreateSchedule(req: any, row: PlanRow) {
  assert.match(req.Name, /^[0-9a-zA-Z\-_.]{1,64}$/);
  assert.match(req.GroupName, /^[0-9a-zA-Z\-_.]{1,64}$/);
  assert.strictEqual(req.Name, row.schedule_name);
  assert.strictEqual(req.GroupName, "campaign-spring");
  assert.strictEqual(req.ScheduleExpression, row.schedule_expression);
  assert.match(req.ScheduleExpression, /^at\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\)$/);
  assert.strictEqual(req.ScheduleExpressionTimezone, row.timezone);
  assert.deepStrictEqual(req.FlexibleTimeWindow, { Mode: "FLEXIBLE", MaximumWindowInMinutes: 7 });
  assert.strictEqual(req.ActionAfterCompletion, "DELETE");
  assert.strictEqual(req.Target.Arn, SENDER_ARN);
  assert.strictEqual(req.Target.RoleArn, PARAMS.targetRoleArn);
  assert.deepStrictEqual(req.Target.DeadLetterConfig, { Arn: PARAMS.deadLetterQueueArn });
  assert.deepStrictEqual(req.Target.RetryPolicy, { MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 5 });
  const input = JSON.parse(req.Target.Input);
  const tags = [
    { Name: "campaign", Value: "spring" },
    { Name: "step", Value: String(row.step) },
  ];
  if (row.variant) tags.push({ Name: "variant", Value: row.variant });
  // The one sender's input of one entry (written by hand): it sends it with SendEmail and SES's list management.
  assert.deepStrictEqual(input, {
    bulk: {
      FromEmailAddress: "news@mail.example.com",
      ConfigurationSetName: "sendtime-dev",
      DefaultContent: { Template: { TemplateName: row.template, TemplateData: "{}" } },
      DefaultEmailTags: tags,
      BulkEmailEntries: [
        {
          Destination: { ToAddresses: [row.email] },
          ReplacementEmailContent: {
            ReplacementTemplate: { ReplacementTemplateData: JSON.stringify(row.template_data) },
          },
          ReplacementHeaders: [],
        },
      ],
    },
    recipients: [row.recipient_id],
    campaign: "spring",
    step: row.step,
    schedule: "<aws.scheduler.schedule-arn>",
    scheduled_time: "<aws.scheduler.scheduled-time>",
    list_management: { ContactListName: "sendtime-dev", TopicName: "campaigns" },
  });
  // SES MessageTag names and values: A-Z a-z 0-9 _ - only, at most 256 (API reference)
  for (const t of input.bulk.DefaultEmailTags)
    assert.match(`${t.Name}=${t.Value}`, /^[A-Za-z0-9_-]{1,256}=[A-Za-z0-9_-]{1,256}$/);
  const data = input.bulk.BulkEmailEntries[0].ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData;
  assert.deepStrictEqual(JSON.parse(data), row.template_data);
}

describe("fan-out definition", () => {
  it("passes asl-validator (checkPaths, checkArn) and AWS's language service, with and without unsubscribe", async () => {
    for (const params of [PARAMS, { ...PARAMS, listManagement: undefined }]) {
      const def = fanOutDefinition(params);
      const { isValid, errors } = aslValidator(structuredClone(def), { checkPaths: true, checkArn: true });
      assert.deepStrictEqual(errors, []);
      assert.ok(isValid);
      assert.deepStrictEqual(await languageServiceErrors(def), []);
    }
  });

  it("the definition the stack deploys passes both validators too", async () => {
    const def = definitionOf(await renderWith());
    assert.deepStrictEqual(aslValidator(structuredClone(def), { checkPaths: true, checkArn: true }).errors, []);
    assert.deepStrictEqual(await languageServiceErrors(def), []);
  });

  it("reads plan fields and execution-input fields only", () => {
    const refs = expressions(fanOutDefinition(PARAMS)).flatMap((e) => e.match(/\$\$?(\.[A-Za-z_]+)+/g) ?? []);
    for (const ref of refs) {
      const row = /^\$\.row\.(\w+)$/.exec(ref);
      const input = /^\$\.(?:BatchInput\.)?(\w+)$/.exec(ref);
      const local = [
        "$$.Map.Item.Value",
        "$.Items",
        "$.row",
        "$.name",
        "$.group",
        "$.expression",
        "$.timezone",
        "$.window_minutes",
        "$.target_input",
        "$.start_date",
        "$.end_date",
        "$.cleanup.group",
        "$.cleanup.expression",
        "$.cleanup.instant",
        "$.cleanup.target_input",
        "$.cleanup.existing.Description",
      ].includes(ref);
      assert.ok(
        (row && PLAN_FIELDS.includes(row[1] as keyof PlanRow)) ||
          (input && INPUT_FIELDS.includes(input[1] as keyof FanOutInput)) ||
          local,
        `unexpected reference ${ref}`,
      );
    }
  });

  it("is a Distributed Map over JSONL with batched EXPRESS children, sized from config", () => {
    const fanOut = (fanOutDefinition(PARAMS) as any).States.FanOut;
    assert.strictEqual(fanOut.ItemReader.ReaderConfig.InputType, "JSONL");
    assert.deepStrictEqual(fanOut.ItemProcessor.ProcessorConfig, { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" });
    assert.strictEqual(fanOut.ItemBatcher.MaxItemsPerBatch, 3);
    assert.strictEqual(fanOut.ItemBatcher.MaxInputBytesPerBatch, stepFunctions.maxBatchBytes);
    assert.strictEqual(fanOut.MaxConcurrency, 60);
    assert.strictEqual(fanOut.ItemProcessor.States.CreateSchedules.MaxConcurrency, 2);
    assert.strictEqual(fanOut.ResultWriter.Parameters.Bucket, "recipients-bucket");
  });

  it("retries throttling with capped exponential backoff and full jitter; a default batch fits EXPRESS's limit with one row retried out", () => {
    const task = (fanOutDefinition(PARAMS) as any).States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor
      .States.CreateSchedule;
    const [retry] = task.Retry;
    assert.deepStrictEqual(retry.ErrorEquals, ["Scheduler.ThrottlingException", "Scheduler.InternalServerException"]);
    assert.strictEqual(retry.JitterStrategy, "FULL");
    assert.ok(retry.MaxDelaySeconds > 0 && retry.BackoffRate > 1);
    assert.strictEqual(retry.MaxAttempts, 16);
    assert.ok(batchSecondsWithOneSlowRow(400, 25) <= stepFunctions.expressMaxSeconds);
  });

  it("retries no ServiceQuotaExceededException anywhere: out of schedules or groups is not transient", () => {
    const retriers: any[] = [];
    const walk = (node: any) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object")
        for (const [k, v] of Object.entries(node)) k === "Retry" ? retriers.push(...(v as any[])) : walk(v);
    };
    walk(fanOutDefinition(PARAMS));
    assert.ok(retriers.length >= 5);
    for (const r of retriers)
      assert.ok(
        !r.ErrorEquals.includes("Scheduler.ServiceQuotaExceededException") && !r.ErrorEquals.includes("States.ALL"),
      );
  });

  describe("run on a plan (interpreted)", () => {
    it("creates exactly one valid schedule per row", () => {
      const rows = planRows(7);
      const fake = new FakeScheduler();
      const services = fake.services(toJsonl(rows));
      const out = runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
      assert.strictEqual(out.fan_out.failedItems, 0);
      assert.deepStrictEqual([...fake.groups], ["campaign-spring"]);
      assert.strictEqual(fake.schedules.size, 7);
      assert.strictEqual(fake.requests.length, 7);
      rows.forEach((row, i) => assertValidCreateSchedule(fake.requests[i], row));
      // batches of 3; each child reports what it did, not the addresses it handled
      assert.deepStrictEqual(services.results[0].succeeded, [
        ["created", "created", "created"],
        ["created", "created", "created"],
        ["created"],
      ]);
    });

    it("a recurring plan: cron(...) in the row's zone with StartDate and EndDate; one-time rows beside it get no dates", () => {
      // A weekly digest, Mondays 09:00 local, launched 2026-11-30T12:05:01Z, --until 2027-01-31. The end is local
      // midnight after 2027-01-31, worked out by hand: Kathmandu is UTC+05:45 (no DST), so 2027-02-01T00:00+05:45 is
      // 2027-01-31T18:15:00Z; New York is UTC-05:00 in February, so 2027-02-01T05:00:00Z.
      const base = planRows(3);
      const rows: PlanRow[] = [
        {
          ...base[0],
          timezone: "Asia/Kathmandu",
          send_at: "2026-12-07T09:00:00",
          utc: "2026-12-07T03:15:00.000Z",
          schedule_expression: "cron(0 9 ? * MON *)",
          start_date: "2026-11-30T12:05:01.000Z",
          end_date: "2027-01-31T18:15:00.000Z",
        },
        {
          ...base[1],
          timezone: "America/New_York",
          send_at: "2026-11-30T09:00:00",
          utc: "2026-11-30T14:00:00.000Z",
          schedule_expression: "cron(0 9 ? * MON *)",
          start_date: "2026-11-30T12:05:01.000Z",
          end_date: "2027-02-01T05:00:00.000Z",
          variant: "B",
        },
        base[2],
      ];
      const fake = new FakeScheduler();
      const services = fake.services(toJsonl(rows));
      const out = runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
      assert.strictEqual(out.fan_out.failedItems, 0);
      assert.strictEqual(fake.requests.length, 3);
      const [kathmandu, newYork, oneTime] = fake.requests;
      assert.deepStrictEqual(
        [kathmandu.ScheduleExpression, kathmandu.ScheduleExpressionTimezone, kathmandu.StartDate, kathmandu.EndDate],
        ["cron(0 9 ? * MON *)", "Asia/Kathmandu", "2026-11-30T12:05:01.000Z", "2027-01-31T18:15:00.000Z"],
      );
      assert.deepStrictEqual(
        [newYork.ScheduleExpression, newYork.ScheduleExpressionTimezone, newYork.StartDate, newYork.EndDate],
        ["cron(0 9 ? * MON *)", "America/New_York", "2026-11-30T12:05:01.000Z", "2027-02-01T05:00:00.000Z"],
      );
      for (const r of [kathmandu, newYork]) {
        assert.strictEqual(r.ActionAfterCompletion, "DELETE");
        assert.deepStrictEqual(r.FlexibleTimeWindow, { Mode: "FLEXIBLE", MaximumWindowInMinutes: 7 });
        assert.deepStrictEqual(r.Target.DeadLetterConfig, { Arn: PARAMS.deadLetterQueueArn });
      }
      assert.deepStrictEqual(JSON.parse(newYork.Target.Input).bulk.DefaultEmailTags[2], {
        Name: "variant",
        Value: "B",
      });
      assertValidCreateSchedule(oneTime, rows[2]);
      assert.ok(!("StartDate" in oneTime) && !("EndDate" in oneTime), "a one-time schedule has no dates");

      // A re-run: the recurring schedules exist, and are left as they are.
      const again = runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
      assert.strictEqual(again.fan_out.failedItems, 0);
      assert.deepStrictEqual(services.results[1].succeeded, [["exists", "exists", "exists"]]);
    });

    it("tags every send with campaign and step, and variant only for rows that have one (absent, null or named)", () => {
      const rows: PlanRow[] = planRows(6).map((r, i) => ({
        ...r,
        step: 1 + (i % 2),
        schedule_name: `r${i}-${1 + (i % 2)}`,
      }));
      rows[1].variant = "B";
      rows[2].variant = null;
      rows[3].variant = "control_2";
      const fake = new FakeScheduler();
      runStateMachine(fanOutDefinition(PARAMS), INPUT, fake.services(toJsonl(rows)));
      assert.strictEqual(fake.requests.length, 6);
      rows.forEach((row, i) => assertValidCreateSchedule(fake.requests[i], row));
      const tagsOf = (i: number) => JSON.parse(fake.requests[i].Target.Input).bulk.DefaultEmailTags;
      assert.deepStrictEqual(tagsOf(1), [
        { Name: "campaign", Value: "spring" },
        { Name: "step", Value: "2" },
        { Name: "variant", Value: "B" },
      ]);
      assert.deepStrictEqual(tagsOf(2), [
        { Name: "campaign", Value: "spring" },
        { Name: "step", Value: "1" },
      ]);
    });

    it("the campaign tag comes from the input's campaign_tag; an execution without one fails before creating anything", () => {
      const rows = planRows(2);
      const fake = new FakeScheduler();
      runStateMachine(
        fanOutDefinition(PARAMS),
        { ...INPUT, campaign_tag: "spring_2026-1a2b3c4d" },
        fake.services(toJsonl(rows)),
      );
      assert.deepStrictEqual(JSON.parse(fake.requests[0].Target.Input).bulk.DefaultEmailTags[0], {
        Name: "campaign",
        Value: "spring_2026-1a2b3c4d",
      });

      const bare = new FakeScheduler();
      const { campaign_tag: _, ...withoutTag } = INPUT;
      assert.throws(
        () => runStateMachine(fanOutDefinition(PARAMS), withoutTag, bare.services(toJsonl(rows))),
        /campaign_tag not found/,
      );
      assert.strictEqual(bare.groups.size, 0);
      assert.strictEqual(bare.requests.length, 0);
    });

    it("rides out a throttle storm: every row is scheduled exactly once", () => {
      const rows = planRows(20);
      const fake = new FakeScheduler();
      const errors = RETRYABLE_SCHEDULER_ERRORS;
      assert.strictEqual(errors.length, 2);
      rows.forEach((r, i) => fake.throttle.set(r.schedule_name, { times: i % 17, error: errors[i % errors.length] }));
      const stats: RunStats = { retries: [] };
      runStateMachine(fanOutDefinition(PARAMS), INPUT, fake.services(toJsonl(rows)), stats);
      assert.strictEqual(fake.schedules.size, 20);
      for (const r of rows) assert.ok(fake.schedules.has(`campaign-spring/${r.schedule_name}`));
      assert.strictEqual(
        stats.retries.length,
        rows.reduce((n, _, i) => n + (i % 17), 0),
      );
      assert.ok(Math.max(...stats.retries.map((r) => r.maxDelaySeconds)) <= 8);
    });

    it("treats an existing group and existing schedules as done (a re-run duplicates nothing)", () => {
      const rows = planRows(6);
      const fake = new FakeScheduler();
      fake.groups.add("campaign-spring");
      fake.schedules.set("campaign-spring/r2-1", { pre: "existing" });
      fake.schedules.set("campaign-spring/r5-1", { pre: "existing" });
      const services = fake.services(toJsonl(rows));
      const out = runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
      assert.strictEqual(out.fan_out.failedItems, 0);
      assert.strictEqual(fake.schedules.size, 6);
      assert.deepStrictEqual(
        fake.schedules.get("campaign-spring/r2-1"),
        { pre: "existing" },
        "an existing schedule is left as it is",
      );
      assert.deepStrictEqual(services.results[0].succeeded.flat(), [
        "created",
        "created",
        "exists",
        "created",
        "created",
        "exists",
      ]);
      // running the whole thing again changes nothing and fails nothing
      runStateMachine(fanOutDefinition(PARAMS), INPUT, fake.services(toJsonl(rows)));
      assert.strictEqual(fake.schedules.size, 6);
    });

    it("a row throttled past every retry fails its batch only; a redrive completes the rest exactly once", () => {
      const rows = planRows(9);
      const fake = new FakeScheduler();
      fake.throttle.set("r4-1", { times: 17, error: "Scheduler.ThrottlingException" });
      const tolerant = fanOutDefinition({ ...PARAMS, toleratedFailurePercentage: 50 });
      const services = fake.services(toJsonl(rows));
      const out = runStateMachine(tolerant, INPUT, services);
      assert.strictEqual(out.fan_out.failedItems, 3, "the batch r3..r5 failed");
      assert.strictEqual(services.results[0].failed[0].error, "Scheduler.ThrottlingException");
      assert.deepStrictEqual(
        services.results[0].failed[0].input.Items.map((r: PlanRow) => r.recipient_id),
        ["r3", "r4", "r5"],
      );
      assert.ok(!fake.schedules.has("campaign-spring/r4-1"));
      runStateMachine(tolerant, INPUT, fake.services(toJsonl(rows)));
      assert.strictEqual(fake.schedules.size, 9);
    });

    it("a child that would outlast EXPRESS's 5 minutes fails into the results; a redrive completes its batch exactly once", () => {
      const rows = planRows(6);
      const fake = new FakeScheduler();
      // 12 s a call: r1-1 gets through on its 17th try, after 17 × 12 s + 111 s of backoff = 315 s
      fake.throttle.set("r1-1", { times: 16, error: "Scheduler.ThrottlingException" });
      const tolerant = fanOutDefinition({ ...PARAMS, toleratedFailurePercentage: 50 });
      const first = { ...fake.services(toJsonl(rows)), callSeconds: 12 };
      const out = runStateMachine(tolerant, INPUT, first);
      assert.strictEqual(out.fan_out.failedItems, 3);
      assert.strictEqual(first.results[0].failed[0].error, "States.Timeout");
      assert.deepStrictEqual(
        first.results[0].failed[0].input.Items.map((r: PlanRow) => r.recipient_id),
        ["r0", "r1", "r2"],
      );
      assert.ok(fake.schedules.has("campaign-spring/r1-1"), "created just before the child was ended");
      assert.ok(!fake.schedules.has("campaign-spring/r2-1"));

      const redrive = { ...fake.services(toJsonl(rows)), callSeconds: 12 };
      runStateMachine(tolerant, INPUT, redrive);
      assert.deepStrictEqual(redrive.results[0].failed, []);
      assert.deepStrictEqual(redrive.results[0].succeeded, [
        ["exists", "exists", "created"],
        ["exists", "exists", "exists"],
      ]);
      assert.strictEqual(fake.schedules.size, 6);
    });

    it("a quota error fails the row's batch at once, without a retry, into the results", () => {
      const rows = planRows(6);
      const fake = new FakeScheduler();
      fake.throttle.set("r1-1", { times: 1, error: "Scheduler.ServiceQuotaExceededException" });
      const stats: RunStats = { retries: [] };
      const services = fake.services(toJsonl(rows));
      const out = runStateMachine(
        fanOutDefinition({ ...PARAMS, toleratedFailurePercentage: 50 }),
        INPUT,
        services,
        stats,
      );
      assert.deepStrictEqual(stats.retries, []);
      assert.strictEqual(fake.requests.filter((r) => r.Name === "r1-1").length, 1, "asked once");
      assert.strictEqual(out.fan_out.failedItems, 3);
      assert.strictEqual(services.results[0].failed[0].error, "Scheduler.ServiceQuotaExceededException");
      for (const id of ["r3", "r4", "r5"])
        assert.ok(fake.schedules.has(`campaign-spring/${id}-1`), `the other batch: ${id}`);
      assert.ok(!fake.schedules.has("campaign-spring/r1-1"));
    });

    describe("never created late: a one-time row due too soon is passed, not created", () => {
      // The lead, by hand: one minute, plus the longest a row's CreateSchedule can still be retried after its check:
      // 17 calls of 1 s (the retry budget's call time) and 16 waits capped at 8 s (1 + 2 + 4 + 13 × 8 = 111 s): 188 s.
      const LEAD_MS = 60_000 + (17 + 111) * 1000;
      const START = Date.parse("2026-12-01T10:00:00.000Z");
      const at = (ms: number) => new Date(ms).toISOString();
      const oneTime = (i: number, utcMs: number): PlanRow => ({ ...planRows(i + 1)[i], utc: at(utcMs) });

      it("compares each row's utc with the time of its own check: past and too-soon rows are counted as passed in the results", () => {
        const recurring: PlanRow = {
          ...planRows(5)[4],
          utc: at(START - 3_600_000),
          schedule_expression: "cron(0 9 ? * MON *)",
          start_date: at(START - 3_600_000),
          end_date: "2027-01-31T18:15:00.000Z",
        };
        const rows = [
          oneTime(0, START - 60_000),
          oneTime(1, START + LEAD_MS - 1),
          oneTime(2, START + LEAD_MS),
          oneTime(3, START + 30 * 60_000),
          recurring,
        ];
        const fake = new FakeScheduler();
        const services = { ...fake.services(toJsonl(rows)), startTime: at(START) };
        const out = runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
        assert.strictEqual(out.fan_out.failedItems, 0);
        assert.deepStrictEqual(
          fake.requests.map((r) => r.Name),
          ["r2-1", "r3-1", "r4-1"],
        );
        assert.deepStrictEqual(services.results[0].succeeded, [
          ["passed", "passed", "created"],
          // A recurring row is created whatever its first occurrence: Scheduler only fires cron() after StartDate.
          ["created", "created"],
        ]);
      });

      it("a row checked late in a slow batch is passed although it was in time when the fan-out started", () => {
        // 30 s a call: the group takes 30 s, the batch's first wave (r0, r1) is checked at 10:00:30, the second (r2)
        // at 10:01:00. r0 is due exactly LEAD after its check; r2 1 ms less than LEAD after its own.
        const rows = [
          oneTime(0, START + 30_000 + LEAD_MS),
          oneTime(1, START + 3_600_000),
          oneTime(2, START + 60_000 + LEAD_MS - 1),
        ];
        const fake = new FakeScheduler();
        const services = { ...fake.services(toJsonl(rows)), startTime: at(START), callSeconds: 30 };
        runStateMachine(fanOutDefinition(PARAMS), INPUT, services);
        assert.deepStrictEqual(services.results[0].succeeded, [["created", "created", "passed"]]);
        assert.ok(!fake.schedules.has("campaign-spring/r2-1"));
      });

      it("a row whose utc is missing or not a timestamp fails its batch into the results, never created unchecked", () => {
        const { utc: _, ...noUtc } = oneTime(0, START + 3_600_000);
        for (const bad of [noUtc, { ...oneTime(0, 0), utc: "2026-12-01 10:00" }]) {
          const fake = new FakeScheduler();
          const services = { ...fake.services(toJsonl([bad as PlanRow])), startTime: at(START) };
          const out = runStateMachine(
            fanOutDefinition({ ...PARAMS, toleratedFailurePercentage: 100 }),
            INPUT,
            services,
          );
          assert.strictEqual(out.fan_out.failedItems, 1);
          assert.strictEqual(services.results[0].failed[0].error, "States.QueryEvaluationError");
          assert.strictEqual(fake.requests.length, 0);
        }
      });
    });

    describe("housekeeping: the campaign's group deletes itself after the last send", () => {
      const CLEANUP = "campaign-spring/sendtime.cleanup";
      const run = (fake: FakeScheduler, cleanup_at: string | undefined, rows = planRows(3)) =>
        runStateMachine(
          fanOutDefinition(PARAMS),
          cleanup_at ? { ...INPUT, cleanup_at } : INPUT,
          fake.services(toJsonl(rows)),
        );

      it("creates one schedule in the group that calls scheduler:deleteScheduleGroup on it, at cleanup_at UTC", () => {
        const fake = new FakeScheduler();
        run(fake, "2026-12-06T15:00:00");
        const req = fake.schedules.get(CLEANUP);
        assert.deepStrictEqual(req, {
          Name: "sendtime.cleanup",
          GroupName: "campaign-spring",
          ScheduleExpression: "at(2026-12-06T15:00:00)",
          ScheduleExpressionTimezone: "UTC",
          Description: "2026-12-06T15:00:00Z",
          FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: 60 },
          ActionAfterCompletion: "DELETE",
          Target: {
            Arn: "arn:aws:scheduler:::aws-sdk:scheduler:deleteScheduleGroup",
            RoleArn: PARAMS.housekeepingRoleArn,
            Input: '{"Name":"campaign-spring"}',
            RetryPolicy: { MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 5 },
            DeadLetterConfig: { Arn: PARAMS.deadLetterQueueArn },
          },
        });
        assert.strictEqual(fake.schedules.size, 4, "3 sends and the housekeeping schedule");
        // created before the fan-out: even a fan-out that fails leaves a group that goes away
        assert.strictEqual(fake.requests[0].Name, "sendtime.cleanup");
      });

      it("a re-run with a later cleanup_at moves it; the same or an earlier one leaves it (the latest launch wins)", () => {
        const fake = new FakeScheduler();
        run(fake, "2026-12-06T15:00:00");
        run(fake, "2026-12-06T15:00:00");
        assert.deepStrictEqual(fake.updates, []);
        run(fake, "2026-12-02T08:00:00", planRows(4));
        assert.deepStrictEqual(fake.updates, []);
        assert.strictEqual(fake.schedules.get(CLEANUP).ScheduleExpression, "at(2026-12-06T15:00:00)");
        run(fake, "2026-12-09T10:30:00");
        assert.strictEqual(fake.updates.length, 1);
        assert.strictEqual(fake.schedules.get(CLEANUP).ScheduleExpression, "at(2026-12-09T10:30:00)");
        assert.strictEqual(fake.schedules.get(CLEANUP).Target.Input, '{"Name":"campaign-spring"}');
        assert.strictEqual(fake.schedules.size, 5, "4 sends, one housekeeping schedule, nothing duplicated");
      });

      it("a schedule of that name without our Description is replaced, not compared", () => {
        const fake = new FakeScheduler();
        fake.groups.add("campaign-spring");
        fake.schedules.set(CLEANUP, { Name: "sendtime.cleanup", Description: "made by hand" });
        run(fake, "2026-12-06T15:00:00");
        assert.strictEqual(fake.updates.length, 1);
        assert.strictEqual(fake.schedules.get(CLEANUP).Description, "2026-12-06T15:00:00Z");
      });

      it("an execution started by hand without cleanup_at creates none", () => {
        const fake = new FakeScheduler();
        run(fake, undefined);
        assert.ok(!fake.schedules.has(CLEANUP));
        assert.strictEqual(fake.schedules.size, 3);
      });

      it("a definition built without a housekeeping role creates none either: the send role may not delete groups", () => {
        const fake = new FakeScheduler();
        const { housekeepingRoleArn: _, ...withoutRole } = PARAMS;
        runStateMachine(
          fanOutDefinition(withoutRole),
          { ...INPUT, cleanup_at: "2026-12-06T15:00:00" },
          fake.services(toJsonl(planRows(2))),
        );
        assert.ok(!fake.schedules.has(CLEANUP));
        assert.strictEqual(fake.schedules.size, 2);
      });

      it("cleanupAt: last send + its window + 24 h of Scheduler retries, rounded up to the minute, in at()'s format", () => {
        // 2026-12-04T17:00:00Z + 15 min + 86,400 s = 2026-12-05T17:15:00
        assert.strictEqual(cleanupAt(new Date("2026-12-04T17:00:00.000Z"), 15), "2026-12-05T17:15:00");
        assert.strictEqual(cleanupAt(new Date("2026-12-31T23:59:30.000Z"), 1), "2027-01-02T00:01:00");
      });
    });

    it("fails the execution when more items fail than tolerated", () => {
      const rows = planRows(3);
      const fake = new FakeScheduler();
      fake.throttle.set("r0-1", { times: 99, error: "Scheduler.ServiceQuotaExceededException" });
      assert.throws(
        () => runStateMachine(fanOutDefinition(PARAMS), INPUT, fake.services(toJsonl(rows))),
        /ExceedToleratedFailureThreshold/,
      );
    });
  });
});
