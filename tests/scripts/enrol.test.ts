import * as assert from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { CreateScheduleCommand, DeleteScheduleCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import { AwsClientStub, mockClient } from "aws-sdk-client-mock";
import { bundleJourneyHandler } from "../../infra/handler-bundle";
import { main as enrol } from "../../scripts/enrol";
import { applyDecision, enrolmentLedgerClient, enrolmentSchedulerClient } from "../../infra/handlers/enrolment";
import { ROOT, runMain } from "../helpers/cli";
import { only, renderWith } from "../helpers/stack";
import { InputError, UsageError } from "../../infra/core/errors";
import { startLedger, TEST_CREDENTIALS, TestLedger } from "../helpers/enrolment-ledger";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-enrol-"));
const file = (name: string, content: unknown) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
};
const event = (detailType: string, recipient: object, time = "2026-03-10T18:05:00Z") => ({
  version: "0",
  id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
  "detail-type": detailType,
  source: "com.example.app",
  account: "123456789012",
  time,
  region: "us-east-1",
  resources: [],
  detail: { recipient },
});
const ANN = { id: "u-42", email: "ann@example.com", timezone: "Asia/Kathmandu", first_name: "Ann" };
const NOW = "2026-03-10T18:05:02Z";

async function run(args: string[]) {
  let stdout = "",
    stderr = "";
  // The real time of these runs is NOW: a real run creates no step due before it.
  const code = await enrol(args, { out: (t) => (stdout += t), err: (t) => (stderr += t) }, () => Date.parse(NOW));
  return { code, stdout, stderr };
}

describe("scripts/enrol.ts", function () {
  this.timeout(60_000);
  let outputs: string;
  let stackOutputs: Record<string, unknown>;
  let functionEnvironment: Record<string, string>;
  let ledger: TestLedger;
  const savedEnv = { ...process.env };
  // Installed in before(), not when the file loads: a mock made in the describe body replaced every other file's
  // SchedulerClient from the moment mocha read this file, whatever order the files ran in.
  let scheduler: AwsClientStub<SchedulerClient>;
  before(async () => {
    scheduler = mockClient(SchedulerClient);
    // The outputs and the function's configuration of the dev stack, rendered under mocks.
    const stack = await renderWith();
    stackOutputs = stack.outputs;
    outputs = file("outputs.json", stack.outputs);
    functionEnvironment = only(stack, "aws:lambda/function:Function", "journeys-function").inputs.environment.variables;
    // The stack's ledger, in dynalite: enrol (and the function) claim enrolments there.
    ledger = await startLedger(stack.outputs.ledgerTableName as string);
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: ledger.url,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    });
  });
  beforeEach(async () => {
    scheduler.reset();
    await ledger.clear();
  });
  after(async () => {
    scheduler.restore();
    await ledger.close();
    process.env = savedEnv;
  });

  it("--dry-run --json prints exactly the CreateSchedule requests the deployed handler makes for the same event", async () => {
    const signup = event("UserSignedUp", ANN);
    const r = await run([
      "--journey",
      "onboarding",
      "--event",
      file("signup.json", signup),
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
      "--json",
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const printed = JSON.parse(r.stdout);
    assert.deepStrictEqual(
      printed.map((q: any) => [q.Name, q.ScheduleExpression, q.ScheduleExpressionTimezone]),
      [
        // Due 18:06, within the minute a schedule needs: at once, 18:05:02 + 60 s rounded up, in UTC.
        ["u-42-1", "at(2026-03-10T18:07:00)", "UTC"],
        ["u-42-2", "at(2026-03-13T09:00:00)", "Asia/Kathmandu"],
        ["u-42-3", "at(2026-03-17T09:00:00)", "Asia/Kathmandu"],
      ],
    );
    // The bundle as deployed, configured with the rendered function's environment.
    const bundleFile = path.join(tmp, "index.js");
    fs.writeFileSync(bundleFile, bundleJourneyHandler().code);
    Object.assign(process.env, functionEnvironment, { AWS_REGION: "us-east-1" });
    const bundle = require(bundleFile);
    const bundled = mockClient(bundle.SchedulerClient);
    const sent: any[] = [];
    (bundled as any).send.callsFake((command: any) => (sent.push(command.input), Promise.resolve({})));
    const [realNow, realLog] = [Date.now, console.log];
    Date.now = () => Date.parse(NOW);
    console.log = () => undefined; // the handler's log line
    try {
      await bundle.handler({ journey: "onboarding", kind: "trigger", event: signup });
    } finally {
      [Date.now, console.log] = [realNow, realLog];
      bundled.restore();
    }
    assert.deepStrictEqual(printed, sent);
  });

  it("replays a failure record from the journeys' dead-letter queue (Lambda's on-failure record) as the event it holds", async () => {
    const signup = event("UserSignedUp", ANN);
    const record = {
      version: "1.0",
      requestContext: {
        requestId: "c0ffee",
        functionArn: "arn:aws:lambda:us-east-1:123456789012:function:sendtime-journeys-dev:$LATEST",
        condition: "RetriesExhausted",
        approximateInvokeCount: 3,
      },
      requestPayload: { journey: "onboarding", kind: "trigger", event: signup },
      responseContext: { statusCode: 200, executedVersion: "$LATEST", functionError: "Unhandled" },
      responsePayload: {
        errorType: "EnrolmentError",
        errorMessage: "CreateSchedule campaign-onboarding/u-42-1: ThrottlingException: Rate exceeded",
      },
    };
    const args = (f: string) => [
      "--journey",
      "onboarding",
      "--event",
      f,
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
      "--json",
    ];
    const replayed = await run(args(file("record.json", record)));
    assert.strictEqual(replayed.code, 0, replayed.stderr);
    assert.deepStrictEqual(
      JSON.parse(replayed.stdout),
      JSON.parse((await run(args(file("plain.json", signup)))).stdout),
    );
    await assert.rejects(
      run(
        args(file("other-journey.json", { ...record, requestPayload: { ...record.requestPayload, journey: "clock" } })),
      ),
      /the event is for journey "clock", not "onboarding"/,
    );
  });

  it("creates the schedules, claiming the enrolment; the same event again is a duplicate, even after the welcome went (issue 31)", async () => {
    const created = new Set<string>();
    scheduler.on(CreateScheduleCommand).callsFake((input) => {
      if (created.has(input.Name)) throw Object.assign(new Error("exists"), { name: "ConflictException" });
      created.add(input.Name);
      return {};
    });
    const args = [
      "--journey",
      "onboarding",
      "--event",
      file("signup.json", event("UserSignedUp", ANN)),
      "--outputs",
      outputs,
      "--now",
      NOW,
    ];
    // A dry run claims nothing.
    assert.strictEqual((await run([...args, "--dry-run"])).code, 0);
    assert.deepStrictEqual(await ledger.items(), []);
    const first = await run(args);
    assert.strictEqual(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^Journey onboarding: 1 subscriber → 1 enrolled \(3 schedules created\), 0 exited, 0 rejected\n/,
    );
    const key = "enr#onboarding#u-42#6a7e8feb-b491-4cf7-a9f1-bf3703467718";
    assert.deepStrictEqual(
      (await ledger.items()).map((i) => i.pk),
      [key],
    );
    // The welcome is sent and its schedule deletes itself; the same event is replayed.
    created.delete("u-42-1");
    const second = await run(args);
    assert.strictEqual(second.code, 0, second.stderr);
    assert.strictEqual(
      second.stdout,
      `Journey onboarding: 1 subscriber → 0 enrolled (0 schedules created), 0 exited, 0 rejected, 1 duplicate\n  u-42: duplicate: this trigger enrolled the subscriber before (${key}): nothing created\n`,
    );
    const json = JSON.parse((await run([...args, "--json"])).stdout);
    assert.deepStrictEqual(
      json.map((r: any) => [r.source, r.outcome, r.recipient, r.trigger, r.steps]),
      [[args[3], "duplicate", "u-42", "6a7e8feb-b491-4cf7-a9f1-bf3703467718", undefined]],
    );
    assert.strictEqual(scheduler.commandCalls(CreateScheduleCommand).length, 3);
    assert.ok(!created.has("u-42-1"), "no second welcome");
  });

  it("a real run needs the stack output ledgerTableName (a dry run does not): one line, exit 2", async () => {
    const { ledgerTableName, ...rest } = stackOutputs;
    assert.ok(ledgerTableName);
    const without = file("no-ledger.json", rest);
    const signup = file("signup.json", event("UserSignedUp", ANN));
    const args = ["--journey", "onboarding", "--event", signup, "--outputs", without, "--now", NOW];
    assert.strictEqual((await run([...args, "--dry-run"])).code, 0);
    await assert.rejects(
      run(args),
      (e: Error) =>
        e instanceof UsageError &&
        /^missing stack output ledgerTableName \(the occurrence ledger, where each enrolment is claimed once\)/.test(
          e.message,
        ) &&
        !e.message.includes("\n"),
    );
    assert.strictEqual(scheduler.commandCalls(CreateScheduleCommand).length, 0);
  });

  it("the trigger id: the event's id; without one, at.<its time> (the same file again is the same trigger); a bad id is rejected", async () => {
    scheduler.on(CreateScheduleCommand).resolves({});
    const { id: _, ...noId } = event("UserSignedUp", ANN);
    const args = (f: string) => ["--journey", "onboarding", "--event", f, "--outputs", outputs, "--now", NOW, "--json"];
    const first = JSON.parse((await run(args(file("no-id.json", noId)))).stdout)[0];
    assert.deepStrictEqual([first.outcome, first.trigger], ["enrolled", "at.2026-03-10T18:05:00.000Z"]);
    const again = JSON.parse((await run(args(file("no-id.json", noId)))).stdout)[0];
    assert.strictEqual(again.outcome, "duplicate");
    for (const id of ["", " padded ", "x".repeat(257), 42, "line\nbreak"]) {
      const r = await run(args(file("bad-id.json", { ...noId, id })));
      assert.strictEqual(r.code, 1);
      assert.deepStrictEqual(
        JSON.parse(r.stdout).map((x: any) => [x.outcome, x.reason, x.message]),
        [
          [
            "rejected",
            "invalid-event",
            "the event's id must be a string of 1 to 256 printable characters (EventBridge sets one), or absent",
          ],
        ],
      );
    }
    assert.strictEqual(scheduler.commandCalls(CreateScheduleCommand).length, 3);
  });

  it("an exit event deletes the subscriber's pending steps", async () => {
    scheduler.on(DeleteScheduleCommand).callsFake((input) => {
      if (input.Name === "u-42-1") throw Object.assign(new Error("gone"), { name: "ResourceNotFoundException" });
      return {};
    });
    const upgrade = file("upgrade.json", event("UserUpgraded", { id: "u-42" }));
    const dry = await run(["--journey", "onboarding", "--event", upgrade, "--outputs", outputs, "--dry-run", "--json"]);
    assert.deepStrictEqual(
      JSON.parse(dry.stdout),
      [1, 2, 3].map((k) => ({ Name: `u-42-${k}`, GroupName: "campaign-onboarding" })),
    );
    const r = await run(["--journey", "onboarding", "--event", upgrade, "--outputs", outputs]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(
      r.stdout,
      "Journey onboarding: 1 subscriber → 0 enrolled (0 schedules created), 1 exited, 0 rejected\n  u-42: exit: deleted u-42-2, u-42-3; not pending: u-42-1\n",
    );
  });

  it("--recipients enrols a backlog at --now, rejecting what the launcher rejects (listed with the reason, exit 0), each id once", async () => {
    const r = await run([
      "--journey",
      "onboarding",
      "--recipients",
      path.join(ROOT, "tests/fixtures/campaign.csv"),
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
      "--json",
    ]);
    assert.strictEqual(r.code, 0);
    const names = JSON.parse(r.stdout).map((q: any) => q.Name);
    assert.strictEqual(names.length, 4 * 3);
    assert.deepStrictEqual(
      names.filter((n: string) => n.endsWith("-1")).map((n: string) => n.replace(/^h\.[0-9a-f]{32}/, "h.<hash>")),
      ["a1-1", "a2-1", "h.<hash>-1", "a5-1"],
    );
    const text = await run([
      "--journey",
      "onboarding",
      "--recipients",
      path.join(ROOT, "tests/fixtures/campaign.csv"),
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
    ]);
    assert.match(
      text.stdout,
      /^Journey onboarding: 8 subscribers → 4 enrolled \(12 schedules to create\), 0 exited, 4 rejected\n/,
    );
    for (const line of [
      /campaign.csv:5: rejected duplicate-id: duplicate id \(first on line 2\)/,
      /campaign.csv:6: rejected missing-id/,
      /campaign.csv:7: rejected a3 invalid-email/,
      /campaign.csv:10: rejected wrong-field-count/,
      /h\.[0-9a-f]{32} in UTC \(defaulted\)/,
      /a5 in Europe\/Paris \(canonicalised\)/,
    ])
      assert.match(text.stdout, line);
    assert.ok(!text.stdout.includes("@"), "no addresses in the report");
  });

  it("a backlog run again never creates a step twice: --now is required, and a step due before the real time is not created", async () => {
    const backlog = [
      "--journey",
      "onboarding",
      "--recipients",
      path.join(ROOT, "tests/fixtures/campaign.csv"),
      "--outputs",
      outputs,
    ];
    // Without --now, a second run would trigger everyone later: a new welcome for each, the first one sent already.
    await assert.rejects(
      run(backlog),
      (e: Error) => e instanceof UsageError && /^--recipients needs --now/.test(e.message),
    );
    const runAt = async (clock: () => number) => {
      const r = await runMain((argv, io) => enrol(argv, io, clock), [...backlog, "--now", NOW, "--json"]);
      return {
        code: r.code,
        stderr: r.stderr,
        results: JSON.parse(r.stdout) as { steps?: { schedule: string; status: string }[] }[],
      };
    };
    const created = () =>
      scheduler
        .commandCalls(CreateScheduleCommand)
        .map((c) => c.args[0].input.Name!.replace(/^h\.[0-9a-f]{32}/, "h.<hash>"))
        .sort();
    scheduler
      .on(CreateScheduleCommand)
      .resolves({ ScheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/x/y" });
    await runAt(() => Date.parse(NOW));
    assert.strictEqual(created().length, 12);
    // Each row's trigger id is at.<--now>: its enrolment is claimed under it.
    assert.deepStrictEqual(
      (await ledger.items()).map((i) => String(i.pk).replace(/#h\.[0-9a-f]{32}#/, "#h#")).sort(),
      ["a1", "a2", "a5", "h"].map((r) => `enr#onboarding#${r}#at.2026-03-10T18:05:02.000Z`),
    );
    // Ten minutes later (the welcomes, due at 18:07, sent and their schedules deleted), the same command again:
    // every row was enrolled by this trigger, a duplicate, and nothing is created.
    scheduler.reset();
    scheduler.on(CreateScheduleCommand).rejects(Object.assign(new Error("exists"), { name: "ConflictException" }));
    const duplicate = await runAt(() => Date.parse(NOW) + 10 * 60_000);
    assert.strictEqual(duplicate.code, 0, duplicate.stderr);
    assert.deepStrictEqual(created(), []);
    // Lines 2, 3 (a1, a2), 5, 6, 7 (rejected), 8 (the hashed id), 9 (a5), 10 (rejected).
    assert.deepStrictEqual(
      duplicate.results.map((r: any) => r.outcome),
      ["duplicate", "duplicate", "rejected", "rejected", "rejected", "duplicate", "duplicate", "rejected"],
    );
    // Rows the first run never claimed (it ran out of time, say): a welcome due before the run is passed, not sent.
    await ledger.clear();
    const again = await runAt(() => Date.parse(NOW) + 10 * 60_000);
    assert.deepStrictEqual(
      created().filter((n) => n.endsWith("-1")),
      [],
    );
    assert.strictEqual(created().length, 8);
    const statuses = again.results.flatMap((r) =>
      (r.steps ?? []).map((s) => `${s.schedule.replace(/^h\.[0-9a-f]{32}/, "h")} ${s.status}`),
    );
    assert.deepStrictEqual(statuses.filter((s) => s.includes("-1 ")).sort(), [
      "a1-1 passed",
      "a2-1 passed",
      "a5-1 passed",
      "h-1 passed",
    ]);
    // A slow Scheduler: each call takes 40 s of the clock, so later welcomes come due while the backlog is created
    // (a backlog none of whose rows is claimed yet).
    await ledger.clear();
    scheduler.reset();
    let t = Date.parse(NOW);
    scheduler.on(CreateScheduleCommand).callsFake(async () => {
      t += 40_000;
      return { ScheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/x/y" };
    });
    const slow = await runAt(() => t);
    const welcomes = slow.results.flatMap((r) => (r.steps ?? []).filter((s) => s.schedule.endsWith("-1")));
    const createdWelcomes = created().filter((n) => n.endsWith("-1")).length;
    assert.ok(createdWelcomes < 4, `${createdWelcomes} welcomes created`);
    // Not created, and said so: exit 1 naming how to enrol them.
    assert.strictEqual(welcomes.filter((s) => s.status === "late").length, 4 - createdWelcomes);
    assert.strictEqual(slow.code, 1);
  });

  it("--recipients stops at a Timezone column (not timezone): its zones would go unread, every subscriber in UTC", async () => {
    const csv = file("cased.csv", "id,email,Timezone\nx1,ann@example.com,Asia/Tokyo\n");
    await assert.rejects(
      run(["--journey", "onboarding", "--recipients", csv, "--outputs", outputs, "--now", NOW, "--dry-run"]),
      (e: Error) => /cased.csv:1: column "Timezone" is not "timezone"/.test(e.message) && !e.message.includes("\n"),
    );
  });

  it("--recipients reads latitude/longitude as the launcher does: the zone there, bad ones rejected (issue 33)", async () => {
    // By hand: Denver (39.7392, -104.9903) is America/Denver.
    const csv = file(
      "coords.csv",
      "id,email,timezone,latitude,longitude\nden,d@example.com,,39.7392,-104.9903\nbad,b@example.com,,91,0\n",
    );
    const r = await run([
      "--journey",
      "onboarding",
      "--recipients",
      csv,
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
    ]);
    assert.match(r.stdout, /den in America\/Denver \(latlon\)/);
    assert.match(
      r.stdout,
      /coords.csv:3: rejected bad invalid-coordinates: detail.recipient.latitude "91" is not decimal/,
    );
  });

  it("--recipients rejects a second row with the same address (any case), as the launcher does", async () => {
    const csv = file("dup-email.csv", "id,email,timezone\nx1,Ann@Example.com,UTC\nx2,ann@example.com ,UTC\n");
    const r = await run([
      "--journey",
      "onboarding",
      "--recipients",
      csv,
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
    ]);
    assert.strictEqual(r.code, 0);
    assert.match(r.stdout, /^Journey onboarding: 2 subscribers → 1 enrolled .* 1 rejected\n/);
    assert.match(
      r.stdout,
      /dup-email.csv:3: rejected duplicate-email: address already on line 2; a person is enrolled once/,
    );
  });

  it("rejects an event whose id or time could be read wrong: an id past 2^53, a time without an offset or not a date", async () => {
    // JSON numbers past 2^53 lose digits (9007199254740993 parses as …992): two subscribers would share schedules.
    const cases: [object, RegExp][] = [
      [
        event("UserSignedUp", { ...ANN, id: 9007199254740993 }),
        /detail.recipient.id 9007199254740992 is a number past 2\^53/,
      ],
      [
        event("UserSignedUp", ANN, "2026-03-10T18:05:00"),
        /the event's time "2026-03-10T18:05:00" is not an ISO 8601 instant with Z or an offset/,
      ],
      [event("UserSignedUp", ANN, "March 10, 2026"), /the event's time "March 10, 2026" is not an ISO 8601 instant/],
      [
        event("UserSignedUp", ANN, "2026-02-30T00:00:00Z"),
        /the event's time "2026-02-30T00:00:00Z" is not an ISO 8601 instant/,
      ],
      [event("UserSignedUp", ANN, "9999-12-31T00:00:00Z"), /step 2 falls after 9999-12-31/],
    ];
    const dryRun = (e: object) =>
      run(["--journey", "onboarding", "--event", file("odd.json", e), "--outputs", outputs, "--now", NOW, "--dry-run"]);
    for (const [e, message] of cases) {
      const r = await dryRun(e);
      assert.strictEqual(r.code, 1, r.stderr);
      assert.match(r.stdout, /0 enrolled .*1 rejected/);
      assert.match(r.stdout, message);
    }
    // A safe integer id is still an id.
    const numeric = await dryRun(event("UserSignedUp", { ...ANN, id: 42 }));
    assert.strictEqual(numeric.code, 0, numeric.stdout);
    assert.match(numeric.stdout, /^  42 in Asia\/Kathmandu$/m);
  });

  it("bad input is one line and exit 2", async () => {
    const signup = file("signup.json", event("UserSignedUp", ANN));
    const cases: [string[], RegExp][] = [
      [["--event", signup, "--outputs", outputs], /^--journey NAME is required/],
      [["--journey", "onboarding", "--outputs", outputs], /^give one of --event FILE and --recipients CSV$/],
      [
        ["--journey", "nope", "--event", signup, "--outputs", outputs],
        /^--journey nope: no such journey \(known: onboarding\)$/,
      ],
      [
        ["--journey", "onboarding", "--event", file("other.json", event("Other", ANN)), "--outputs", outputs],
        /detail-type "Other" is neither of journey "onboarding"'s events \(com.example.app UserSignedUp or com.example.app UserUpgraded\)$/,
      ],
      [
        ["--journey", "onboarding", "--event", signup, "--outputs", file("empty.json", {})],
        /^no journeys: give --journeys FILE/,
      ],
      [
        [
          "--journey",
          "onboarding",
          "--event",
          signup,
          "--outputs",
          file("no-target.json", { journeyDefinitions: [] }),
          "--journeys",
          file(
            "j.yaml",
            "- name: onboarding\n  trigger: {source: com.example.app, detailType: UserSignedUp}\n  steps: [{after: +0h, template: w}]\n",
          ),
        ],
        /^missing stack output journeyEnrolment/,
      ],
      [
        [
          "--journey",
          "onboarding",
          "--event",
          signup,
          "--outputs",
          outputs,
          "--journeys",
          file(
            "bad.yaml",
            "- name: onboarding\n  trigger: {source: a, detailType: b}\n  steps: [{after: +1w, template: w}]\n",
          ),
        ],
        /bad.yaml: journey "onboarding": steps\[0\].after "\+1w" is not valid/,
      ],
      [
        // The stack's window is 15 minutes; quiet time that leaves 10 free minutes a day makes every send quiet.
        [
          "--journey",
          "onboarding",
          "--event",
          signup,
          "--outputs",
          outputs,
          "--journeys",
          file(
            "quiet.yaml",
            "- name: onboarding\n  trigger: {source: com.example.app, detailType: UserSignedUp}\n  quietHours: '08:10-08:00'\n  steps: [{after: +0h, template: w}]\n",
          ),
        ],
        /^sendtime:journeys: journey "onboarding": its quiet time \(08:10-08:00 local\) leaves at most 10 free minutes in a row, shorter than the stack's journeyEnrolment.windowMinutes 15/,
      ],
    ];
    for (const [args, message] of cases)
      await assert.rejects(
        run(args),
        (e: Error) => e instanceof InputError && message.test(e.message) && !e.message.includes("\n"),
      );
  });

  it("every call is bounded in time: a Scheduler that never answers is one line naming the call", async () => {
    const server = http.createServer(() => undefined); // accepts and never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SCHEDULER: `http://127.0.0.1:${(server.address() as any).port}`,
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
    });
    scheduler.restore();
    try {
      const client = {
        scheduler: enrolmentSchedulerClient("us-east-1"),
        ledger: { client: enrolmentLedgerClient("us-east-1"), tableName: "unused-by-an-exit" },
      };
      const decision = {
        outcome: "exit" as const,
        journey: "onboarding",
        recipient: "u-42",
        deletes: [{ Name: "u-42-1", GroupName: "campaign-onboarding" }],
      };
      const started = Date.now();
      await assert.rejects(
        applyDecision(client, "exit", decision, 300),
        /^Error: DeleteSchedule campaign-onboarding\/u-42-1: no answer within 0.3 s$/,
      );
      assert.ok(Date.now() - started < 5_000);
    } finally {
      process.env = saved;
      server.closeAllConnections();
      server.close();
      scheduler.restore();
    }
  });

  it("over the wire (AWS_ENDPOINT_URL_SCHEDULER): POSTs each schedule with the dry run's exact request; an existing one (409 ConflictException) counts as enrolled", async () => {
    // A process of its own runs on the real clock: the signup is a day from now, so no step has passed.
    const signedUp = new Date(Math.ceil(Date.now() / 86_400_000 + 1) * 86_400_000 + 18 * 3_600_000).toISOString();
    const at = new Date(Date.parse(signedUp) + 2_000).toISOString();
    const signup = file("wire-signup.json", event("UserSignedUp", ANN, signedUp));
    const dry = JSON.parse(
      (
        await run([
          "--journey",
          "onboarding",
          "--event",
          signup,
          "--outputs",
          outputs,
          "--now",
          at,
          "--dry-run",
          "--json",
        ])
      ).stdout,
    );
    const requests: { method: string; url: string; body: any }[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        requests.push({ method: req.method!, url: req.url!, body: JSON.parse(body || "{}") });
        res.setHeader("content-type", "application/json");
        if (req.url!.startsWith("/schedules/u-42-2")) {
          res.statusCode = 409;
          res.setHeader("x-amzn-errortype", "ConflictException");
          return res.end(JSON.stringify({ Message: "Schedule u-42-2 already exists." }));
        }
        res.end(
          JSON.stringify({ ScheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-onboarding/x" }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const child = spawn(
      process.execPath,
      [
        require.resolve("ts-node/dist/bin"),
        "--transpile-only",
        "scripts/enrol.ts",
        "--journey",
        "onboarding",
        "--event",
        signup,
        "--outputs",
        outputs,
        "--now",
        at,
        "--json",
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          AWS_ENDPOINT_URL_SCHEDULER: `http://127.0.0.1:${(server.address() as any).port}`,
          AWS_ACCESS_KEY_ID: "test",
          AWS_SECRET_ACCESS_KEY: "test",
        },
      },
    );
    let stdout = "",
      stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise((r) => child.on("exit", r));
    server.close();
    assert.strictEqual(code, 0, stderr);
    assert.deepStrictEqual(
      requests.map((q) => `${q.method} ${q.url}`),
      ["POST /schedules/u-42-1", "POST /schedules/u-42-2", "POST /schedules/u-42-3"],
    );
    // The body is the request minus Name (in the path) plus the SDK's idempotency token: every other field exactly
    // as the dry run printed it.
    requests.forEach((q, i) => {
      const { Name, ...rest } = dry[i];
      const { ClientToken, ...body } = q.body;
      assert.strictEqual(q.url, `/schedules/${Name}`);
      assert.match(ClientToken, /^[0-9a-f-]{36}$/);
      assert.deepStrictEqual(body, rest);
    });
    assert.deepStrictEqual(
      JSON.parse(stdout)[0].steps.map((s: any) => s.status),
      ["created", "exists", "created"],
    );
  });
});
