/**
 * Pace and cost of the fan-out each shipped stack deploys, read from its rendered definition: the README's targets
 * (≥ 90% of the CreateSchedule quota asked for, ≤ $0.10 of orchestration per million rows) hold for both.
 */
import * as assert from "assert";
import { PlanRow } from "../../infra/state-machines/fanout-definition";
import {
  fanOutCostPerMillionRows,
  pacing,
  rowsPerBatch,
  scheduler,
  stepFunctionsPricing,
} from "../../infra/core/plan/quotas";
import { readStackConfig } from "../../scripts/lib/offline/mock-stack";
import { definitionOf, renderShipped } from "../helpers/stack";

/** A plan row as the planner writes it, with a variant and a schedule expression, and five personalization fields. */
const ROW: PlanRow & { schedule_expression: string } = {
  schedule_name: "customer-0012345-1",
  send_at: "2026-12-01T09:00:00",
  timezone: "America/Los_Angeles",
  email: "firstname.lastname@example-company.com",
  template: "spring-sale-2026",
  template_data: {
    first_name: "Alexandra",
    last_name: "Montgomery-Smith",
    city: "San Francisco",
    plan: "premium-annual",
    coupon: "SPRING-2026-X7Q9",
    step: "1",
  },
  recipient_id: "customer-0012345",
  step: 1,
  utc: "2026-12-01T17:00:00.000Z",
  variant: "subject_b",
  schedule_expression: "at(2026-12-01T09:00:00)",
};
const ROW_BYTES = Buffer.byteLength(JSON.stringify(ROW)) + 1; // and the comma between items in a batch

describe("fan-out pace and cost of the shipped stacks", function () {
  this.timeout(60_000);
  for (const stack of ["dev", "example", "prod"]) {
    it(`${stack}: asks for 90–95% of its CreateSchedule quota at 0.1 s a call, for under $0.10 per million rows`, async () => {
      const config = readStackConfig(stack);
      // The minimal dev stack leaves the quota at its default.
      const quota = Number(config["sendtime:createScheduleTps"] ?? scheduler.createScheduleTps);
      const fanOut = definitionOf(await renderShipped(stack)).States.FanOut;
      const outer = fanOut.MaxConcurrency;
      const inner = fanOut.ItemProcessor.States.CreateSchedules.MaxConcurrency;
      const asked = (outer * inner) / pacing.callSeconds;
      assert.ok(
        asked >= 0.9 * quota && asked <= 0.95 * quota,
        `${outer} × ${inner} in flight ask ${asked}/s of ${quota}/s`,
      );

      const shape = { batchSize: fanOut.ItemBatcher.MaxItemsPerBatch, innerConcurrency: inner };
      assert.ok(ROW_BYTES > 400 && ROW_BYTES < 650, `a representative row is ${ROW_BYTES} bytes`);
      assert.strictEqual(rowsPerBatch(shape.batchSize, ROW_BYTES), 400);
      const cost = fanOutCostPerMillionRows(shape, ROW_BYTES);
      assert.ok(cost <= 0.1, `$${cost.toFixed(4)} per million rows`);
    });
  }

  it("the cost model, by hand: 2,500 children of 400 rows, 25 at once → 1.6 s each", () => {
    const p = stepFunctionsPricing;
    const byHand = 2_500 * (0.000025 + 0.000001 + 1.6 * (64 / 1024) * 0.00001667);
    assert.ok(Math.abs(byHand - 0.0691667) < 1e-6);
    assert.ok(Math.abs(fanOutCostPerMillionRows({ batchSize: 400, innerConcurrency: 25 }, 500) - byHand) < 1e-9);
    assert.strictEqual(p.standardTransition, 0.000025);
    // the old shape (80 rows a child), for comparison (docs/benchmarks.md, "The fan-out")
    assert.ok(Math.abs(fanOutCostPerMillionRows({ batchSize: 80, innerConcurrency: 40 }, 500) - 0.3276) < 0.001);
  });
});
