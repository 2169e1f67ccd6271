/**
 * The SendBulkEmail request SES receives for a launcher-made bulk plan, end to end (launch-campaign --bulk → plan.jsonl
 * → the fan-out → the schedule's Input → the sender → SES), compared byte for byte with the request captured from the
 * code before bulk plan lines stopped carrying their headers (tests/fixtures/bulk-wire-requests.json). The headers in
 * that capture were checked by hand: `List-Unsubscribe: <link>` with link = the entry's unsubscribe_url, and
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. Since dry runs stopped signing (they never have the stack's
 * key), each token's signature in the capture is the unsigned one, 43 A's; nothing else in it changed.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../../../scripts/launch-campaign";
import { fanOutDefinition, FanOutInput, FanOutParameters } from "../../../infra/state-machines/fanout-definition";
import { senderTestParameters, withLedger } from "../../helpers/sender-ledger";
import { senderDefinition } from "../../../infra/state-machines/sender-definition";
import { runStateMachine, StatesError } from "../../helpers/asl-interpreter";
import { runJsonataMachine } from "../../helpers/jsonata-interpreter";
import { runMain } from "../../helpers/cli";
import { fanOutTestParameters, SENDER_ARN } from "../../helpers/fanout-params";

const PARAMS: FanOutParameters = fanOutTestParameters({ toleratedFailurePercentage: 100, senderArn: SENDER_ARN });
const INPUT: FanOutInput = {
  campaign_id: "wire",
  plan_bucket: "recipients-bucket",
  plan_key: "plans/wire/launch-1.jsonl",
  window_minutes: 7,
  campaign_tag: "wire",
};
const FIXTURE = path.join(__dirname, "..", "..", "fixtures", "bulk-wire-requests.json");

async function bulkPlan(): Promise<string> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-wire-"));
  const list = path.join(tmp, "list.csv");
  const zones = ["America/New_York", "Europe/Paris", "Asia/Tokyo"];
  const rows = Array.from({ length: 60 }, (_, i) => `r${i},Person.${i}@Example.com,${zones[i % 3]},"Zoë ""${i}"""`);
  fs.writeFileSync(list, ["id,email,timezone,first_name", ...rows].join("\n") + "\n");
  const out = path.join(tmp, "out");
  const args = ["--campaign", "wire", "--template", "welcome", "--date", "2026-12-01", "--hour", "9"];
  const more = ["--now", "2026-11-20T00:00:00Z", "--templates", "none", "--recipients", list, "--dry-run", "--bulk"];
  const r = await runMain(main, [...args, ...more, "--json", "--out", out]);
  assert.strictEqual(r.code, 0, r.stderr);
  return fs.readFileSync(path.join(out, "plan.jsonl"), "utf8");
}

/** Every SendBulkEmail request the plan's schedules make when they fire, in schedule order. */
async function sesRequests(plan: string): Promise<unknown[]> {
  const created: any[] = [];
  runStateMachine(fanOutDefinition(PARAMS), INPUT, {
    getObject: () => plan,
    writeResults: () => undefined,
    sdk: (_service: string, action: string, params: any) => {
      if (action === "createScheduleGroup") return {};
      if (action !== "createSchedule") throw new StatesError("Unexpected", action);
      created.push(params);
      return { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${params.GroupName}/${params.Name}` };
    },
  });
  const requests: unknown[] = [];
  const sender = senderDefinition(
    senderTestParameters({ deadLetterQueueUrl: "https://sqs.us-east-1.amazonaws.com/123456789012/dlq" }),
  );
  for (const s of created) {
    assert.strictEqual(s.Target.Arn, SENDER_ARN);
    const input = {
      ...JSON.parse(s.Target.Input),
      schedule: `schedule/${s.Name}`,
      scheduled_time: "2026-12-01T09:00:00Z",
    };
    await runJsonataMachine(
      sender,
      input,
      withLedger({
        call: (_service, _action, args) => {
          requests.push(args);
          return { BulkEmailEntryResults: args.BulkEmailEntries.map(() => ({ Status: "SUCCESS", MessageId: "m" })) };
        },
      }),
      { startTime: "2026-12-01T09:00:00Z" },
    );
  }
  return requests;
}

describe("bulk sends on the wire: the SendBulkEmail request SES receives", () => {
  it("is byte for byte the request sendtime made when bulk plan lines carried their headers", async () => {
    const requests = await sesRequests(await bulkPlan());
    if (process.env.SENDTIME_CAPTURE_WIRE === "1") fs.writeFileSync(FIXTURE, JSON.stringify(requests));
    // JSON.parse keeps the key order: the compact text of both is the request's bytes as the SDK would send them.
    assert.strictEqual(JSON.stringify(requests), JSON.stringify(JSON.parse(fs.readFileSync(FIXTURE, "utf8"))));
  });

  it("each entry's headers are exactly <its unsubscribe_url> and List-Unsubscribe=One-Click (checked apart from the capture)", async () => {
    const requests = (await sesRequests(await bulkPlan())) as any[];
    let entries = 0;
    for (const r of requests)
      for (const e of r.BulkEmailEntries) {
        const data = JSON.parse(e.ReplacementEmailContent.ReplacementTemplate.ReplacementTemplateData);
        assert.match(data.unsubscribe_url, /^https:\/\/unsubscribe\.invalid\/\?t=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
        assert.deepStrictEqual(e.ReplacementHeaders, [
          { Name: "List-Unsubscribe", Value: "<" + data.unsubscribe_url + ">" },
          { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" },
        ]);
        entries++;
      }
    assert.strictEqual(entries, 60, "every recipient once");
  });
});
