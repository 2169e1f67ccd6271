/**
 * Sizes the EventBridge Scheduler flexible time window of a campaign, from volume or from the real recipient list.
 * See USAGE.
 */
import { scheduler } from "../infra/quotas";
import { nowFromFlag, RATE_FLAGS, rateFromFlags, SEND_TIME_FLAGS, sendTimeFromFlags } from "./lib/cli/campaign-flags";
import { FindingsError, intFlag, parseFlags, positiveFlag, runMain, UsageError } from "./lib/cli/run";
import { formatDuration, formatReport, sizeRecipientList, WindowReport } from "./lib/core/size-window";
import { fanOutSeconds, volumeWindowMinutes } from "./lib/core/window";

const USAGE = `
Usage:
  size-window --schedules N (--tps T | [--invocation-tps T] [--ses-rate R]) [--create-tps C] [--json]
  size-window --recipients FILE --date YYYY-MM-DD --hour H [--minute M] [--step +3d ...]
              [--default-timezone ZONE] [--tps T | --invocation-tps T --ses-rate R] [--create-tps C]
              [--now ISO] [--json]

Computes the smallest FlexibleTimeWindow (minutes) that keeps sends within the effective TPS: --tps, or the lower
of the Scheduler invocation quota (--invocation-tps, default ${scheduler.invocationTps}) and the SES maximum send rate (--ses-rate).

From volume: ⌈schedules ÷ TPS ÷ 60⌉ (500,000 at 5,000 TPS → 2 minutes).
From a recipient list (CSV with a header; column "timezone", IANA names; missing or unknown → --default-timezone,
default UTC): every recipient's send instant per step, windows of nearby instants added up.

  --step +Nd | +Nh   a later step, N days (same local time) or hours after the first send; repeatable
  --create-tps C     CreateSchedule rate for the fan-out time (default ${scheduler.createScheduleTps})
  --now ISO          reference time for "launch by" (default: now)
  --json             machine-readable report

Exit codes: 0 ok, 1 no window up to 1,440 minutes fits, 2 bad flags or input.
`;

runMain(async () => {
  const f = parseFlags(
    process.argv.slice(2),
    {
      schedules: { type: "string" },
      ...RATE_FLAGS,
      "create-tps": { type: "string" },
      recipients: { type: "string" },
      ...SEND_TIME_FLAGS,
      json: { type: "boolean", default: false },
    },
    USAGE,
  );
  const rate = rateFromFlags(f);
  const createTps = positiveFlag("create-tps", f["create-tps"] as string | undefined, scheduler.createScheduleTps);

  let report: WindowReport;
  if (f.schedules !== undefined) {
    if (f.recipients !== undefined) throw new UsageError("give --schedules or --recipients, not both");
    const schedules = intFlag("schedules", f.schedules as string, 0, Number.MAX_SAFE_INTEGER);
    const windowMinutes = volumeWindowMinutes(schedules, rate.tps);
    if (windowMinutes > scheduler.flexibleWindowMinutes.max) {
      const requiredTps = Math.ceil(schedules / (scheduler.flexibleWindowMinutes.max * 60));
      throw new FindingsError(tooLarge(requiredTps, rate.tps));
    }
    report = {
      mode: "volume",
      schedules,
      effectiveTps: rate.tps,
      effectiveTpsSource: rate.source,
      windowMinutes,
      createTps,
      fanOutSeconds: fanOutSeconds(schedules, createTps),
    };
  } else if (f.recipients !== undefined) {
    const sized = await sizeRecipientList({ file: f.recipients, ...sendTimeFromFlags(f), rate, createTps, now: nowFromFlag(f.now) });
    if (!sized.fits) throw new FindingsError(tooLarge(sized.requiredTps, rate.tps));
    report = sized.report;
  } else {
    throw new UsageError("give --schedules N or --recipients FILE (see --help)");
  }

  process.stdout.write(f.json ? JSON.stringify(report, null, 2) + "\n" : formatReport(report));
  return 0;
});

function tooLarge(requiredTps: number, tps: number): string {
  const campaigns = Math.ceil(requiredTps / tps);
  return (
    `no flexible window up to ${scheduler.flexibleWindowMinutes.max} minutes keeps sends within ${tps}/s: ` +
    `raise the Scheduler invocation quota and the SES sending rate to at least ${requiredTps}/s, ` +
    `or split the campaign into ${campaigns} campaigns sent at different times (${formatDuration(scheduler.flexibleWindowMinutes.max * 60)} window each)`
  );
}
