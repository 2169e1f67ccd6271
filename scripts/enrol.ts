/**
 * Enrols subscribers in a journey from a shell, with the deployed handler's own code: one event, or a CSV backlog.
 * See COMMAND (its --help).
 */
import { parse as parseYaml } from "yaml";
import { Journey, parseJourneys } from "../infra/core/journeys/journeys-definition";
import { SchedulerTargetParameters } from "../infra/core/plan/schedule-request";
import {
  applyDecision,
  CALL_TIMEOUT_MS,
  EnrolmentClients,
  enrolmentLedgerClient,
  EnrolmentResult,
  enrolmentSchedulerClient,
} from "../infra/handlers/enrolment";
import { StackOutputs } from "./lib/aws/stack-outputs";
import { commandMain, runMain, Io } from "./lib/cli/run";
import { decide } from "../infra/core/journeys/journeys";
import {
  Decision,
  EnrolmentSettings,
  EventKind,
  JourneyEvent,
  RejectReason,
} from "../infra/core/journeys/journey-types";
import { isIanaZone } from "../infra/core/journeys/subscriber-zone";
import { quietWindowProblem } from "../infra/core/journeys/step-times";
import { openRecipientCsv } from "./lib/recipients/recipients";
import { PROGRESS_EVERY_ROWS, RowProgress } from "./lib/recipients/row-progress";
import { progressFlag, progressReporter } from "./lib/cli/progress";
import { refuseMisspeltControlColumns, TIMEZONE_COLUMN } from "./lib/recipients/recipient-columns";
import { FindingsError, InputError, UsageError } from "../infra/core/errors";
import { EnrolmentError } from "../infra/handlers/enrolment";
import { JourneyDefinitionError } from "../infra/core/journeys/journeys-definition";
import { outputsFromFlags, stackFlags, timeoutFlag } from "./lib/cli/aws-flags";
import { Deadline } from "./lib/aws/call";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import { campaignTemplates } from "./lib/templates/campaign-templates";
import { withJourneySms } from "./lib/templates/journey-sms";
import { readInputFile } from "./lib/text/input-files";
import { dryRunFlag, jsonFlag, nowFlag, RECIPIENTS, TEMPLATES } from "./lib/cli/common-flags";

const FLAGS = {
  journey: {
    type: "string",
    value: "NAME",
    help: "the journey (from --journeys FILE, else the stack's journeyDefinitions)",
  },
  event: {
    type: "string",
    value: "FILE",
    help: "one EventBridge event as delivered, or a record from the journeys' dead-letter queue",
  },
  recipients: {
    ...RECIPIENTS,
    value: "CSV",
    note: "a backlog (id, email, timezone, personalization), each row triggered at --now",
  },
  journeys: { type: "string", value: "FILE", help: "the journey list (YAML or JSON, as in sendtime:journeys)" },
  ...nowFlag("the time of the run; a backlog's trigger time (a real backlog run needs it)"),
  ...dryRunFlag(
    "no AWS call (no enrolment claimed); with --json, the exact CreateSchedule (or DeleteSchedule) requests",
  ),
  ...jsonFlag(),
  ...progressFlag(),
  templates: { ...TEMPLATES, note: "each step's template must be in it" },
  ...stackFlags(),
  ...timeoutFlag(3_600, "each Scheduler or ledger call is bounded by 10 s or what is left"),
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "enrol",
  usage: [
    "--journey NAME (--event FILE | --recipients CSV --now ISO) [flags] (--dry-run | --stack NAME | --outputs FILE)",
  ],
  summary: `Runs the journey enrolment handler's code (the same decisions, the same CreateSchedule requests) from a shell. The SES
target comes from the stack output journeyEnrolment. Each trigger's enrolment is claimed in the occurrence ledger (stack
output ledgerTableName) first: one its trigger id (the event's id; a backlog row's, its --now) enrolled before is a
"duplicate", and nothing is created. A step due before it can be created is sent at once when at most the journey's
lateGraceMinutes late, else reported late; a backlog's steps due before the run are "passed"; a step within 60
minutes of, or before, an earlier one is "dropped". A repeated id or address is rejected.`,
  flags: FLAGS,
  exitCodes: EXIT_CODES.enrol,
  changesAws: true,
  reports: true,
  reference: "docs/journeys.md",
};

/** Scheduler calls at once when enrolling a backlog. */
const BACKLOG_CONCURRENCY = 8;
/** How often the calls report progress: each is a network round trip, so far more often than a plan's rows. */
const PROGRESS_EVERY_CALLS = 64;

interface Subscriber {
  /** Where it came from: the event file, or `file:line`. */
  source: string;
  decision: Decision;
  kind: EventKind;
}

/** `clock` is the real time (tests pass their own): a real run never creates a step due before it. */
export const main = commandMain(COMMAND, async (f, io, clock: () => number = Date.now): Promise<number> => {
  if (f.journey === undefined) throw new UsageError("--journey NAME is required (see --help)");
  if ((f.event === undefined) === (f.recipients === undefined))
    throw new UsageError("give one of --event FILE and --recipients CSV");
  const dryRun = f["dry-run"] as boolean;
  // A backlog's trigger time is --now: run again with another, and every step (the welcome sent minutes ago, its
  // schedule deleted since) would be created anew.
  if (f.recipients !== undefined && f.now === undefined && !dryRun)
    throw new UsageError(
      "--recipients needs --now: the backlog's trigger time, the same on every run of this backlog (a re-run then creates only what is missing)",
    );
  const now = f.now ?? clock();
  const rows = progressReporter(io, f.progress, "enrolling");
  const deadline = new Deadline(f["timeout-seconds"], (t) => rows.say(t));
  const outputs = outputsFromFlags(f);
  const journey = findJourney(f.journey, f.journeys, outputs);
  const settings = withJourneySms(journey, enrolmentSettings(outputs), f.templates);
  const quietProblem = quietWindowProblem(
    [journey],
    settings.windowMinutes,
    "the stack's journeyEnrolment.windowMinutes",
  );
  if (quietProblem) throw new UsageError(quietProblem);

  // Steps due before this, when the run starts, are passed (an earlier run may have sent them); a dry run judges at --now.
  const dueAfter = dryRun ? now : Math.max(now, clock());
  const subscribers =
    f.event !== undefined
      ? [fromEventFile(f.event, journey, settings, dueAfter)]
      : await fromCsv(f.recipients!, journey, settings, now, dueAfter, rows.report).finally(() => rows.end());
  requireJourneyTemplates(f.templates, journey);
  if (dryRun && f.json) {
    deadline.dispose();
    return printRequests(subscribers, io);
  }
  const results: (EnrolmentResult & { source: string })[] = [];
  const client = dryRun ? undefined : enrolmentClients(outputs);
  let failure: string | undefined;
  let notHandled = 0;
  // Due is judged again at each call, on the real time: a large backlog takes minutes.
  const at = () => Math.max(now, clock());
  let handled = 0;
  try {
    await forEachLimited(subscribers, BACKLOG_CONCURRENCY, async (s) => {
      // Each call is bounded by what is left of the command's time limit (and never more than CALL_TIMEOUT_MS).
      const left = deadline.endsAt - Date.now();
      if (client && left <= 0) {
        notHandled++;
        return;
      }
      try {
        const result = client
          ? await applyDecision(client, s.kind, s.decision, Math.min(CALL_TIMEOUT_MS, left), at)
          : plannedResult(s);
        results.push({ source: s.source, ...result });
      } catch (e) {
        if (!(e instanceof EnrolmentError)) throw e;
        failure ??= `${s.source}: ${e.message}`;
      }
      if (++handled % PROGRESS_EVERY_CALLS === 0) rows.report(handled, "subscribers handled", subscribers.length);
    });
  } finally {
    rows.end();
    deadline.dispose();
  }
  if (notHandled && !failure)
    failure = `the time limit of ${deadline.seconds} s (--timeout-seconds) ran out with ${notHandled} subscriber(s) not handled: run the backlog again with the same --now (only what is missing is created)`;
  else if (notHandled) failure += ` (${notHandled} subscriber(s) not handled: run again with the same --now)`;
  // In the backlog's order (the calls finish in any order). An index per source: a search per comparison took seconds.
  const order = new Map(subscribers.map((s, i) => [s.source, i]));
  results.sort((a, b) => order.get(a.source)! - order.get(b.source)!);
  return printResults(results, { journey, json: f.json === true, dryRun, failure }, io);
});

/** The results (text or JSON), then the exit: a failure, a late step, or every subscriber rejected is a finding. */
function printResults(
  results: (EnrolmentResult & { source: string })[],
  c: { journey: Journey; json: boolean; dryRun: boolean; failure?: string },
  io: Io,
): number {
  const { journey, json, dryRun, failure } = c;
  io.out(json ? JSON.stringify(results, null, 2) + "\n" : report(journey, results, dryRun));
  if (failure) throw new FindingsError(failure);
  const late = results.filter((r) => r.steps?.some((s) => s.status === "late"));
  if (late.length)
    throw new FindingsError(
      `${late.length} subscriber${late.length === 1 ? "" : "s"} had a step come due before it could be created, or handled after the journey's lateGraceMinutes (marked late: not created, never sent); enrol those again with a later --now, or give a large backlog a --now minutes ahead`,
    );
  return nothingToEnrol(
    results.map((r) => r.outcome),
    io,
  )
    ? 1
    : 0;
}

/**
 * `--dry-run --json`: the array of requests is the contract (readers pass each to CreateSchedule), so rejections go
 * to stderr, one line each. Exit 1 for a late step or when every subscriber is rejected.
 */
function printRequests(subscribers: Subscriber[], io: Io): number {
  io.out(
    JSON.stringify(
      subscribers.flatMap((s) => requestsOf(s.decision)),
      null,
      2,
    ) + "\n",
  );
  for (const s of subscribers)
    if (s.decision.outcome === "rejected") io.err(`${rejectionLine(s.source, s.decision)}\n`);
  const lateSteps = subscribers.some(
    (s) => s.decision.outcome === "enrol" && s.decision.steps.some((x) => x.status === "late"),
  );
  if (lateSteps) return 1;
  return nothingToEnrol(
    subscribers.map((s) => s.decision.outcome),
    io,
  )
    ? 1
    : 0;
}

/** Before any request: every step's template is in the templates folder (exit 2 naming the one missing). */
function requireJourneyTemplates(dir: string | undefined, journey: Journey): void {
  const noAudience = { variants: [], holdoutBasisPoints: 0 };
  campaignTemplates(
    dir,
    journey.steps.map((s, k) => ({ number: k + 1, template: s.channel === "sms" ? undefined : s.template })),
    noAudience,
  );
}

/** The rule for rows: rejected subscribers are listed with their reason; only a run where every one is rejected is a finding. */
function nothingToEnrol(outcomes: string[], io: Io): boolean {
  if (outcomes.some((o) => o !== "rejected")) return false;
  io.err(
    outcomes.length
      ? `error: nothing to enrol: every subscriber was rejected (${outcomes.length}, each listed with its reason)\n`
      : "error: nothing to enrol: no subscriber\n",
  );
  return true;
}

function rejectionLine(source: string, d: Extract<Decision, { outcome: "rejected" }>): string {
  return `rejected ${source}${d.recipient ? ` ${d.recipient}` : ""} ${d.reason}: ${d.message}`;
}

function findJourney(name: string, file: string | undefined, outputs: StackOutputs): Journey {
  let journeys: Journey[];
  if (file !== undefined) {
    const text = readInputFile(file);
    let value: unknown;
    try {
      value = parseYaml(text); // YAML is a superset of JSON
    } catch (e) {
      throw new JourneyDefinitionError(`${file}: not YAML or JSON: ${(e as Error).message.split("\n")[0]}`);
    }
    journeys = parseJourneys(value, file, isIanaZone);
  } else if (outputs.journeyDefinitions !== undefined) {
    journeys = parseJourneys(outputs.journeyDefinitions, "stack output journeyDefinitions", isIanaZone);
  } else throw new UsageError("no journeys: give --journeys FILE, or --outputs/--stack of a stack with journeys");
  const journey = journeys.find((j) => j.name === name);
  if (!journey)
    throw new UsageError(
      `--journey ${name}: no such journey (known: ${journeys.map((j) => j.name).join(", ") || "none"})`,
    );
  return journey;
}

/** A real run's clients: Scheduler, and the ledger where each trigger's enrolment is claimed (as the function does). */
function enrolmentClients(outputs: StackOutputs): EnrolmentClients {
  const { ledgerTableName, region } = outputs;
  if (!ledgerTableName)
    throw new UsageError(
      "missing stack output ledgerTableName (the occurrence ledger, where each enrolment is claimed once): give --stack NAME or --outputs FILE of a stack that has it, or --dry-run",
    );
  return {
    scheduler: enrolmentSchedulerClient(region),
    ledger: { client: enrolmentLedgerClient(region), tableName: ledgerTableName },
  };
}

function enrolmentSettings(outputs: StackOutputs): EnrolmentSettings {
  const e = outputs.journeyEnrolment as
    { target?: SchedulerTargetParameters; windowMinutes?: number; sms?: EnrolmentSettings["sms"] } | undefined;
  if (
    !e?.target?.targetRoleArn ||
    !e.target.deadLetterQueueArn ||
    !e.target.fromAddress ||
    !(Number(e.windowMinutes) >= 1)
  )
    throw new UsageError(
      "missing stack output journeyEnrolment (the SES target journey schedules carry): give --stack NAME or --outputs FILE of a stack with journeys",
    );
  // With SMS steps, the stack's output carries their templates' texts, as the function's settings do.
  return { target: e.target, windowMinutes: Number(e.windowMinutes), ...(e.sms ? { sms: e.sms } : {}) };
}

function fromEventFile(file: string, journey: Journey, settings: EnrolmentSettings, now: number): Subscriber {
  const text = readInputFile(file);
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${file}: not JSON: ${(e as Error).message}`);
  }
  // A record from the journeys' dead-letter queue replays as is: Lambda's on-failure record carries the function's
  // input ({journey, kind, event}) as requestPayload.
  const invocation = parsed?.requestPayload ?? parsed;
  if (invocation?.event !== undefined && invocation?.journey !== undefined && invocation.journey !== journey.name)
    throw new UsageError(`${file}: the event is for journey "${invocation.journey}", not "${journey.name}"`);
  const event: JourneyEvent = invocation?.event !== undefined ? invocation.event : parsed;
  const matches = (m?: { source: string; detailType: string }) =>
    m && event?.source === m.source && event?.["detail-type"] === m.detailType;
  const kind: EventKind | undefined = matches(journey.trigger) ? "trigger" : matches(journey.exit) ? "exit" : undefined;
  if (!kind) {
    const expected = [journey.trigger, journey.exit]
      .filter(Boolean)
      .map((m) => `${m!.source} ${m!.detailType}`)
      .join(" or ");
    throw new UsageError(
      `${file}: source ${JSON.stringify(event?.source)} detail-type ${JSON.stringify(event?.["detail-type"])} is neither of journey "${journey.name}"'s events (${expected})`,
    );
  }
  return { source: file, kind, decision: decide(journey, kind, event, settings, now) };
}

/** Each row triggered at `now`; steps due before `dueAfter` are passed. */
async function fromCsv(
  file: string,
  journey: Journey,
  settings: EnrolmentSettings,
  now: number,
  dueAfter: number,
  progress: RowProgress,
): Promise<Subscriber[]> {
  const csv = await openRecipientCsv(file);
  for (const required of ["id", "email"])
    if (csv.column(required) === undefined)
      throw new UsageError(`${file}:1: the header needs a column "${required}" (found: ${csv.header.join(", ")})`);
  refuseMisspeltControlColumns(file, csv.header, [TIMEZONE_COLUMN]);
  const time = new Date(now).toISOString();
  const seen = new Map<string, number>();
  const seenAddresses = new Map<string, number>();
  const subscribers: Subscriber[] = [];
  for await (const rec of csv.records) {
    if ((subscribers.length + 1) % PROGRESS_EVERY_ROWS === 0) progress(subscribers.length + 1, "rows read");
    const source = `${file}:${rec.line}`;
    const recipient = Object.fromEntries(
      csv.header.map((h, i) => [h, rec.fields[i]]).filter(([, v]) => v !== undefined),
    );
    const rejected = (reason: RejectReason, message: string): Subscriber => ({
      source,
      kind: "trigger",
      decision: { outcome: "rejected", journey: journey.name, reason, message },
    });
    if (rec.fields.length !== csv.header.length) {
      subscribers.push(
        rejected("wrong-field-count", `${rec.fields.length} fields where the header has ${csv.header.length}`),
      );
      continue;
    }
    const id = String(recipient.id ?? "");
    const first = seen.get(id);
    if (id !== "" && first !== undefined) {
      subscribers.push(
        rejected("duplicate-id", `duplicate id (first on line ${first}); a subscriber is enrolled once`),
      );
      continue;
    }
    seen.set(id, rec.line);
    // As the launcher: a person is mailed once, whatever ids their address comes with.
    const address = String(recipient.email ?? "")
      .trim()
      .toLowerCase();
    const firstAddress = seenAddresses.get(address);
    if (address !== "" && firstAddress !== undefined) {
      subscribers.push(
        rejected("duplicate-email", `address already on line ${firstAddress}; a person is enrolled once`),
      );
      continue;
    }
    seenAddresses.set(address, rec.line);
    const event: JourneyEvent = {
      source: journey.trigger.source,
      "detail-type": journey.trigger.detailType,
      time,
      detail: { recipient },
    };
    subscribers.push({
      source,
      kind: "trigger",
      decision: decide(journey, "trigger", event, settings, dueAfter, { backlog: true }),
    });
  }
  return subscribers;
}

function requestsOf(d: Decision): object[] {
  if (d.outcome === "enrol") return d.steps.flatMap((s) => (s.request ? [s.request] : []));
  if (d.outcome === "exit") return d.deletes;
  return [];
}

/** What a dry run would do, in the shape of a real run's result. */
function plannedResult(s: Subscriber): EnrolmentResult {
  const d = s.decision;
  const base = { journey: d.journey, kind: s.kind };
  if (d.outcome === "rejected")
    return { ...base, outcome: "rejected", recipient: d.recipient, reason: d.reason, message: d.message };
  if (d.outcome === "exit")
    return {
      ...base,
      outcome: "exited",
      recipient: d.recipient,
      deleted: d.deletes.map((x) => x.Name),
      notPending: [],
    };
  return {
    ...base,
    outcome: "enrolled",
    recipient: d.recipient,
    trigger: d.trigger,
    zone: d.zone,
    zoneStatus: d.zoneStatus,
    steps: d.steps.map(({ request, ...step }) => ({
      ...step,
      status: request ? ("created" as const) : step.status === "planned" ? ("passed" as const) : step.status,
    })),
  };
}

function report(journey: Journey, results: (EnrolmentResult & { source: string })[], dryRun: boolean): string {
  const count = (o: string) => results.filter((r) => r.outcome === o).length;
  const created = results.flatMap((r) => r.steps ?? []).filter((s) => s.status === "created").length;
  const verb = dryRun ? "to create" : "created";
  const duplicates = count("duplicate") ? `, ${count("duplicate")} duplicate` : "";
  const lines = [
    `Journey ${journey.name}: ${results.length} subscriber${results.length === 1 ? "" : "s"} → ${count("enrolled")} enrolled (${created} schedules ${verb}), ${count("exited")} exited, ${count("rejected")} rejected${duplicates}`,
  ];
  for (const r of results) {
    if (r.outcome === "duplicate") lines.push(`  ${r.recipient}: duplicate: ${r.message}`);
    else if (r.outcome === "rejected")
      lines.push(
        `  ${r.source}: rejected ${r.recipient ?? ""} ${r.reason}: ${r.message}`
          .replace(/  +/g, " ")
          .replace(/^ /, "  "),
      );
    else if (r.outcome === "exited")
      lines.push(
        `  ${r.recipient}: exit: ${dryRun ? "would delete" : "deleted"} ${r.deleted!.join(", ") || "nothing"}${r.notPending!.length ? `; not pending: ${r.notPending!.join(", ")}` : ""}`,
      );
    else {
      const zone = r.zoneStatus === "ok" ? r.zone : `${r.zone} (${r.zoneStatus})`;
      lines.push(`  ${r.recipient} in ${zone}`);
      for (const s of r.steps!) {
        const status = dryRun && s.status === "created" ? "planned" : s.status;
        lines.push(
          `    ${s.step} ${s.template.padEnd(20)} at(${s.send_at}) ${s.timezone.padEnd(16)} ${s.utc}  ${status}${s.note ? ` (${s.note})` : ""}`,
        );
      }
    }
  }
  if (dryRun) lines.push("Dry run: no schedule created or deleted.");
  return lines.join("\n") + "\n";
}

async function forEachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
