/**
 * reschedule of one recipient held in a bulk schedule (launch-campaign --bulk), on the wire: a local endpoint that
 * answers like EventBridge Scheduler (REST-JSON: GET/PUT/POST/DELETE /schedules/{name}, GET /schedules?NamePrefix=).
 * The bulk schedule's Input is written by hand with escapes JSON.stringify would not choose (`\/`, `\u00e9`, a space
 * after a comma), so "every other entry byte for byte" is checked against text, not against a re-serialised object.
 * Expected times by hand: 2026-12-02 14:00 America/New_York is 19:00Z (EST, UTC-5).
 */
import * as assert from "assert";
import { Answer, Endpoint, SeenRequest, startEndpoint, withEnv } from "../helpers/aws-endpoint";
import { runMain } from "../helpers/cli";
import { main as reschedule } from "../../scripts/reschedule";

const GROUP = "campaign-spring";
const SENDER = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev";
const ROLE = "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b";
const DLQ_ARN = "arn:aws:sqs:us-east-1:123456789012:scheduler-target-dlq-226c700";
const arn = (name: string) => `arn:aws:scheduler:us-east-1:123456789012:schedule/${GROUP}/${name}`;

/** One entry's text, as the fan-out might have written it: escapes kept as they are. */
const entry = (id: string) =>
  `{"Destination":{"ToAddresses":["${id}@example.com"]},"ReplacementEmailContent":{"ReplacementTemplate":{"ReplacementTemplateData":"{\\"name\\":\\"Ren\\u00e9e ${id}\\",\\"url\\":\\"https:\\/\\/x.example\\/${id}\\"}"}},"ReplacementHeaders":[{"Name":"List-Unsubscribe","Value":"<https://u.example.com/?t=${id}.sig>"},{"Name":"List-Unsubscribe-Post","Value":"List-Unsubscribe=One-Click"}]}`;
/** The sender's input holding these recipients' entries, in this order. */
const input = (step: number, ids: string[]) =>
  `{"bulk":{"FromEmailAddress":"news@mail.example.com","ConfigurationSetName":"sendtime","DefaultContent":{"Template":{"TemplateName":"spring","TemplateData":"{}"}},"DefaultEmailTags":[{"Name":"campaign","Value":"spring"},{"Name":"step","Value":"${step}"}],"BulkEmailEntries":[${ids.map(entry).join(",")}]}, "recipients":[${ids.map((i) => `"${i}"`).join(",")}],"campaign":"spring","schedule":"<aws.scheduler.schedule-arn>","scheduled_time":"<aws.scheduler.scheduled-time>"}`;

/** A bulk schedule as GetSchedule returns it (read-only fields included). */
function bulkSchedule(name: string, step: number, ids: string[], at: string) {
  return {
    Arn: arn(name),
    Name: name,
    GroupName: GROUP,
    State: "ENABLED",
    CreationDate: 1764590400,
    LastModificationDate: 1764590400,
    ScheduleExpression: `at(${at})`,
    ScheduleExpressionTimezone: "America/New_York",
    FlexibleTimeWindow: { Mode: "FLEXIBLE", MaximumWindowInMinutes: 15 },
    ActionAfterCompletion: "DELETE",
    Target: {
      Arn: SENDER,
      RoleArn: ROLE,
      Input: input(step, ids),
      RetryPolicy: { MaximumEventAgeInSeconds: 86400, MaximumRetryAttempts: 185 },
      DeadLetterConfig: { Arn: DLQ_ARN },
    },
  };
}

const STEP1 = "bulk.1.20261202T1400Z.0";
const STEP2 = "bulk.2.20261205T1400Z.0";

const error = (status: number, type: string, message: string): Answer => ({
  status,
  headers: { "x-amzn-errortype": type, "content-type": "application/json" },
  json: { Message: message },
});

class FakeScheduler {
  schedules = new Map<string, any>();
  override: (q: SeenRequest) => Answer | undefined = () => undefined;
  /** DeleteSchedule of a name that is not there (remove tries the recipient's own schedule first): nothing written. */
  missed = new Set<SeenRequest>();
  constructor(...s: any[]) {
    for (const x of s) this.schedules.set(x.Name, x);
  }
  answer = (q: SeenRequest): Answer => {
    const o = this.override(q);
    if (o) return o;
    const url = new URL(q.url, "http://x");
    if (url.pathname === "/schedules") {
      const prefix = url.searchParams.get("NamePrefix") ?? "";
      const names = [...this.schedules.keys()].filter((n) => n.startsWith(prefix)).sort();
      return { json: { Schedules: names.map((Name) => ({ Name, GroupName: GROUP, State: "ENABLED" })) } };
    }
    const name = decodeURIComponent(url.pathname.replace(/^\/schedules\//, ""));
    const body = q.body ? JSON.parse(q.body) : {};
    if (q.method === "GET")
      return this.schedules.has(name)
        ? { json: this.schedules.get(name) }
        : error(404, "ResourceNotFoundException", "no schedule");
    if (q.method === "DELETE") {
      if (!this.schedules.delete(name)) {
        this.missed.add(q);
        return error(404, "ResourceNotFoundException", "no schedule");
      }
      return { json: {} };
    }
    const { ClientToken, ...request } = body;
    if (q.method === "POST" && this.schedules.has(name)) return error(409, "ConflictException", "exists");
    if (q.method === "PUT" && !this.schedules.has(name)) return error(404, "ResourceNotFoundException", "no schedule");
    this.schedules.set(name, { Name: name, ...request });
    return { json: { ScheduleArn: arn(name) } };
  };
}

let fake: FakeScheduler;
const writes = (e: Endpoint) => e.requests.filter((q) => q.method !== "GET" && !fake.missed.has(q));

describe("reschedule of one recipient held in a bulk schedule, on the wire (local Scheduler endpoint)", function () {
  this.timeout(20_000);
  let endpoint: Endpoint | undefined;
  afterEach(async () => endpoint?.close());
  const run = async (aws: FakeScheduler, args: string[]) => {
    fake = aws;
    endpoint = await startEndpoint(aws.answer);
    return withEnv({ AWS_ENDPOINT_URL_SCHEDULER: endpoint.url }, () =>
      runMain(reschedule, ["--campaign", "spring", "--now", "2026-11-29T12:00:00Z", ...args]),
    );
  };
  const twoSteps = () =>
    new FakeScheduler(
      bulkSchedule(STEP1, 1, ["a1", "b2", "c3"], "2026-12-02T09:00:00"),
      bulkSchedule(STEP2, 2, ["a1", "b2", "c3"], "2026-12-05T09:00:00"),
    );

  it("--remove of one entry: UpdateSchedule keeps every other field and every other entry byte for byte", async () => {
    const aws = twoSteps();
    const before = aws.schedules.get(STEP1);
    const r = await run(aws, ["--recipient", "b2", "--remove", "--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const [update, ...more] = writes(endpoint!);
    assert.deepStrictEqual(more, [], "one write");
    assert.deepStrictEqual([update.method, decodeURIComponent(update.url)], ["PUT", `/schedules/${STEP1}`]);
    const { ClientToken, ...sent } = JSON.parse(update.body);
    const { Arn, CreationDate, LastModificationDate, Name, ...kept } = before;
    assert.deepStrictEqual(sent, { ...kept, Target: { ...kept.Target, Input: sent.Target.Input } });
    // By hand: the same text with b2's entry and id cut out, a1 and c3 as they were (escapes and the space kept).
    assert.strictEqual(sent.Target.Input, input(1, ["a1", "c3"]));
    assert.ok(sent.Target.Input.includes(entry("a1") + "," + entry("c3")));
    assert.strictEqual(aws.schedules.get(STEP2).Target.Input, input(2, ["a1", "b2", "c3"]), "step 2 untouched");
    assert.deepStrictEqual(JSON.parse(r.stdout), {
      campaign: "spring",
      schedule: STEP1,
      group: GROUP,
      removed: true,
      bulk: { entriesLeft: 2 },
    });
  });

  it("--remove of a schedule's only entry deletes the schedule", async () => {
    const aws = new FakeScheduler(bulkSchedule(STEP1, 1, ["b2"], "2026-12-02T09:00:00"));
    const r = await run(aws, ["--recipient", "b2", "--remove"]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      writes(endpoint!).map((q) => [q.method, decodeURIComponent(q.url.split("?")[0])]),
      [["DELETE", `/schedules/${STEP1}`]],
    );
    assert.match(r.stdout, /its only entry: schedule deleted/);
  });

  it("--schedule NAME reads that schedule only (no ListSchedules); a name of another step is refused (exit 2)", async () => {
    const aws = twoSteps();
    const r = await run(aws, ["--recipient", "c3", "--remove", "--schedule", STEP1]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.ok(!endpoint!.requests.some((q) => q.url.startsWith("/schedules?")), "not listed");
    assert.strictEqual(aws.schedules.get(STEP1).Target.Input, input(1, ["a1", "b2"]));
    await endpoint!.close();
    const bad = await run(aws, ["--recipient", "c3", "--remove", "--schedule", STEP2]);
    assert.strictEqual(bad.code, 2);
    assert.match(bad.stderr, /--schedule bulk\.2\.20261205T1400Z\.0: not the name of a bulk schedule of step 1/);
  });

  it("a bulk schedule that may have fired is not rewritten (exit 1, nothing written)", async () => {
    const aws = twoSteps();
    // 09:00 New York = 14:00Z; at 14:05Z its 15-minute window is open.
    fake = aws;
    endpoint = await startEndpoint(aws.answer);
    const r = await withEnv({ AWS_ENDPOINT_URL_SCHEDULER: endpoint.url }, () =>
      runMain(reschedule, ["--campaign", "spring", "--now", "2026-12-02T14:05:00Z", "--recipient", "b2", "--remove"]),
    );
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /entry 2 of 3 of bulk schedule bulk\.1\.20261202T1400Z\.0\) is due at 2026-12-02T14:00:00\.000Z .* may have fired/,
    );
    assert.deepStrictEqual(writes(endpoint), []);
  });

  it("a recipient in no schedule at all: one line saying where it looked (exit 1)", async () => {
    const r = await run(twoSteps(), ["--recipient", "z9", "--remove"]);
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /no schedule "z9-1" .* \(nor an entry of any bulk schedule of the campaign\)/);
  });

  it("--at moves the entry to a one-entry bulk schedule <id>-<step> at the new time; the others stay byte for byte", async () => {
    const aws = twoSteps();
    const r = await run(aws, ["--recipient", "b2", "--local-time", "2026-12-02T14:00", "--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const [update, create, ...more] = writes(endpoint!);
    assert.deepStrictEqual(more, []);
    assert.deepStrictEqual(
      [update.method, create.method, decodeURIComponent(create.url)],
      ["PUT", "POST", "/schedules/b2-1"],
    );
    assert.strictEqual(JSON.parse(update.body).Target.Input, input(1, ["a1", "c3"]));
    const { ClientToken, ...created } = JSON.parse(create.body);
    const { Arn, CreationDate, LastModificationDate, Name, ...kept } = bulkSchedule(
      STEP1,
      1,
      ["b2"],
      "2026-12-02T14:00:00",
    );
    assert.deepStrictEqual(created, kept, "the bulk schedule's fields, its time, and b2's entry alone");
    assert.strictEqual(created.Target.Input, input(1, ["b2"]));
    const report = JSON.parse(r.stdout);
    assert.deepStrictEqual(report.to, {
      expression: "at(2026-12-02T14:00:00)",
      timezone: "America/New_York",
      utc: "2026-12-02T19:00:00.000Z",
    });
    assert.deepStrictEqual(report.bulk, { from: STEP1, entriesLeft: 2 });
    assert.strictEqual(report.schedule, "b2-1");
  });

  it("--at after the recipient's step 2 (an entry of another bulk schedule) is refused: in order (exit 1, nothing written)", async () => {
    const aws = twoSteps();
    const r = await run(aws, ["--recipient", "b2", "--local-time", "2026-12-05T11:00"]);
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /would come after step 2 \(entry of bulk\.2\.20261205T1400Z\.0, due 2026-12-05T14:00:00\.000Z/,
    );
    assert.deepStrictEqual(writes(endpoint!), []);
  });

  it("--at is checked as for a schedule of its own, in the same words: HH:MM for a one-time send, a time under a minute ahead (exit 2, nothing written)", async () => {
    let r = await run(twoSteps(), ["--recipient", "b2", "--local-time", "07:30"]);
    assert.strictEqual(r.code, 2);
    assert.match(
      r.stderr,
      /--local-time 07:30: recipient b2 step 1 \(entry 2 of 3 of bulk schedule bulk\.1\.20261202T1400Z\.0\) is a one-time send \(at\(2026-12-02T09:00:00\)\): give --local-time YYYY-MM-DDTHH:MM/,
    );
    assert.deepStrictEqual(writes(endpoint!), []);
    await endpoint!.close();
    // 07:00 New York on 2026-11-29 is 12:00Z (EST, UTC-5): the very time of --now.
    r = await run(twoSteps(), ["--recipient", "b2", "--local-time", "2026-11-29T07:00"]);
    assert.strictEqual(r.code, 2);
    assert.match(
      r.stderr,
      /--local-time: 2026-11-29T12:00:00\.000Z \(America\/New_York\) is less than a minute from now \(2026-11-29T12:00:00\.000Z\); a schedule can only move to a time at least a minute ahead/,
    );
    assert.deepStrictEqual(writes(endpoint!), []);
  });

  it("--at within 60 minutes of step 2 is refused too", async () => {
    const r = await run(twoSteps(), ["--recipient", "b2", "--step-number", "2", "--local-time", "2026-12-02T09:30"]);
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /within 60 minutes of step 1/);
  });

  it("a failed CreateSchedule puts the entry back: the bulk schedule's Input is as it was (exit 1, saying so)", async () => {
    const aws = twoSteps();
    aws.override = (q) => (q.method === "POST" ? error(400, "ValidationException", "Invalid RoleArn") : undefined);
    const r = await run(aws, ["--recipient", "b2", "--local-time", "2026-12-02T14:00"]);
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /CreateSchedule b2-1 .*Invalid RoleArn.*the entry was put back in it: nothing changed/);
    const puts = writes(endpoint!).filter((q) => q.method === "PUT");
    assert.strictEqual(puts.length, 2);
    assert.strictEqual(JSON.parse(puts[1].body).Target.Input, input(1, ["a1", "b2", "c3"]));
    assert.strictEqual(aws.schedules.get(STEP1).Target.Input, input(1, ["a1", "b2", "c3"]));
    assert.ok(!aws.schedules.has("b2-1"));
  });

  it("a moved entry is found by its own name next time: moved again with UpdateSchedule, the step 2 entry still checked", async () => {
    const aws = twoSteps();
    assert.strictEqual((await run(aws, ["--recipient", "b2", "--local-time", "2026-12-02T14:00"])).code, 0);
    await endpoint!.close();
    const again = await run(aws, ["--recipient", "b2", "--local-time", "2026-12-05T11:00"]);
    assert.strictEqual(again.code, 1, "after step 2, held in bulk.2");
    assert.match(again.stderr, /would come after step 2 \(entry of bulk\.2/);
    await endpoint!.close();
    const ok = await run(aws, ["--recipient", "b2", "--local-time", "2026-12-03T10:00"]);
    assert.strictEqual(ok.code, 0, ok.stderr);
    assert.deepStrictEqual(
      writes(endpoint!).map((q) => [q.method, decodeURIComponent(q.url)]),
      [["PUT", "/schedules/b2-1"]],
    );
    assert.strictEqual(aws.schedules.get("b2-1").ScheduleExpression, "at(2026-12-03T10:00:00)");
    assert.strictEqual(aws.schedules.get("b2-1").Target.Input, input(1, ["b2"]));
  });
});
