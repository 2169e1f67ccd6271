/**
 * Every campaign of the account and Region: its schedule group, what is still pending, and its last launch. See USAGE.
 */
import { s3Client, schedulerClient } from "./lib/aws/clients";
import { CampaignListing, listCampaigns } from "./lib/aws/campaign-list";
import { readStackOutputs } from "./lib/aws/stack-outputs";
import { count } from "../infra/rules/format";
import { Io, parseFlags, processIo, runMain } from "./lib/cli/run";
import { deadlineFromFlag, TIMEOUT_FLAG } from "./lib/cli/aws-flags";

const USAGE = `
Usage: npm run -s list-campaigns -- [--json] [--timeout-seconds S] (--stack NAME | --outputs FILE) [--region R] [--bucket B]

Every campaign-* schedule group (ListScheduleGroups, every page) with its state (ACTIVE, or DELETING once cancelled
or cleaned up), its pending schedules (ListSchedules in the group, every page: a one-time schedule deletes itself
once it has sent, so these are the sends still to come; DISABLED ones are paused) and the last launch (the newest
launch record under s3://<bucket>/launches/<campaign>/). A journey of the stack is marked as one (it has no launch).

  --json                  the list as JSON: [{campaign, group, state, createdAt, pendingSchedules,
                          disabledSchedules, journey, lastLaunch: {id, at, schedules, firstSend, lastSend, record}|null}]
  --timeout-seconds S     the whole command's time limit, every AWS call included (default 300); progress on stderr
  --stack NAME            read the stack outputs with \`pulumi stack output --json\` (needs the Pulumi CLI)
  --outputs FILE          or from that command's saved JSON (npm run preview -- --write-outputs FILE offline)
  --region R, --bucket B  override those outputs (without a bucket, last launches are not read)

Counting pending schedules costs one ListSchedules call per 100 schedules (a 1,000,000-schedule campaign: 10,000
calls, minutes): give a --timeout-seconds that fits.

Exit codes: 0 ok (also when there is no campaign), 1 an AWS error, the time limit, or a page token AWS repeated,
2 bad flags or outputs.
`;

if (require.main === module) runMain(() => main(process.argv.slice(2)));

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const f = parseFlags(
    argv,
    {
      json: { type: "boolean", default: false },
      stack: { type: "string" },
      outputs: { type: "string" },
      region: { type: "string" },
      bucket: { type: "string" },
      ...TIMEOUT_FLAG,
    },
    USAGE,
  );
  const outputs = readStackOutputs({ stack: f.stack, outputsFile: f.outputs, overrides: { region: f.region, bucketName: f.bucket } });
  const journeys = Array.isArray(outputs.journeyDefinitions)
    ? (outputs.journeyDefinitions as { name?: unknown }[]).map((j) => j?.name).filter((n): n is string => typeof n === "string")
    : [];
  const deadline = deadlineFromFlag(f["timeout-seconds"], 300, (t) => io.err(`${t}\n`));
  const list = await listCampaigns(
    deadline,
    { scheduler: schedulerClient(outputs.region), s3: outputs.bucketName ? s3Client(outputs.region) : undefined },
    { bucket: outputs.bucketName, journeys },
  ).finally(() => deadline.dispose());
  io.out(f.json ? JSON.stringify(list, null, 2) + "\n" : formatList(list, outputs.bucketName));
  return 0;
}

export function formatList(list: CampaignListing[], bucket: string | undefined): string {
  if (!list.length) return "No campaign: no campaign-* schedule group in this account and Region.\n";
  const launch = (c: CampaignListing) =>
    c.journey
      ? "journey (no launches)"
      : c.lastLaunch
        ? `${c.lastLaunch.id} at ${c.lastLaunch.at.slice(0, 16)}Z, ${count(c.lastLaunch.schedules)} schedules`
        : bucket
          ? "no launch record"
          : "- (no bucket)";
  const sends = (c: CampaignListing) =>
    c.lastLaunch?.firstSend
      ? `${c.lastLaunch.firstSend.slice(0, 16)}Z → ${(c.lastLaunch.lastSend ?? c.lastLaunch.firstSend).slice(0, 16)}Z`
      : "-";
  const table = [
    ["campaign", "state", "pending", "paused", "last launch", "sends"],
    ...list.map((c) => [c.campaign, c.state, count(c.pendingSchedules), count(c.disabledSchedules), launch(c), sends(c)]),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  const lines = table.map((r) =>
    r
      .map((v, i) => (i === 2 || i === 3 ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join("  ")
      .trimEnd(),
  );
  const pending = list.reduce((n, c) => n + c.pendingSchedules, 0);
  lines.push(`${list.length === 1 ? "1 campaign" : `${count(list.length)} campaigns`}, ${count(pending)} pending schedules`);
  return lines.join("\n") + "\n";
}
