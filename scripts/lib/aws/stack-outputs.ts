/**
 * The deployed stack's outputs, for the operator scripts: from `pulumi stack output --json --stack NAME` when the
 * Pulumi CLI is installed, from a JSON file (that command's output, saved), or from explicit flags.
 */
import { spawnSync } from "child_process";
import { scheduler } from "../../../infra/core/plan/quotas";
import { UsageError } from "../../../infra/core/errors";
import { readInputFile } from "../text/input-files";

export interface StackOutputs {
  bucketName?: string;
  stateMachineArn?: string;
  schedulerRoleArn?: string;
  deadLetterQueueUrl?: string;
  configurationSetName?: string;
  fromAddress?: string;
  scheduleGroupPrefix?: string;
  region?: string;
  defaultWindowMinutes?: number;
  createScheduleTps?: number;
  /** The Region's EventBridge Scheduler schedule quota the stack was configured with. */
  maxSchedules?: number;
  /** Journeys (scripts/enrol.ts): the validated list, and the SES target and window their handler runs with. */
  journeyDefinitions?: unknown;
  journeyEnrolment?: unknown;
  /** Bulk sends: the one-click unsubscribe endpoint (a Lambda function URL) and the SSM parameter of its signing key. */
  unsubscribeUrl?: string;
  unsubscribeKeyParameter?: string;
  /** The SES contact list and its topic one-click unsubscribe opts out of: a bulk launch rejects their opt-outs. */
  contactListName?: string;
  unsubscribeTopic?: string;
  /** The SES templates the stack deploys (its roles may send only these); absent when templates are kept in SES. */
  templateNames?: string[];
  /** The one sender every schedule targets (a Step Functions state machine). */
  senderStateMachineArn?: string;
  /** The occurrence ledger (DynamoDB): occurrences, enrolments and each campaign's state (infra/core/send/ledger.ts). */
  ledgerTableName?: string;
  /** The guardrails' alarm names start so (absent: no guardrails): cancel-campaign deletes the campaign's alarms. */
  guardrailAlarmPrefix?: string;
  /** With texts (sendtime:sms): the pool's message parts per second, the pace a launch takes unless --sms-mps says. */
  smsMps?: number;

  /** SMS (absent without sendtime:sms): the opt-out list imported opt-outs go to, the log group of the SMS events. */
  smsOptOutListName?: string;
  smsEventLogGroupName?: string;
}

export interface OutputSources {
  stack?: string;
  outputsFile?: string;
  /** Explicit values (flags) win over the stack's. */
  overrides?: Partial<StackOutputs>;
  /** How long `pulumi stack output` may take (default PULUMI_TIMEOUT_MS). */
  pulumiTimeoutMs?: number;
}

/** A backend can be slow to answer (a login, a remote state), never this slow. */
const PULUMI_TIMEOUT_MS = 120_000;

export function readStackOutputs(s: OutputSources): StackOutputs {
  let outputs: StackOutputs = {};
  if (s.stack !== undefined && s.outputsFile !== undefined) throw new UsageError("give --stack or --outputs, not both");
  if (s.outputsFile !== undefined)
    outputs = parseOutputs(readInputFile(s.outputsFile, `--outputs ${s.outputsFile}`), s.outputsFile);
  if (s.stack !== undefined) {
    const timeout = s.pulumiTimeoutMs ?? PULUMI_TIMEOUT_MS;
    const r = spawnSync("pulumi", ["stack", "output", "--json", "--stack", s.stack], {
      encoding: "utf8",
      timeout,
      killSignal: "SIGKILL",
    });
    if (r.error && (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT")
      throw new UsageError(`pulumi stack output --stack ${s.stack}: no answer within ${timeout / 1000} s`);
    if (r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new UsageError(
        `--stack ${s.stack}: the Pulumi CLI is not installed here; save \`pulumi stack output --json --stack ${s.stack}\` to a file and pass --outputs FILE`,
      );
    }
    if (r.status !== 0)
      throw new UsageError(
        `pulumi stack output --stack ${s.stack} failed: ${(r.stderr || "").trim().split("\n").pop()}`,
      );
    outputs = parseOutputs(r.stdout, `pulumi stack output --stack ${s.stack}`);
  }
  for (const [k, v] of Object.entries(s.overrides ?? {}))
    if (v !== undefined) (outputs as Record<string, unknown>)[k] = v;
  return outputs;
}

/** The named outputs, or a UsageError saying which are missing and how to give them. */
export function requireOutputs<K extends keyof StackOutputs>(
  o: StackOutputs,
  keys: K[],
  flags: Partial<Record<K, string>>,
): StackOutputs & Required<Pick<StackOutputs, K>> {
  const missing = keys.filter((k) => o[k] === undefined || o[k] === "");
  if (missing.length) {
    const how = missing.map((k) => (flags[k] ? `${k} (--${flags[k]})` : k)).join(", ");
    throw new UsageError(`missing stack outputs: ${how}; give --stack NAME, --outputs FILE, or the flags`);
  }
  return o as StackOutputs & Required<Pick<StackOutputs, K>>;
}

/** The ledger's table name, or a UsageError: a stack deployed before the ledger has no such output. */
export function requireLedgerTable(o: StackOutputs): string {
  if (o.ledgerTableName) return o.ledgerTableName;
  throw new UsageError(
    "missing stack output ledgerTableName: the stack predates the occurrence ledger, which holds each campaign's state; run `pulumi up` to add it, then save its outputs again",
  );
}

function parseOutputs(text: string, source: string): StackOutputs {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text);
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
  } catch (e) {
    throw new UsageError(`${source}: not the JSON of \`pulumi stack output --json\` (${(e as Error).message})`);
  }
  const problem = outputProblem(v);
  if (problem) throw new UsageError(`${source}: ${problem}`);
  return v as StackOutputs;
}

const STRING_OUTPUTS = [
  "bucketName",
  "stateMachineArn",
  "schedulerRoleArn",
  "deadLetterQueueUrl",
  "configurationSetName",
  "fromAddress",
  "scheduleGroupPrefix",
  "region",
  "unsubscribeUrl",
  "unsubscribeKeyParameter",
  "contactListName",
  "unsubscribeTopic",
  "senderStateMachineArn",
  "ledgerTableName",
  "guardrailAlarmPrefix",
  "smsOptOutListName",
  "smsEventLogGroupName",
] as const;

/** The first output the scripts use that has a value they cannot (a quota of 0 or below, a number as an ARN). */
function outputProblem(v: Record<string, unknown>): string | undefined {
  for (const k of STRING_OUTPUTS)
    if (v[k] !== undefined && typeof v[k] !== "string")
      return `output ${k} is ${JSON.stringify(v[k])}: expected a string`;
  const tps = v.createScheduleTps;
  if (tps !== undefined && !(typeof tps === "number" && Number.isFinite(tps) && tps > 0))
    return `output createScheduleTps is ${JSON.stringify(tps)}: expected the CreateSchedule quota, a number above 0`;
  const names = v.templateNames;
  if (names !== undefined && !(Array.isArray(names) && names.every((n) => typeof n === "string")))
    return `output templateNames is ${JSON.stringify(names)}: expected a list of template names`;
  const { min, max } = scheduler.flexibleWindowMinutes;
  const w = v.defaultWindowMinutes;
  if (w !== undefined && !(Number.isInteger(w) && (w as number) >= min && (w as number) <= max))
    return `output defaultWindowMinutes is ${JSON.stringify(w)}: expected a whole number of minutes from ${min} to ${max}`;
  return undefined;
}

/**
 * A campaign id that is one of the stack's journeys, or undefined. A journey's schedules live in `campaign-<journey>`:
 * a campaign of that id would share the group, and its housekeeping (or a cancel) would delete the journey's pending
 * sends.
 */
export function journeyNamed(outputs: StackOutputs, campaignId: string): string | undefined {
  const journeys = Array.isArray(outputs.journeyDefinitions)
    ? (outputs.journeyDefinitions as { name?: unknown }[])
    : [];
  return journeys.some((j) => j?.name === campaignId) ? campaignId : undefined;
}
