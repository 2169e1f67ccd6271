/**
 * launch-campaign's flag table: the launcher parses it, size-window's --config accepts its keys (a campaign file is
 * shared), import-pinpoint writes a campaign file with them.
 */
import { MIN_POLL_SECONDS } from "../aws/launch";
import { GRACE_MINUTES, MISSED_POLICIES } from "../planning/missed";
import { stackFlags, timeoutFlag } from "./aws-flags";
import { CONFIG_FLAG } from "./config-file";
import { progressFlag } from "./progress";
import {
  BULK_HELP,
  CAMPAIGN_FLAG,
  dryRunFlag,
  jsonFlag,
  OUT,
  RECIPIENTS,
  SMS_FLAGS,
  TEMPLATE,
  TEMPLATES,
} from "./common-flags";
import { int } from "./parsers";
import { PACE_FLAGS, RATE_FLAGS, RATE_GROUP, RECIPIENT_FLAGS, SEND_TIME_FLAGS } from "./campaign-flags";

export const LAUNCH_GROUP = "Output, launch and stack";

/** --missed (launch-campaign; redrive's held sends). */
export const MISSED_HELP = "what a send due before now + fan-out + margin becomes";

export const LAUNCH_FLAGS = {
  ...CONFIG_FLAG,
  campaign: { ...CAMPAIGN_FLAG.campaign, group: "Campaign" },
  recipients: { ...RECIPIENTS, value: "FILE|s3://B/K", note: "local or streamed from S3", group: "Campaign" },
  template: { ...TEMPLATE, note: "of step 1 (and of later steps without their own)", group: "Campaign" },
  ...SEND_TIME_FLAGS,
  ...SMS_FLAGS,
  missed: {
    type: "string",
    value: MISSED_POLICIES.join("|"),
    help: MISSED_HELP,
    defaultHelp: "skip",
    group: RATE_GROUP,
  },
  "grace-minutes": {
    type: "string",
    value: "G",
    help: "how late send-now may send",
    defaultHelp: String(GRACE_MINUTES.default),
    group: RATE_GROUP,
    with: "missed",
  },
  "window-minutes": {
    type: "string",
    value: "W",
    help: "use this flexible window (1-1440) instead of sizing one",
    group: RATE_GROUP,
  },
  ...RATE_FLAGS,
  ...RECIPIENT_FLAGS,
  ...PACE_FLAGS,
  out: {
    ...OUT,
    note: "plan.jsonl, rejects.csv, notes.csv and summary.json",
    defaultHelp: "out/<campaign>",
    group: LAUNCH_GROUP,
  },
  "no-local-plan": {
    type: "boolean",
    help: "keep the plan only in S3 (the summary keeps its sha256)",
    group: LAUNCH_GROUP,
    with: "out",
  },
  ...dryRunFlag("plan and size only: nothing uploaded or started", LAUNCH_GROUP),
  force: {
    type: "boolean",
    help: "launch despite the preflight's warnings (never its errors: docs/launching.md#preflight)",
    group: LAUNCH_GROUP,
  },
  bulk: { type: "boolean", help: BULK_HELP, note: "docs/bulk-sends.md", group: "Campaign" },
  templates: { ...TEMPLATES, note: "each step's template must be in it", group: "Campaign" },
  "launch-id": {
    type: "string",
    value: "ID",
    help: "names the upload and execution (default: the plan's hash; a used id is refused)",
    group: LAUNCH_GROUP,
  },
  "max-schedules": {
    type: "string",
    value: "N",
    help: "the Region's schedule quota (default: stack output maxSchedules, else 10,000,000)",
    group: LAUNCH_GROUP,
  },
  wait: { type: "boolean", help: "follow the fan-out to its end (progress on stderr)", group: LAUNCH_GROUP },
  "poll-seconds": {
    type: "string",
    value: "P",
    parse: int(MIN_POLL_SECONDS, 3_600),
    help: "how often it checks, in seconds",
    note: "the fan-out, with --wait",
    default: 5,
    group: LAUNCH_GROUP,
    with: "wait",
  },
  ...jsonFlag("the summary", LAUNCH_GROUP),
  ...progressFlag(LAUNCH_GROUP),
  ...stackFlags("bucket", "state-machine-arn"),
  ...timeoutFlag(3_600),
} as const;
