/**
 * The README's and docs/cost.md's million-email table held to the cost model in code (infra/core/plan/send-cost.ts,
 * quotas.ts): the orchestration figures are the model's for the two plan shapes tests/infra/cost-model.test.ts works
 * out by hand, and SES's and S3's lines are the prices docs/cost.md states, multiplied out here.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import {
  executionUnits,
  INVOCATION_PRICE,
  Occurrence,
  orchestrationPerMillion,
  UnitTally,
} from "../../infra/core/plan/send-cost";
import { ROOT } from "../helpers/cli";

const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
const COST = fs.readFileSync(path.join(ROOT, "docs", "cost.md"), "utf8");

/** The prices docs/cost.md states (us-east-1 list prices). */
const SES_PER_EMAIL = 0.1 / 1_000;
const S3_GB_MONTH = 0.023;

const OCC: Occurrence = {
  scheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-spring/bulk.1.20261201T1400Z.0",
  scheduledTime: "2026-12-01T14:00:00Z",
  campaign: "spring",
  startTime: "2026-12-01T14:00:00.210Z",
  executionId: `arn:aws:states:us-east-1:123456789012:express:sendtime-sender-dev:${"0".repeat(36)}:${"0".repeat(36)}`,
};
const ENTRIES = Array.from({ length: 50 }, (_, i) => ({ recipient: `r${i}`, email: `r${i}@example.com` }));

/** The model's orchestration for one schedule per recipient (a 489-byte line, the bench's) and for bulk lines of 50. */
function orchestration() {
  const one = { ...OCC, scheduleArn: OCC.scheduleArn.replace("bulk.1.20261201T1400Z.0", "r7-1") };
  const single = new UnitTally();
  for (let i = 0; i < 100; i++) single.add(executionUnits(one, [ENTRIES[7]], { optOuts: false }), 1);
  const perRecipient = orchestrationPerMillion(
    { schedules: 100, entries: 100, lineBytes: 489, batchSize: 400, innerConcurrency: 25 },
    { senderExecutions: true, units: single },
  );
  const grouped = new UnitTally();
  for (let i = 0; i < 200; i++) grouped.add(executionUnits(OCC, ENTRIES, { optOuts: false }), 50);
  const bulk = orchestrationPerMillion(
    { schedules: 200, entries: 10_000, lineBytes: 13_644, batchSize: Number.MAX_SAFE_INTEGER, innerConcurrency: 25 },
    { senderExecutions: true, units: grouped },
  );
  return { perRecipient, bulk };
}

const dollars = (x: number) => `$${x.toFixed(2)}`;

describe("the README's cost of a million emails (held to the cost model)", () => {
  const { perRecipient, bulk } = orchestration();
  const ses = 1_000_000 * SES_PER_EMAIL;
  // The plan kept 30 days (a month of storage): a million 489-byte lines, or 20,000 bulk lines of 13,644 bytes.
  const s3 = { perRecipient: (1_000_000 * 489 * S3_GB_MONTH) / 1e9, bulk: (20_000 * 13_644 * S3_GB_MONTH) / 1e9 };

  it("the model's orchestration is the figure the pages give ($4.49 per recipient, $0.13 bulk: cost-model.test.ts works both out by hand)", () => {
    assert.strictEqual(dollars(perRecipient.total), "$4.49");
    assert.strictEqual(dollars(bulk.total), "$0.13");
    assert.ok(
      README.includes(`| ${dollars(perRecipient.total)} | ${dollars(bulk.total)} |`),
      "README's orchestration row",
    );
    assert.ok(COST.includes(`**${dollars(perRecipient.total)}**`) && COST.includes(`**${dollars(bulk.total)}**`));
  });

  it("docs/cost.md's parts are the model's parts", () => {
    const row = (part: string) => {
      const line = COST.split("\n").find((l) => l.startsWith(`| ${part}`));
      assert.ok(line, part);
      return line!
        .split("|")
        .slice(2, 4)
        .map((c) => c.trim());
    };
    assert.deepStrictEqual(row("the fan-out"), [dollars(perRecipient.fanOut), dollars(bulk.fanOut)]);
    assert.deepStrictEqual(row("EventBridge Scheduler"), [
      dollars(perRecipient.invocations),
      dollars(bulk.invocations),
    ]);
    assert.deepStrictEqual(row("the one sender"), [dollars(perRecipient.sender), dollars(bulk.sender)]);
    assert.deepStrictEqual(row("DynamoDB"), [
      dollars(perRecipient.ledgerWrites + perRecipient.ledgerReads),
      dollars(bulk.ledgerWrites + bulk.ledgerReads),
    ]);
    assert.deepStrictEqual(row("SES"), [dollars(ses), dollars(ses)]);
  });

  it("the Scheduler price the README states is the model's", () => {
    assert.strictEqual(INVOCATION_PRICE * 1_000_000, 1);
    assert.match(README, /Scheduler \(\$1\.00 per million invocations, 14 million a month free\)/);
  });

  it("the totals add up: SES, orchestration and S3", () => {
    assert.strictEqual(dollars(s3.perRecipient), "$0.01");
    assert.strictEqual(dollars(s3.bulk), "$0.01");
    const totals = [ses + perRecipient.total + s3.perRecipient, ses + bulk.total + s3.bulk].map(dollars);
    assert.deepStrictEqual(totals, ["$104.50", "$100.13"]);
    for (const page of [README, COST])
      assert.ok(page.includes(`| **total** | **≈ ${totals[0]}** | **≈ ${totals[1]}** |`), "the total row");
    assert.ok(README.includes(`| SES ($0.10 per 1,000 emails) | ${dollars(ses)} | ${dollars(ses)} |`));
  });
});
