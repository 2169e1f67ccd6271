/**
 * cancel-campaign, pause-campaign, resume-campaign and campaign-status on the wire: the campaign's state in a real
 * DynamoDB implementation (dynalite, through AWS_ENDPOINT_URL_DYNAMODB), Step Functions, Scheduler and SQS answered by
 * a local endpoint. The wait after a state write runs on a fake clock (stateClock and clock.sleep advance together),
 * so the 44 s are counted, not slept.
 */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { clock } from "../../scripts/lib/aws/call";
import { stateClock } from "../../scripts/lib/aws/campaign-state";
import { isHeldPointer } from "../../scripts/lib/aws/held-sends";
import { main as cancel } from "../../scripts/cancel-campaign";
import { main as pause } from "../../scripts/pause-campaign";
import { main as resume } from "../../scripts/resume-campaign";
import { main as status } from "../../scripts/campaign-status";
import { Answer, Endpoint, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { LocalLedger, startLedger } from "../helpers/ledger";
import { runMain } from "../helpers/cli";
import { Io } from "../../scripts/lib/cli/run";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-state-"));
const SM = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-fanout-dev";
const DLQ = "https://sqs.us-east-1.amazonaws.com/123456789012/scheduler-target-dlq-226c700";
const TABLE = "ledger-0a1b2c3";
const outputs = path.join(tmp, "outputs.json");
fs.writeFileSync(
  outputs,
  JSON.stringify({ stateMachineArn: SM, deadLetterQueueUrl: DLQ, region: "us-east-1", ledgerTableName: TABLE }),
);
const execArn = (name: string) => `arn:aws:states:us-east-1:123456789012:execution:sendtime-fanout-dev:${name}`;
const md5 = (text: string) => createHash("md5").update(text, "utf8").digest("hex");
const T0 = Date.parse("2026-12-01T10:00:00Z");
/**
 * The wait after a state write, by hand from the sender's constants: the state read is one DynamoDB call (1 s, then
 * 2 retries after 1 and 2 s, each 1 s: 6 s), the SES call 10 s then 2 throttle retries after 1 and 2 s, each 10 s
 * (33 s): 39 s; plus the 5 s margin.
 */
const WAIT_MS = 44_000;

/** Step Functions with one running fan-out of spring, and a group that is gone once deleted. */
function stackEndpoint(order: string[], sqs?: (q: SeenRequest) => Answer | undefined): (q: SeenRequest) => Answer {
  let group: "ACTIVE" | "gone" = "ACTIVE";
  return (q) => {
    order.push(q.target ? `sfn/sqs ${q.target.split(".").pop()}` : `scheduler ${q.method} ${q.url.split("?")[0]}`);
    const e = { executionArn: execArn("spring-aaa"), name: "spring-aaa", stateMachineArn: SM, startDate: 1795946400 };
    if (q.target === "AWSStepFunctions.ListExecutions") return { json: { executions: [{ ...e, status: "RUNNING" }] } };
    if (q.target === "AWSStepFunctions.DescribeExecution")
      return { json: { ...e, status: "RUNNING", input: JSON.stringify({ campaign_id: "spring" }) } };
    if (q.target === "AWSStepFunctions.StopExecution") return { json: { stopDate: 1795946500 } };
    const answer = sqs?.(q);
    if (answer) return answer;
    if (q.target === "AWSStepFunctions.ListMapRuns") return { json: { mapRuns: [] } };
    if (q.target === "AmazonSQS.GetQueueAttributes")
      return { json: { Attributes: { ApproximateNumberOfMessages: "0", ApproximateNumberOfMessagesNotVisible: "0" } } };
    if (q.method === "GET" && q.url.startsWith("/schedules?")) return { json: { Schedules: [] } };
    if (q.url.startsWith("/schedule-groups/") && q.url.split("?")[0] !== "/schedule-groups/campaign-spring")
      return {
        status: 404,
        headers: { "x-amzn-errortype": "ResourceNotFoundException" },
        json: { Message: "Schedule group does not exist." },
      };
    if (q.url.split("?")[0] === "/schedule-groups/campaign-spring") {
      if (q.method === "DELETE") group = "gone";
      else if (group === "ACTIVE") return { json: { Name: "campaign-spring", State: "ACTIVE" } };
      else
        return {
          status: 404,
          headers: { "x-amzn-errortype": "ResourceNotFoundException" },
          json: { Message: "Schedule group campaign-spring does not exist." },
        };
      return { json: {} };
    }
    return { status: 400, json: {} };
  };
}

/** A dead-letter queue holding `bodies`, each received once; the handles made visible again are recorded. */
function queue(bodies: unknown[], released: string[]) {
  let received = false;
  return (q: SeenRequest): Answer | undefined => {
    if (q.target === "AmazonSQS.ReceiveMessage") {
      const messages = received
        ? []
        : bodies.map((b, i) => ({
            MessageId: `m${i}`,
            ReceiptHandle: `h${i}`,
            Body: JSON.stringify(b),
            MD5OfBody: md5(JSON.stringify(b)),
          }));
      received = true;
      return { json: { Messages: messages } };
    }
    if (q.target === "AmazonSQS.ChangeMessageVisibilityBatch") {
      const entries = JSON.parse(q.body).Entries as { Id: string; ReceiptHandle: string; VisibilityTimeout: number }[];
      for (const e of entries) released.push(`${e.ReceiptHandle}:${e.VisibilityTimeout}`);
      return { json: { Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] } };
    }
    return undefined;
  };
}

describe("a campaign's state: cancel, pause and resume reach the sends already under way", function () {
  this.timeout(20_000);
  const realStateClock = { ...stateClock };
  const realHeartbeat = clock.heartbeatMs;
  let now = T0;
  /** Every wait the command asked for (fake: the clock moves on at once). */
  let slept: number[] = [];
  let order: string[] = [];
  let ledger: LocalLedger;
  let endpoint: Endpoint | undefined;
  before(() => (clock.heartbeatMs = 100));
  after(() => (clock.heartbeatMs = realHeartbeat));
  beforeEach(async () => {
    ledger = await startLedger(order, TABLE); // each test its own table
    now = T0;
    slept = [];
    stateClock.now = () => now;
    stateClock.sleep = async (ms) => {
      slept.push(ms);
      now += ms;
    };
  });
  afterEach(async () => {
    Object.assign(stateClock, realStateClock);
    await endpoint?.close();
    endpoint = undefined;
    await ledger.close();
    order.length = 0;
  });

  /** Runs a command against the local endpoint and dynalite, recording the fake time its report was printed at. */
  async function run(
    cli: (argv: string[], io: Io) => Promise<number>,
    args: string[],
    env: Record<string, string> = {},
    outputsFile = outputs,
  ) {
    let printedAt: number | undefined;
    const timed = (argv: string[], io: Io) =>
      cli(argv, { out: (t) => ((printedAt ??= now), io.out(t)), err: (t) => io.err(t) });
    const r = await withEnv(
      {
        AWS_ENDPOINT_URL_SCHEDULER: endpoint!.url,
        AWS_ENDPOINT_URL_SFN: endpoint!.url,
        AWS_ENDPOINT_URL_SQS: endpoint!.url,
        AWS_ENDPOINT_URL_DYNAMODB: ledger.url,
        ...env,
      },
      () => runMain(timed, [...args, "--outputs", outputsFile]),
    );
    return { ...r, printedAt };
  }
  const stateItem = () => ledger.get("campaign#spring");
  const stateOf = async (campaign: string) => (await ledger.get(`campaign#${campaign}`))?.state?.S ?? "absent";

  describe("cancel-campaign", () => {
    it("sets the state to cancelled before it deletes the group, and exits 0 only after the wait, naming the instant", async () => {
      endpoint = await startEndpoint(stackEndpoint(order));
      const r = await run(cancel, ["--campaign", "spring", "--reason", "wrong price"]);
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      const mutating = order.filter((o) => /UpdateItem|StopExecution|DELETE/.test(o));
      assert.deepStrictEqual(mutating, [
        "dynamodb UpdateItem",
        "sfn/sqs StopExecution",
        "scheduler DELETE /schedule-groups/campaign-spring",
      ]);
      const item = await stateItem();
      assert.deepStrictEqual(
        [item?.state?.S, item?.reason?.S, item?.updated_at?.S],
        ["cancelled", "wrong price", "2026-12-01T10:00:00.000Z"],
      );
      assert.strictEqual(
        slept.reduce((a, b) => a + b, 0),
        WAIT_MS,
      );
      assert.ok(r.printedAt! >= T0 + WAIT_MS, `printed ${r.printedAt! - T0} ms after the write`);
      assert.match(r.stdout, /Nothing of campaign spring can send any more since 2026-12-01T10:00:44\.000Z:/);
      assert.doesNotMatch(r.stdout, /no send of this campaign remains/);
      assert.match(
        r.stderr,
        /campaign spring: waiting 44 s more for sends already under way \(until 2026-12-01T10:00:44\.000Z\)/,
      );
    });

    it("a time limit shorter than the wait: the group is still deleted, exit 1 naming until when sends may be under way", async () => {
      endpoint = await startEndpoint(stackEndpoint(order));
      const r = await run(cancel, ["--campaign", "spring", "--timeout-seconds", "10", "--json"]);
      assert.strictEqual(r.code, 1, r.stdout);
      const report = JSON.parse(r.stdout);
      assert.strictEqual(report.groupAfter, "deleted");
      assert.deepStrictEqual(report.stillThere, [
        "sender executions that read the campaign's state before it was cancelled may still be sending until 2026-12-01T10:00:44.000Z (the wait of 44 s from the state write does not fit in the command's time limit of 10 s)",
      ]);
      const text = await run(cancel, ["--campaign", "spring", "--timeout-seconds", "10"]);
      assert.match(
        text.stdout,
        /\n  Run cancel-campaign again \(it is safe to repeat\) with a --timeout-seconds that covers its 44 s wait, or wait until 2026-12-01T10:00:44\.000Z\.\n$/,
      );
      assert.deepStrictEqual(
        [report.state.cancelledAt, report.state.sendsEndBy, report.state.waited],
        ["2026-12-01T10:00:00.000Z", "2026-12-01T10:00:44.000Z", false],
      );
      assert.deepStrictEqual(slept, [], "it does not wait for what it cannot cover");
    });

    it("a second cancel keeps the first cancel's time and reason, and still waits before exit 0", async () => {
      endpoint = await startEndpoint(stackEndpoint(order));
      const first = {
        pk: { S: "campaign#spring" },
        state: { S: "cancelled" },
        reason: { S: "wrong price" },
        updated_at: { S: "2026-11-30T08:00:00.000Z" },
      };
      await ledger.put(first);
      const r = await run(cancel, ["--campaign", "spring", "--reason", "again"]);
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      assert.deepStrictEqual(await stateItem(), first);
      assert.match(
        r.stdout,
        /^Campaign spring: already cancelled since 2026-11-30T08:00:00\.000Z \(reason: wrong price\); its state is kept as the first cancel wrote it\.\n/,
      );
      assert.strictEqual(
        slept.reduce((a, b) => a + b, 0),
        WAIT_MS,
      );
      assert.match(r.stdout, /Nothing of campaign spring can send any more since 2026-12-01T10:00:44\.000Z:/);
    });

    it("--dry-run says it would set the state and wait, and writes nothing", async () => {
      endpoint = await startEndpoint(stackEndpoint(order));
      const r = await run(cancel, ["--campaign", "spring", "--dry-run"]);
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /^Campaign spring \(dry run\): would set its state to cancelled \(now live\), stop 1 running fan-out: spring-aaa\n  and delete schedule group campaign-spring \(ACTIVE\) with every pending schedule in it,\n  then wait 44 s for the sends already under way\.\n$/,
      );
      assert.deepStrictEqual(
        order.filter((o) => /UpdateItem|StopExecution|DELETE/.test(o)),
        [],
      );
      assert.strictEqual(await stateOf("spring"), "absent");
    });

    it("a DynamoDB endpoint that never answers: ended by --timeout-seconds, exit 1, saying the state is not set", async () => {
      endpoint = await startEndpoint(stackEndpoint(order));
      const hang = await startEndpoint(() => "hang");
      Object.assign(stateClock, realStateClock);
      try {
        const started = Date.now();
        const r = await run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.5"], {
          AWS_ENDPOINT_URL_DYNAMODB: hang.url,
        });
        const seconds = (Date.now() - started) / 1000;
        assert.ok(seconds >= 0.45 && seconds < 3, `took ${seconds} s`);
        assert.strictEqual(r.code, 1, r.stdout);
        assert.match(
          r.stdout,
          /- campaign state: not set to cancelled, so sender executions already started keep sending its mails\n/,
        );
        assert.match(
          r.stdout,
          /problem: campaign spring: UpdateItem campaign#spring in ledger-0a1b2c3 \(state cancelled\): no result within the command's time limit of 0.5 s/,
        );
        assert.match(r.stderr, /still waiting for campaign spring: UpdateItem campaign#spring/);
      } finally {
        await hang.close();
      }
    });

    it("a stack without the ledger output: exit 2, saying it predates the ledger", async () => {
      const old = path.join(tmp, "old-outputs.json");
      fs.writeFileSync(old, JSON.stringify({ stateMachineArn: SM, deadLetterQueueUrl: DLQ, region: "us-east-1" }));
      for (const cli of [cancel, pause, resume]) {
        const r = await runMain(cli, ["--campaign", "spring", "--outputs", old]);
        assert.strictEqual(r.code, 2);
        assert.match(
          r.stderr,
          /^error: missing stack output ledgerTableName: the stack predates the occurrence ledger, .*run `pulumi up`/,
        );
      }
    });
  });

  describe("cancel-campaign deletes the campaign's guardrail alarms (issue 36)", () => {
    const guarded = path.join(tmp, "guarded-outputs.json");
    fs.writeFileSync(
      guarded,
      JSON.stringify({
        stateMachineArn: SM,
        deadLetterQueueUrl: DLQ,
        region: "us-east-1",
        ledgerTableName: TABLE,
        guardrailAlarmPrefix: "sendtime-dev-guardrail-",
      }),
    );
    const DELETE_ALARMS = "GraniteServiceVersion20100801.DeleteAlarms";
    const DELETE_SCHEDULE = "/schedules/spring";
    /**
     * The stack's endpoint, CloudWatch on it too: DeleteAlarms answered by `alarms`, and Scheduler's DeleteSchedule of
     * the alarms' deletion schedule (in the clean-up group) by `schedule`.
     */
    const withCloudWatch = (alarms: () => Answer, schedule: () => Answer = () => ({ json: {} })) =>
      stackEndpoint(order, (q) =>
        q.target === DELETE_ALARMS
          ? alarms()
          : q.method === "DELETE" && q.url.startsWith("/schedules/")
            ? schedule()
            : undefined,
      );
    const scheduleDeletes = () =>
      endpoint!.requests.filter((q) => q.method === "DELETE" && q.url.startsWith(`${DELETE_SCHEDULE}?`));
    const deleteRequests = () => endpoint!.requests.filter((q) => q.target === DELETE_ALARMS);
    const cw = () => ({ AWS_ENDPOINT_URL_CLOUDWATCH: endpoint!.url });

    it("after the state write: one DeleteAlarms of its bounce and complaint alarms, said, exit 0", async () => {
      endpoint = await startEndpoint(withCloudWatch(() => ({ json: {} })));
      const r = await run(cancel, ["--campaign", "spring"], cw(), guarded);
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      const [del, ...more] = deleteRequests();
      assert.deepStrictEqual(more, []);
      assert.strictEqual(del.method, "POST");
      assert.deepStrictEqual(JSON.parse(del.body), {
        AlarmNames: [
          "sendtime-dev-guardrail-campaign-bounce-spring",
          "sendtime-dev-guardrail-campaign-complaint-spring",
        ],
      });
      const mutating = order.filter((o) => /UpdateItem|StopExecution|DELETE|DeleteAlarms/.test(o));
      assert.deepStrictEqual(mutating, [
        "dynamodb UpdateItem",
        "sfn/sqs StopExecution",
        "scheduler DELETE /schedule-groups/campaign-spring",
        "sfn/sqs DeleteAlarms",
        "scheduler DELETE /schedules/spring",
      ]);
      const [sched] = scheduleDeletes();
      assert.strictEqual(
        new URL(sched.url, "http://x").searchParams.get("groupName"),
        "sendtime-dev-guardrail-cleanup",
      );
      assert.match(
        r.stdout,
        /\n  Guardrail alarms sendtime-dev-guardrail-campaign-bounce-spring and sendtime-dev-guardrail-campaign-complaint-spring deleted\.\n  Nothing of campaign spring can send/,
      );
      const json = await run(cancel, ["--campaign", "spring", "--json"], cw(), guarded);
      assert.deepStrictEqual(JSON.parse(json.stdout).guardrailAlarms, {
        names: ["sendtime-dev-guardrail-campaign-bounce-spring", "sendtime-dev-guardrail-campaign-complaint-spring"],
        deleted: true,
        deletionSchedule: "sendtime-dev-guardrail-cleanup/spring",
        problem: null,
      });
    });

    it("the deletion schedule already gone (it fired, or never made) is no failure; one refused is a problem line, exit 1", async () => {
      const notFound = () => ({
        status: 404,
        headers: { "x-amzn-errortype": "ResourceNotFoundException" },
        json: { Message: "Schedule spring does not exist." },
      });
      endpoint = await startEndpoint(withCloudWatch(() => ({ json: {} }), notFound));
      const gone = await run(cancel, ["--campaign", "spring"], cw(), guarded);
      assert.strictEqual(gone.code, 0, gone.stdout + gone.stderr);
      assert.strictEqual(scheduleDeletes().length, 1);
      await endpoint.close();
      const denied = () => ({
        status: 403,
        headers: { "x-amzn-errortype": "AccessDeniedException" },
        json: { Message: "not authorized to perform: scheduler:DeleteSchedule" },
      });
      endpoint = await startEndpoint(withCloudWatch(() => ({ json: {} }), denied));
      const r = await run(cancel, ["--campaign", "spring"], cw(), guarded);
      assert.strictEqual(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /\n  problem: campaign spring: DeleteSchedule sendtime-dev-guardrail-cleanup\/spring: .*AccessDenied/,
      );
    });

    it("an id with a dot: the alarms of its tag (dots as _, then - and 8 hex digits of its sha256)", async () => {
      endpoint = await startEndpoint(withCloudWatch(() => ({ json: {} })));
      const r = await run(cancel, ["--campaign", "spring.2026"], cw(), guarded);
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      const tag = `spring_2026-${createHash("sha256").update("spring.2026").digest("hex").slice(0, 8)}`;
      assert.deepStrictEqual(JSON.parse(deleteRequests()[0].body).AlarmNames, [
        `sendtime-dev-guardrail-campaign-bounce-${tag}`,
        `sendtime-dev-guardrail-campaign-complaint-${tag}`,
      ]);
    });

    it("alarms already gone (ResourceNotFound) count as deleted: exit 0", async () => {
      endpoint = await startEndpoint(
        withCloudWatch(() => ({
          status: 404,
          json: { __type: "com.amazonaws.cloudwatch#ResourceNotFound", message: "alarms do not exist" },
        })),
      );
      const r = await run(cancel, ["--campaign", "spring"], cw(), guarded);
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Guardrail alarms .* deleted\./);
    });

    it("a DeleteAlarms refused: one problem line, the campaign stays cancelled and waited out, exit 1", async () => {
      endpoint = await startEndpoint(
        withCloudWatch(() => ({
          status: 400,
          json: { __type: "AccessDeniedException", message: "not authorized to perform: cloudwatch:DeleteAlarms" },
        })),
      );
      const r = await run(cancel, ["--campaign", "spring"], cw(), guarded);
      assert.strictEqual(r.code, 1, r.stdout + r.stderr);
      assert.strictEqual(await stateOf("spring"), "cancelled");
      assert.match(r.stdout, /\n  Nothing of campaign spring can send any more since 2026-12-01T10:00:44\.000Z:/);
      const problems = r.stdout.split("\n").filter((l) => l.includes("problem:"));
      assert.strictEqual(problems.length, 1, r.stdout);
      assert.match(
        problems[0],
        /^  problem: campaign spring: DeleteAlarms sendtime-dev-guardrail-campaign-bounce-spring, sendtime-dev-guardrail-campaign-complaint-spring: .*AccessDeniedException/,
      );
      assert.doesNotMatch(r.stdout, /NOT fully cancelled|Guardrail alarms .* deleted/);
    });

    it("a CloudWatch that never answers: DeleteAlarms ended by --timeout-seconds, named on a problem line, exit 1", async () => {
      endpoint = await startEndpoint(withCloudWatch(() => "hang"));
      const started = Date.now();
      const r = await run(cancel, ["--campaign", "spring", "--timeout-seconds", "0.5"], cw(), guarded);
      const seconds = (Date.now() - started) / 1000;
      assert.ok(seconds >= 0.45 && seconds < 3, `took ${seconds} s`);
      assert.strictEqual(r.code, 1, r.stdout);
      assert.strictEqual(await stateOf("spring"), "cancelled");
      assert.match(
        r.stdout,
        /problem: campaign spring: DeleteAlarms sendtime-dev-guardrail-campaign-bounce-spring, sendtime-dev-guardrail-campaign-complaint-spring: no result within the command's time limit of 0.5 s/,
      );
    });

    it("--dry-run names the alarms it would delete and sends no DeleteAlarms", async () => {
      endpoint = await startEndpoint(withCloudWatch(() => ({ json: {} })));
      const r = await run(cancel, ["--campaign", "spring", "--dry-run"], cw(), guarded);
      assert.strictEqual(r.code, 0, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /\n  It would delete guardrail alarms sendtime-dev-guardrail-campaign-bounce-spring and sendtime-dev-guardrail-campaign-complaint-spring\.\n$/,
      );
      assert.deepStrictEqual(deleteRequests(), []);
    });

    it("the state not written: the alarms are kept (the guardrail may still have to pause it)", async () => {
      endpoint = await startEndpoint(withCloudWatch(() => ({ json: {} })));
      const refuse = await startEndpoint(() => ({
        status: 400,
        json: { __type: "com.amazonaws.dynamodb.v20120810#AccessDeniedException", message: "no" },
      }));
      try {
        const r = await run(
          cancel,
          ["--campaign", "spring"],
          { ...cw(), AWS_ENDPOINT_URL_DYNAMODB: refuse.url },
          guarded,
        );
        assert.strictEqual(r.code, 1, r.stdout);
        assert.match(r.stdout, /- campaign state: not set to cancelled/);
        assert.deepStrictEqual(deleteRequests(), []);
      } finally {
        await refuse.close();
      }
    });

    it("a stack without guardrails (no output guardrailAlarmPrefix): no DeleteAlarms, nothing said of alarms", async () => {
      endpoint = await startEndpoint(withCloudWatch(() => ({ json: {} })));
      for (const args of [
        ["--campaign", "spring"],
        ["--campaign", "spring", "--dry-run"],
      ]) {
        const r = await run(cancel, args, cw());
        assert.strictEqual(r.code, 0, r.stdout + r.stderr);
        assert.doesNotMatch(r.stdout, /alarm/i);
      }
      assert.deepStrictEqual(deleteRequests(), []);
      const json = await run(cancel, ["--campaign", "spring", "--json"], cw());
      assert.strictEqual(JSON.parse(json.stdout).guardrailAlarms, null);
    });
  });

  describe("pause-campaign and resume-campaign", () => {
    it("pause, then resume: paused after the wait, live again, the held sends of this campaign counted and left in the queue", async () => {
      const released: string[] = [];
      const pointer = (campaign: string, outcome: string, reason: string, recipients: string[]) => ({
        campaign,
        schedule_name: "b-0001",
        scheduled_time: "2026-12-01T10:05:00Z",
        recipients,
        outcome,
        reason,
      });
      endpoint = await startEndpoint(
        stackEndpoint(
          order,
          queue(
            [
              pointer("spring", "skipped", "paused", ["a1", "a2"]),
              pointer("autumn", "skipped", "paused", ["z1"]),
              pointer("spring", "not-sent", "MessageRejected", ["a3"]),
              pointer("spring", "skipped", "paused", ["a4"]),
            ],
            released,
          ),
        ),
      );
      const paused = await run(pause, ["--campaign", "spring", "--reason", "legal review"]);
      assert.strictEqual(paused.code, 0, paused.stdout + paused.stderr);
      assert.strictEqual(await stateOf("spring"), "paused");
      assert.strictEqual(
        slept.reduce((a, b) => a + b, 0),
        WAIT_MS,
      );
      assert.ok(paused.printedAt! >= T0 + WAIT_MS);
      assert.strictEqual(
        paused.stdout,
        "Campaign spring: paused at 2026-12-01T10:00:00.000Z (reason: legal review).\n" +
          "  No send of spring leaves until resume-campaign: sends already under way ended by 2026-12-01T10:00:44.000Z.\n" +
          "  Its schedules keep firing; the sender holds each send in the dead-letter queue for redrive after resume.\n",
      );

      const shown = await run(status, ["--campaign", "spring", "--json"]);
      assert.deepStrictEqual(JSON.parse(shown.stdout).campaignState, {
        state: "paused",
        reason: "legal review",
        updatedAt: "2026-12-01T10:00:00.000Z",
      });

      const resumed = await run(resume, ["--campaign", "spring"]);
      assert.strictEqual(resumed.code, 0, resumed.stdout + resumed.stderr);
      assert.strictEqual(await stateOf("spring"), "live");
      assert.strictEqual(
        resumed.stdout,
        "Campaign spring: live again at 2026-12-01T10:00:44.000Z; it was paused since 2026-12-01T10:00:00.000Z (reason: legal review).\n" +
          "  2 held sends (3 recipients) wait in the dead-letter queue: `npm run -s redrive -- --campaign spring` sends them.\n" +
          "  Their time has passed: each follows the campaign's missed-time policy (skip: not sent; send-now: sent if late by\n" +
          "  less than the grace; next-day: at its local time on the first later day), or redrive's --missed.\n",
      );
      assert.deepStrictEqual(
        released.sort(),
        ["h0:0", "h1:0", "h2:0", "h3:0"],
        "every message read made visible again",
      );
    });

    it("a cancelled campaign cannot be resumed or paused: exit 1, saying since when and why; the state stays cancelled", async () => {
      endpoint = await startEndpoint(stackEndpoint(order, queue([], [])));
      await ledger.put({
        pk: { S: "campaign#autumn" },
        state: { S: "cancelled" },
        reason: { S: "wrong list" },
        updated_at: { S: "2026-11-30T08:00:00.000Z" },
      });
      for (const cli of [resume, pause]) {
        const r = await run(cli, ["--campaign", "autumn"]);
        assert.strictEqual(r.code, 1, r.stdout);
        assert.match(
          r.stderr,
          /^error: campaign autumn is cancelled since 2026-11-30T08:00:00.000Z \(reason: wrong list\): a cancelled campaign never sends again, so it cannot be set (live|paused)/,
        );
        assert.strictEqual(await stateOf("autumn"), "cancelled");
      }
    });

    it("pause with a time limit shorter than the wait: paused, exit 1, naming until when sends may be under way", async () => {
      endpoint = await startEndpoint(stackEndpoint(order));
      const r = await run(pause, ["--campaign", "summer", "--timeout-seconds", "5"]);
      assert.strictEqual(r.code, 1, r.stdout);
      assert.strictEqual(await stateOf("summer"), "paused");
      assert.match(
        r.stdout,
        /sends that read the state before the pause may still be under way until 2026-12-01T10:00:44\.000Z \(the wait of 44 s does not fit in the time limit of 5 s\)/,
      );
    });

    it("a DynamoDB endpoint that never answers: pause ends at --timeout-seconds, exit 1, naming the call", async () => {
      endpoint = await startEndpoint(stackEndpoint(order));
      const hang = await startEndpoint(() => "hang");
      Object.assign(stateClock, realStateClock);
      try {
        const started = Date.now();
        const r = await run(pause, ["--campaign", "spring", "--timeout-seconds", "0.5"], {
          AWS_ENDPOINT_URL_DYNAMODB: hang.url,
        });
        assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`);
        assert.strictEqual(r.code, 1);
        assert.match(
          r.stderr,
          /error: campaign spring: UpdateItem campaign#spring in ledger-0a1b2c3 \(state paused\): no result within the command's time limit of 0.5 s/,
        );
      } finally {
        await hang.close();
      }
    });
  });

  it("campaign-status shows a cancelled campaign's state with its reason and time", async () => {
    endpoint = await startEndpoint(stackEndpoint(order, queue([], [])));
    await ledger.put({
      pk: { S: "campaign#winter" },
      state: { S: "cancelled" },
      reason: { S: "wrong list" },
      updated_at: { S: "2026-11-30T08:00:00.000Z" },
    });
    const r = await run(status, ["--campaign", "winter"]);
    assert.match(
      r.stdout,
      /^Campaign winter: group campaign-winter does not exist\n  state: cancelled since 2026-11-30T08:00:00.000Z \(reason: wrong list\)\n/,
    );
    const live = await run(status, ["--campaign", "spring"]);
    assert.match(live.stdout, /\n  state: live\n/);
  });

  it("a state the ledger holds that is not a state: campaign-status says so on that line, exit 1", async () => {
    endpoint = await startEndpoint(stackEndpoint(order, queue([], [])));
    await ledger.put({ pk: { S: "campaign#winter" }, state: { S: "frozen" } });
    const r = await run(status, ["--campaign", "winter"]);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stdout,
      /\n  state: could not be read: campaign winter: the ledger's state item campaign#winter holds state \{"S":"frozen"\}; expected one of live, paused, cancelled\n/,
    );
  });

  it("--reason must be one line of 1 to 500 characters (exit 2, nothing written)", async () => {
    endpoint = await startEndpoint(stackEndpoint(order));
    for (const reason of ["", "two\nlines", "x".repeat(501)]) {
      const r = await run(pause, ["--campaign", "spring", "--reason", reason]);
      assert.strictEqual(r.code, 2, JSON.stringify(reason));
      assert.strictEqual(r.stderr, "error: --reason: give one line of 1 to 500 characters\n");
    }
    assert.strictEqual(await stateOf("spring"), "absent");
  });
});

describe("which dead letters a pause held", () => {
  const pointer = { schedule_name: "b-1", scheduled_time: "2026-12-01T10:05:00Z", recipients: ["a1"] };
  it("a pointer of the campaign (by its id, or by the tag the sender sees) skipped because paused", () => {
    const held = (p: object, id = "spring.2026") => isHeldPointer(JSON.stringify(p), id) !== undefined;
    const paused = { ...pointer, outcome: "skipped", reason: "paused" };
    assert.ok(held({ ...paused, campaign: "spring.2026" }));
    // campaignTag("spring.2026"): the dot as _, then the first 8 hex digits of the id's sha256
    const tag = `spring_2026-${createHash("sha256").update("spring.2026").digest("hex").slice(0, 8)}`;
    assert.ok(held({ ...paused, campaign: tag }));
    assert.ok(!held({ ...paused, campaign: "spring_2026" }), "another campaign's id");
    assert.ok(!held({ ...paused, campaign: "spring.2026", reason: "cancelled" }));
    assert.ok(!held({ ...paused, campaign: "spring.2026", outcome: "not-sent" }));
    assert.ok(!held({ ...paused, campaign: "spring.2026", recipients: "a1" }));
    assert.strictEqual(isHeldPointer("not json", "spring.2026"), undefined);
    assert.strictEqual(isHeldPointer(undefined, "spring.2026"), undefined);
  });
});
