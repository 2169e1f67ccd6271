/**
 * The cost case of npm run bench: orchestration per million recipient-steps (emails), grouped (--bulk) and per
 * recipient, each by today's model (no ledger: a bulk schedule starts the sender, a per-recipient one calls SES
 * directly) and with the one door (every schedule starts the sender, which claims, reads the campaign's state and
 * records in the occurrence ledger), without and with a frequency cap, against the targets (issue #31): ≤ $0.10
 * grouped, ≤ $4 per recipient. The ledger's units come from the bench's own bulk plan: every line's recipient ids for
 * the grouped sends, and the same entries one schedule each (naming.ts scheduleName) for the per-recipient ones.
 * The model is infra/core/plan/send-cost.ts; prices are us-east-1's (quotas.ts).
 */
import * as fs from "fs";
import * as path from "path";
import { StringDecoder } from "string_decoder";
import { campaignTag } from "../../infra/core/send/email-events";
import { FrequencyCap } from "../../infra/core/send/frequency-cap";
import { scheduleName, senderName } from "../../infra/core/plan/naming";
import type { BulkPlanRow } from "../../infra/core/plan/bulk-plan-row";
import { dynamodbPricing, pacedConcurrency, scheduler } from "../../infra/core/plan/quotas";
import {
  executionUnits,
  expressExecutionArn,
  INVOCATION_PRICE,
  ledgerDollars,
  Occurrence,
  Orchestration,
  orchestrationPerMillion,
  scheduleArn,
  SENDER_SECONDS,
  SenderStack,
  UnitTally,
} from "../../infra/core/plan/send-cost";
import { count } from "../lib/text/format";

/** The stack's default batchSize (infra/config.ts): plain rows fill it; bulk lines fill 256 KB long before it. */
const PLAIN_BATCH_SIZE = 400;
/** Where the bench's schedules would live: the priced Region, and an account id (always 12 digits). */
const SCOPE = { partition: "aws", region: "us-east-1", accountId: "123456789012" };
/**
 * The bench's stack: the unsubscribe endpoint (a grouped launch needs it, so its sender looks opt-outs up for every
 * schedule) and, for the capped figures, a cap of 3 a day (the largest the sender's property tests use).
 */
const CAP: FrequencyCap = { max: 3, per: "day" };
const STACK: SenderStack = { cap: CAP, optOuts: true };
export const TARGETS = { grouped: 0.1, perRecipient: 4 } as const;

/** A plan's schedules, entries and average line bytes, from the launcher's output folder. */
export interface PlanFacts {
  schedules: number;
  entries: number;
  lineBytes: number;
}

export function plainPlanFacts(dir: string): PlanFacts {
  const summary = JSON.parse(fs.readFileSync(path.join(dir, "summary.json"), "utf8"));
  const bytes = fs.statSync(path.join(dir, "plan.jsonl")).size;
  return { schedules: summary.schedules, entries: summary.schedules, lineBytes: bytes / summary.schedules };
}

export function bulkPlanFacts(dir: string): PlanFacts {
  const b = JSON.parse(fs.readFileSync(path.join(dir, "summary.json"), "utf8")).bulk;
  return { schedules: b.schedules, entries: b.entries, lineBytes: b.averageLineBytes };
}

/** Each line of a file, read synchronously in large chunks (a plan of a million recipients is hundreds of MB). */
function forEachLine(file: string, each: (line: string) => void): void {
  const fd = fs.openSync(file, "r");
  const buffer = Buffer.alloc(16 << 20);
  const decoder = new StringDecoder("utf8");
  let rest = "";
  try {
    for (let n = fs.readSync(fd, buffer, 0, buffer.length, null); n > 0; n = fs.readSync(fd, buffer)) {
      const lines = (rest + decoder.write(buffer.subarray(0, n))).split("\n");
      rest = lines.pop()!;
      for (const line of lines) if (line) each(line);
    }
    if (rest) each(rest);
  } finally {
    fs.closeSync(fd);
  }
}

/** The occurrence of a schedule at a bulk line's instant (Scheduler gives it to the second; the start has milliseconds). */
function occurrenceOf(campaignId: string, name: string, utc: string): Occurrence {
  const second = utc.slice(0, 19);
  return {
    scheduleArn: scheduleArn(SCOPE, campaignId, name),
    scheduledTime: `${second}Z`,
    campaign: campaignTag(campaignId),
    startTime: `${second}.000Z`,
    executionId: expressExecutionArn(SCOPE, senderName("dev")),
  };
}

/** The sender's units over the bulk plan: each line as one grouped execution, and each entry as one of its own. */
export function tallyPlan(planFile: string, campaignId: string): { grouped: UnitTally; perRecipient: UnitTally } {
  const grouped = new UnitTally();
  const perRecipient = new UnitTally();
  forEachLine(planFile, (line) => {
    const row = JSON.parse(line) as BulkPlanRow;
    const entries = row.entries.map((e) => ({ recipient: e.recipient_id, email: e.email }));
    grouped.add(executionUnits(occurrenceOf(campaignId, row.schedule_name, row.utc), entries, STACK), entries.length);
    for (const e of entries) {
      const o = occurrenceOf(campaignId, scheduleName(e.recipient, row.step), row.utc);
      perRecipient.add(executionUnits(o, [e], STACK), 1);
    }
  });
  return { grouped, perRecipient };
}

const dollars = (x: number) => `$${x.toFixed(3)}`;
const verdict = (x: number, target: number) =>
  x <= target
    ? `(≤ ${dollars(target)}: met, ${dollars(target - x)} under)`
    : `(≤ ${dollars(target)}: NOT met, ${dollars(x - target)} over)`;

/** One mode's figures: today's model, the one door without and with the cap, its parts, its ledger per occurrence. */
function modeFigures(plan: PlanFacts, units: UnitTally, bulk: boolean, target: number) {
  const { innerConcurrency } = pacedConcurrency(scheduler.createScheduleTps);
  const shape = {
    ...plan,
    batchSize: bulk ? Number.MAX_SAFE_INTEGER : PLAIN_BATCH_SIZE,
    innerConcurrency,
  };
  const today = orchestrationPerMillion(shape, { senderExecutions: bulk });
  const door = orchestrationPerMillion(shape, { senderExecutions: true, units });
  const ledger = ledgerDollars(units);
  const avg = (x: number) => (x / units.executions).toFixed(3);
  return {
    today: dollars(today.total),
    door: `${dollars(door.total)} ${verdict(door.total, target)}`,
    capped: `${dollars(door.total + door.cap)} ${verdict(door.total + door.cap, target)}`,
    parts: parts(door),
    ledger:
      `claim ${avg(units.claimWru)} WRU + record ${avg(units.recordWru)} WRU (largest item ${count(units.largestRecordBytes)} bytes) + state read ${avg(units.stateRru)} RRU ` +
      `= $${(ledger.perOccurrence * 1e6).toFixed(3)} per million occurrences, $${(ledger.perRecipient * 1e6).toFixed(3)} per million recipients`,
    aside: `cap ${CAP.max} a day +${dollars(door.cap)} (${(units.capWru / units.entries).toFixed(2)} WRU an entry); opt-out look-ups +${dollars(door.optOuts)}`,
  };
}

const parts = (o: Orchestration) =>
  `fan-out ${dollars(o.fanOut)} + invocations ${dollars(o.invocations)} + sender ${dollars(o.sender)} + ledger writes ${dollars(o.ledgerWrites)} + reads ${dollars(o.ledgerReads)}`;

/** Prints the cost case from the bulk plan in `bulkDir` (its lines read for the recipient ids) and the plain plan's facts. */
export function costBench(campaignId: string, bulkDir: string, plain: PlanFacts): void {
  const bulk = bulkPlanFacts(bulkDir);
  const units = tallyPlan(path.join(bulkDir, "plan.jsonl"), campaignId);
  const g = modeFigures(bulk, units.grouped, true, TARGETS.grouped);
  const r = modeFigures(plain, units.perRecipient, false, TARGETS.perRecipient);
  const d = dynamodbPricing;
  process.stdout.write(
    `orchestration per million recipient-steps (fan-out, Scheduler invocations at ${dollars(INVOCATION_PRICE * 1e6)} per million, ` +
      `sender executions billed ${SENDER_SECONDS} s × 64 MB each, grouped or per recipient alike; ledger at $${d.writeRequestUnit * 1e6} per million WRU, ` +
      `$${d.readRequestUnit * 1e6} per million RRU; us-east-1): ${count(bulk.schedules)} grouped schedules, ${count(units.perRecipient.executions)} per-recipient ones\n`,
  );
  const rows: [string, string, string][] = [
    ["", "grouped (--bulk)", "per recipient"],
    ["today (no ledger)", g.today, r.today],
    ["one door", g.door, r.door],
    [`one door, cap ${CAP.max} a day`, g.capped, r.capped],
  ];
  for (const [label, a, b] of rows) process.stdout.write(`  ${label.padEnd(24)} ${a.padEnd(44)} ${b}\n`);
  for (const [label, key] of [
    ["one door, by part", "parts"],
    ["ledger", "ledger"],
    ["beside the targets", "aside"],
  ] as const)
    process.stdout.write(`  ${label}:\n    grouped        ${g[key]}\n    per recipient  ${r[key]}\n`);
}
