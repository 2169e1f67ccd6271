/**
 * The --bulk case of npm run bench: the launcher's dry run with --bulk, side by side with the plain dry run of the same
 * list and flags (BENCH_REPEAT runs each, taking turns, compared by each one's fastest), then the fan-out model for
 * both plans and the orchestration cost of both (bench/cost.ts). Targets (issue #26): ≤ 0.05 schedules per
 * recipient-step; 10,000,000 recipients × 2 steps within the default schedule quota and fanned out in ≤ 3 minutes; the
 * bulk dry run no slower than the plain one (CPU) and within its peak RSS. The cost targets are bench/cost.ts's.
 *
 * Model assumption: a plan's 10M-recipient schedule count is its per-recipient-step rate on this list times 20,000,000
 * (an upper bound: a larger list fills its last chunk per group better).
 */
import * as fs from "fs";
import * as path from "path";
import { FANOUT_HEADROOM, fanOutCreateRate, scheduler } from "../../infra/core/plan/quotas";
import { count } from "../lib/text/format";
import { createHmac } from "crypto";
import { UnsubscribeSigner } from "../../infra/core/consent/unsubscribe";
import { costBench, plainPlanFacts } from "./cost";

type Measured = { ms: number; cpuMs: number; maxRssBytes: number };
type Measure = (label: string, script: string, args: string[]) => Measured;

/** The ten-million-recipient, two-step campaign by the model: schedules, whether they fit the quota, fan-out minutes. */
export function tenMillion(perRecipientStep: number) {
  const schedules = Math.ceil(perRecipientStep * 20_000_000);
  return {
    schedules,
    fitsQuota: schedules <= scheduler.maxSchedules,
    fanOutMinutes: schedules / fanOutCreateRate(scheduler.createScheduleTps) / 60,
  };
}

/** The plain dry run's flags with --bulk, writing to their own folder. */
function bulkArgsOf(plainArgs: string[], cacheDir: string): { args: string[]; out: string } {
  const out = path.join(cacheDir, "launch-bulk-out");
  return { args: [...plainArgs.slice(0, plainArgs.indexOf("--out")), "--bulk", "--out", out, "--json"], out };
}

const campaignOf = (plainArgs: string[]) => plainArgs[plainArgs.indexOf("--campaign") + 1];
const outOf = (plainArgs: string[]) => plainArgs[plainArgs.indexOf("--out") + 1];

/**
 * The cost case alone (BENCH_ONLY=cost): one plain and one --bulk dry run of the list, for their plans, then the
 * orchestration cost of both. No timing: each runs once.
 */
export function costOnly(plainArgs: string[], measure: Measure, cacheDir: string): void {
  const bulk = bulkArgsOf(plainArgs, cacheDir);
  measure("launch-campaign --dry-run", "scripts/launch-campaign.ts", plainArgs);
  measure("launch-campaign --dry-run --bulk", "scripts/launch-campaign.ts", bulk.args);
  costBench(campaignOf(plainArgs), bulk.out, plainPlanFacts(outOf(plainArgs)));
}

export function bulkBench(
  rows: number,
  plainArgs: string[],
  plainFirst: Measured,
  measure: Measure,
  report: (label: string, m: Measured) => void,
  cacheDir: string,
  repeat: number,
): void {
  const { args: bulkArgs, out } = bulkArgsOf(plainArgs, cacheDir);
  const plains = [plainFirst];
  const bulks: Measured[] = [];
  for (let i = 0; i < repeat; i++) {
    bulks.push(measure("launch-campaign --dry-run --bulk", "scripts/launch-campaign.ts", bulkArgs));
    if (i < repeat - 1) plains.push(measure("launch-campaign --dry-run", "scripts/launch-campaign.ts", plainArgs));
  }
  const fastest = (ms: Measured[]) => ms.reduce((a, b) => (b.cpuMs < a.cpuMs ? b : a));
  const cpus = (ms: Measured[]) => ms.map((m) => (m.cpuMs / 1000).toFixed(2)).join(", ");
  process.stdout.write(`  CPU s of each run, taking turns: plain ${cpus(plains)}; --bulk ${cpus(bulks)}\n`);
  const plain = fastest(plains);
  const bulk = fastest(bulks);
  report("  plain dry run (fastest)", plain);
  report("  --bulk dry run (fastest)", bulk);
  // Peak RSS: the largest of each kind's runs (memory is not what the neighbours take away).
  const peak = (ms: Measured[]) => Math.max(...ms.map((m) => m.maxRssBytes));
  const speedOk = bulk.cpuMs <= plain.cpuMs;
  const memoryOk = peak(bulks) <= peak(plains);
  process.stdout.write(
    `--bulk dry run vs plain: ${(bulk.cpuMs / plain.cpuMs).toFixed(2)}× the CPU, ${(bulk.ms / plain.ms).toFixed(2)}× the time, peak RSS ${Math.round(peak(bulks) / 1048576)} MB vs ${Math.round(peak(plains) / 1048576)} MB (targets: no slower, within its memory): ${speedOk && memoryOk ? "met" : "NOT met"}\n`,
  );

  const b = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")).bulk;
  const plainFacts = plainPlanFacts(outOf(plainArgs));
  process.stdout.write(
    `bulk plan of ${count(rows)} rows × 2 steps: ${count(b.schedules)} schedules for ${count(b.entries)} entries = ${b.schedulesPerRecipientStep} a recipient-step (target ≤ 0.05: ${b.schedulesPerRecipientStep <= 0.05 ? "met" : "NOT met"}); ${b.largestSchedule} entries at most, ${b.smallestSchedule} at least; lines ${count(b.averageLineBytes)} bytes on average (plain rows ${count(Math.round(plainFacts.lineBytes))})\n`,
  );
  const ten = tenMillion(b.schedulesPerRecipientStep);
  const tenPlain = tenMillion(1);
  process.stdout.write(
    `10M recipients × 2 steps by the model (fan-out at ${count(fanOutCreateRate(scheduler.createScheduleTps))} CreateSchedule/s, ${FANOUT_HEADROOM} of the default quota): ` +
      `--bulk ${count(ten.schedules)} schedules (${ten.fitsQuota ? "within" : "OVER"} the ${count(scheduler.maxSchedules)} quota), fan-out ${ten.fanOutMinutes.toFixed(1)} min; ` +
      `plain ${count(tenPlain.schedules)} (${tenPlain.fitsQuota ? "within" : "over"} the quota), ${tenPlain.fanOutMinutes.toFixed(1)} min ` +
      `(targets within the quota, ≤ 3 min: ${ten.fitsQuota && ten.fanOutMinutes <= 3 ? "met" : "NOT met"})\n`,
  );
  costBench(campaignOf(plainArgs), out, plainFacts);
  signingBench(rows);
}

/**
 * What a launch adds to a dry run: one signed token per recipient. The launcher's signer (a JavaScript HMAC-SHA256
 * from the key's precomputed blocks, infra/core/crypto/hmac-sha256.ts) side by side with the same tokens from Node's
 * createHmac (what it replaced), in this process, fastest of three each; the tokens are checked equal.
 */
export function signingBench(rows: number): void {
  const key = Buffer.alloc(32, 7);
  const addresses = Array.from({ length: rows }, (_, i) => `user.${i}@example${i % 97}.com`);
  const node = (a: string) =>
    `${Buffer.from(a).toString("base64url")}.${createHmac("sha256", key).update(`sendtime-unsubscribe:v1:${a}`).digest("base64url")}`;
  const signer = new UnsubscribeSigner(key);
  for (let i = 0; i < 1000; i++)
    if (signer.token(addresses[i]) !== node(addresses[i]))
      throw new Error(`signer and createHmac differ on ${addresses[i]}`);
  const time = (sign: (a: string) => string) => {
    let best = Infinity;
    for (let r = 0; r < 3; r++) {
      const start = process.cpuUsage();
      let chars = 0;
      for (const a of addresses) chars += sign(a).length;
      const used = process.cpuUsage(start);
      best = Math.min(best, (used.user + used.system) / 1000);
      if (chars === 0) throw new Error("no tokens");
    }
    return best;
  };
  const ours = time((a) => signer.token(a));
  const theirs = time(node);
  process.stdout.write(
    `signing ${count(rows)} unsubscribe tokens (a launch's addition to the dry run): ${(ours / 1000).toFixed(2)} s CPU, createHmac ${(theirs / 1000).toFixed(2)} s (${(ours / theirs).toFixed(2)}×)\n`,
  );
}
