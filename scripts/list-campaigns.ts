/**
 * Every campaign of the account and Region: its schedule group, what is still pending, and its last launch. See COMMAND (its --help).
 */
import { dynamodb, s3Client, schedulerClient } from "./lib/aws/clients";
import { describeState } from "./lib/cli/campaign-state-text";
import { CampaignListing, listCampaigns } from "./lib/aws/campaign-list";
import { count } from "./lib/text/format";
import { runMain } from "./lib/cli/run";
import { reportingStackFlags } from "./lib/cli/aws-flags";
import { stackCommand } from "./lib/cli/stack-command";

const FLAGS = {
  ...reportingStackFlags(
    {
      seconds: 300,
      json: "[{campaign, group, state, createdAt, pendingSchedules, disabledSchedules, journey, lastLaunch, campaignState}]",
    },
    "bucket",
  ),
} as const;

export const { COMMAND, main } = stackCommand(
  {
    script: "list-campaigns",
    usage: ["[--json] [--timeout-seconds S] (--stack NAME | --outputs FILE)"],
    summary: `Every campaign-* schedule group (every page) with its state (ACTIVE, or DELETING once cancelled or cleaned up), its
pending schedules (every page; DISABLED ones are paused) and its last launch (the newest launch record in the bucket;
without a bucket, not read). With the stack's ledger (ledgerTableName), each campaign's own state: one paused (by
pause-campaign or a guardrail) or cancelled gets a line with since when and why. A journey of the stack is marked as
one. Counting costs one ListSchedules call per 100 schedules (1,000,000 schedules: 10,000 calls, minutes): give a
--timeout-seconds that fits.`,
    flags: FLAGS,
    changesAws: false,
  },
  async ({ outputs, deadline }) => {
    const o = outputs();
    const journeys = Array.isArray(o.journeyDefinitions)
      ? (o.journeyDefinitions as { name?: unknown }[]).map((j) => j?.name).filter((n) => typeof n === "string")
      : [];
    const clients = {
      scheduler: schedulerClient(o.region),
      s3: o.bucketName ? s3Client(o.region) : undefined,
      // With the ledger: each campaign's state (paused by an operator or a guardrail), one GetItem each.
      ledger: typeof o.ledgerTableName === "string" ? { ddb: dynamodb(o.region), table: o.ledgerTableName } : undefined,
    };
    return listCampaigns(deadline, clients, { bucket: o.bucketName, journeys });
  },
  { text: (list, { outputs }) => formatList(list, outputs().bucketName), exitCode: () => 0 },
);

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
    ...list.map((c) => [
      c.campaign,
      c.state,
      count(c.pendingSchedules),
      count(c.disabledSchedules),
      launch(c),
      sends(c),
    ]),
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  const lines = table.map((r) =>
    r
      .map((v, i) => (i === 2 || i === 3 ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join("  ")
      .trimEnd(),
  );
  // A campaign that does not send (paused, by an operator or a guardrail, or cancelled): since when and why.
  for (const c of list) {
    const s = c.campaignState;
    if (s && "error" in s) lines.push(`${c.campaign}: state not read: ${s.error}`);
    else if (s && s.state !== "live") lines.push(`${c.campaign}: ${describeState(s)}`);
  }
  const pending = list.reduce((n, c) => n + c.pendingSchedules, 0);
  lines.push(
    `${list.length === 1 ? "1 campaign" : `${count(list.length)} campaigns`}, ${count(pending)} pending schedules`,
  );
  return lines.join("\n") + "\n";
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
