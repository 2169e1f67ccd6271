/**
 * Fan-out guards, read from the state machine definition the stack deploys.
 */
import { ReportViolation, ResourceValidationArgs, ResourceValidationPolicy } from "@pulumi/policy";
import { STACK_QUOTA_TAG } from "../infra/core/plan/naming";
import {
  FANOUT_HEADROOM,
  maxCallsInFlight,
  pacing,
  peakConcurrentCreates,
  scheduler,
  stepFunctions,
} from "../infra/core/plan/quotas";
import { STATE_MACHINE } from "./resource-types";

/**
 * The CreateSchedule integration, with any integration-pattern suffix (`.sync`, `.waitForTaskToken`): a suffixed task
 * still creates schedules, so every check applies to it (and fanout-schedule-safety refuses the suffix).
 */
const CREATE_SCHEDULE = /^arn:aws[a-z-]*:states:::aws-sdk:scheduler:createSchedule(\.[A-Za-z]+(:\d+)?)?$/i;
const PATTERN_SUFFIX = /\.([A-Za-z]+)(:\d+)?$/;
/**
 * Starting another state machine (the optimized integration or the SDK one, any suffix): the executions it starts may
 * create schedules, whose calls this pack cannot see from here.
 */
const START_EXECUTION =
  /^arn:aws[a-z-]*:states:::(states:startExecution|aws-sdk:sfn:start(Sync)?Execution)(\.[A-Za-z]+(:\d+)?)?$/i;

interface MapOnPath {
  name: string;
  distributed: boolean;
  maxConcurrency?: number;
  /** MaxConcurrencyPath: only known at run time. */
  dynamic: boolean;
}

interface CreateScheduleTask {
  name: string;
  state: any;
  maps: MapOnPath[];
}

/** The definition as an object, or undefined when it is unknown (preview of a new stack) or not JSON. */
function definitionOf(args: ResourceValidationArgs): any | undefined {
  if (args.type !== STATE_MACHINE) return undefined;
  const d = args.props.definition;
  if (typeof d !== "string") return undefined;
  try {
    return JSON.parse(d);
  } catch {
    return undefined;
  }
}

/** The deployed definition and its CreateSchedule tasks; none when the definition is unknown or not ours. */
function tasksOf(args: ResourceValidationArgs): { definition: any; tasks: CreateScheduleTask[] } {
  const definition = definitionOf(args);
  return { definition, tasks: definition ? createScheduleTasks(definition) : [] };
}

/** Every CreateSchedule task, with the Maps it runs inside (outermost first). */
function createScheduleTasks(
  machine: any,
  maps: MapOnPath[] = [],
  out: CreateScheduleTask[] = [],
): CreateScheduleTask[] {
  for (const [name, state] of Object.entries<any>(machine?.States ?? {})) {
    if (state.Type === "Task" && CREATE_SCHEDULE.test(String(state.Resource))) out.push({ name, state, maps });
    if (state.Type === "Map") {
      const processor = state.ItemProcessor ?? state.Iterator;
      const map: MapOnPath = {
        name,
        distributed: processor?.ProcessorConfig?.Mode === "DISTRIBUTED",
        maxConcurrency: typeof state.MaxConcurrency === "number" ? state.MaxConcurrency : undefined,
        dynamic: state.MaxConcurrencyPath !== undefined,
      };
      createScheduleTasks(processor, [...maps, map], out);
    }
    if (state.Type === "Parallel") for (const branch of state.Branches ?? []) createScheduleTasks(branch, maps, out);
  }
  return out;
}

/** A Parallel whose branches create schedules at the same time, with each branch's peak CreateSchedule calls in flight. */
interface ParallelCreates {
  name: string;
  branchPeaks: number[];
}

/**
 * The most CreateSchedule calls a (sub-)machine can have in flight: its states run one at a time, so the largest of
 * theirs; a Map multiplies its processor's by its concurrency; a Parallel runs its branches at once, so their sum.
 * Parallels with more than one branch that creates schedules are collected in `parallels`.
 */
function peakCreates(machine: any, parallels: ParallelCreates[]): number {
  let peak = 0;
  for (const [name, state] of Object.entries<any>(machine?.States ?? {})) {
    let here = 0;
    if (state.Type === "Task" && CREATE_SCHEDULE.test(String(state.Resource))) here = 1;
    if (state.Type === "Map") {
      const processor = state.ItemProcessor ?? state.Iterator;
      const inner = peakCreates(processor, parallels);
      const distributed = processor?.ProcessorConfig?.Mode === "DISTRIBUTED";
      const maxConcurrency = typeof state.MaxConcurrency === "number" ? state.MaxConcurrency : undefined;
      here = inner * peakConcurrentCreates([{ distributed, maxConcurrency }]);
    }
    if (state.Type === "Parallel") {
      const branchPeaks = (state.Branches ?? []).map((b: any) => peakCreates(b, parallels));
      if (branchPeaks.filter((x: number) => x > 0).length > 1) parallels.push({ name, branchPeaks });
      here = branchPeaks.reduce((a: number, b: number) => a + b, 0);
    }
    peak = Math.max(peak, here);
  }
  return peak;
}

/** A Map or a Parallel a state runs inside, and how many of its iterations or branches run at once. */
interface Container {
  what: string;
  atOnce: number;
}

/** Every StartExecution task that runs inside a Map or a Parallel, with its containers (outermost first). */
function startsInContainers(
  machine: any,
  containers: Container[] = [],
  out: { name: string; resource: string; containers: Container[] }[] = [],
) {
  for (const [name, state] of Object.entries<any>(machine?.States ?? {})) {
    if (state.Type === "Task" && START_EXECUTION.test(String(state.Resource)) && containers.length)
      out.push({ name, resource: String(state.Resource), containers });
    if (state.Type === "Map") {
      const processor = state.ItemProcessor ?? state.Iterator;
      const distributed = processor?.ProcessorConfig?.Mode === "DISTRIBUTED";
      const maxConcurrency =
        typeof state.MaxConcurrency === "number" && state.MaxConcurrency > 0 ? state.MaxConcurrency : undefined;
      const atOnce = peakConcurrentCreates([{ distributed, maxConcurrency }]);
      const limit =
        state.MaxConcurrencyPath !== undefined
          ? "MaxConcurrencyPath"
          : `MaxConcurrency ${maxConcurrency ? n(atOnce) : `unset (${n(atOnce)})`}`;
      startsInContainers(
        processor,
        [...containers, { what: `${distributed ? "Distributed" : "inline"} Map "${name}" ${limit}`, atOnce }],
        out,
      );
    }
    if (state.Type === "Parallel") {
      const branches: any[] = state.Branches ?? [];
      for (const branch of branches)
        startsInContainers(branch, [...containers, { what: `Parallel "${name}"`, atOnce: branches.length }], out);
    }
  }
  return out;
}

export interface ConcurrencyConfig {
  /** The account's CreateSchedule quota in the Region (requests per second). */
  createScheduleTps?: number;
  /** Share of the quota the fan-out may ask for; the rest absorbs retries and other callers. */
  headroom?: number;
  /** A CreateSchedule round trip, in milliseconds: calls in flight ÷ latency is the rate asked for. */
  callLatencyMs?: number;
}

const n = (x: number) => x.toLocaleString("en-US");

export const fanOutConcurrencyBelowQuota: ResourceValidationPolicy = {
  name: "fanout-concurrency-below-quota",
  description:
    "The fan-out never asks for more than createScheduleTps × headroom CreateSchedule calls a second: calls in flight ≤ createScheduleTps × headroom × call latency.",
  enforcementLevel: "mandatory",
  configSchema: {
    properties: {
      createScheduleTps: {
        type: "integer",
        minimum: 1,
        default: scheduler.createScheduleTps,
        description: "CreateSchedule quota (TPS) of the account and Region",
      },
      headroom: {
        type: "number",
        exclusiveMinimum: 0,
        maximum: 1,
        default: FANOUT_HEADROOM,
        description: "share of the quota the fan-out may ask for",
      },
      callLatencyMs: {
        type: "integer",
        minimum: 1,
        default: pacing.callSeconds * 1000,
        description:
          "a CreateSchedule round trip as a Step Functions task sees it (calls in flight ÷ latency = calls a second)",
      },
    },
  },
  validateResource: (args, report) => {
    const {
      createScheduleTps = scheduler.createScheduleTps,
      headroom = FANOUT_HEADROOM,
      callLatencyMs = pacing.callSeconds * 1000,
    } = args.getConfig<ConcurrencyConfig>();
    const limit = maxCallsInFlight(createScheduleTps, headroom, callLatencyMs / 1000);
    const { definition, tasks } = tasksOf(args);
    // A Map (or Parallel) that starts executions multiplies whatever CreateSchedule calls those make by its concurrency,
    // and the pack cannot read the other machine from this one: any such task is refused.
    for (const start of definition ? startsInContainers(definition) : []) {
      const atOnce = start.containers.reduce((product, c) => product * c.atOnce, 1);
      report(
        `StateMachine "${args.name}" task "${start.name}" starts state machine executions (Resource "${start.resource}") inside ${start.containers
          .map((c) => c.what)
          .reverse()
          .join(
            " inside ",
          )}, so up to ${n(atOnce)} run at once and the CreateSchedule calls they make cannot be counted against the limit of ${n(limit)}: create schedules with CreateSchedule tasks in this state machine's own Map, or start the other state machine once, outside any Map or Parallel`,
      );
    }
    if (tasks.length) checkStackQuota(args, createScheduleTps, report);
    // Branches of a Parallel run at once: their calls add up, which the per-task check below cannot see. The fan-out's
    // pacing (and the launcher's ETA) assume one stream of CreateSchedule calls, so any such Parallel is refused.
    const parallels: ParallelCreates[] = [];
    const machinePeak = tasks.length ? peakCreates(definition, parallels) : 0;
    for (const par of parallels) {
      const branches = par.branchPeaks
        .map((x, i) => (x > 0 ? `branch ${i + 1}: ${n(x)}` : undefined))
        .filter(Boolean)
        .join(", ");
      report(
        `StateMachine "${args.name}" Parallel "${par.name}" creates schedules in ${par.branchPeaks.filter((x) => x > 0).length} branches at once (${branches} CreateSchedule calls in flight), so the state machine can make ${n(machinePeak)} CreateSchedule calls at once (limit ${n(limit)}): run the branches one after another (Next), not in a Parallel`,
      );
    }
    // Tasks inside the same Maps run one at a time per iteration (the fan-out's Choice picks the one-time or the
    // recurring CreateSchedule): they share one concurrency, checked once.
    const checked = new Set<string>();
    for (const task of tasks) {
      const path = task.maps.map((m) => m.name).join("/");
      if (checked.has(path)) continue;
      checked.add(path);
      const where = `StateMachine "${args.name}" task "${task.name}"`;
      const dynamic = task.maps.find((m) => m.dynamic);
      if (dynamic) {
        report(
          `${where}: Map "${dynamic.name}" sets MaxConcurrencyPath, so its CreateSchedule concurrency cannot be checked: set MaxConcurrency (at most ${n(limit)} calls in flight)`,
        );
        continue;
      }
      const peak = peakConcurrentCreates(task.maps);
      if (peak <= limit) continue;
      const distributed = task.maps.find((m) => m.distributed);
      const factors = task.maps
        .map(
          (m) =>
            `${m.distributed ? "Distributed" : "inline"} Map "${m.name}" MaxConcurrency ${m.maxConcurrency || `unset (${n(m.distributed ? stepFunctions.distributedMapDefaultConcurrency : stepFunctions.inlineMapMaxConcurrency)})`}`,
        )
        .join(" × ");
      const perChild = distributed
        ? peak / (distributed.maxConcurrency || stepFunctions.distributedMapDefaultConcurrency)
        : peak;
      const fix = distributed
        ? `set the Distributed Map "${distributed.name}" MaxConcurrency to at most ${n(Math.max(1, Math.floor(limit / perChild)))}`
        : "lower the Maps' MaxConcurrency";
      report(
        `${where} can make ${n(peak)} CreateSchedule calls at once (${factors || "no Map"}), above ${n(limit)} (createScheduleTps ${n(createScheduleTps)} × headroom ${headroom} × ${n(callLatencyMs)} ms a call): ${fix}, or raise the quota and createScheduleTps`,
      );
    }
  },
};

/**
 * The policy config's quota must be the one the stack was sized for (the state machine's STACK_QUOTA_TAG): otherwise
 * the concurrency check would hold against a quota the account does not have.
 */
function checkStackQuota(args: ResourceValidationArgs, createScheduleTps: number, report: ReportViolation): void {
  const tagged = args.props.tags?.[STACK_QUOTA_TAG];
  if (tagged === undefined) return;
  const where = `StateMachine "${args.name}"`;
  if (!/^\d+$/.test(String(tagged))) {
    report(
      `${where}: tag ${STACK_QUOTA_TAG} = ${JSON.stringify(tagged)} is not a whole number: it must be the stack's createScheduleTps`,
    );
  } else if (Number(tagged) !== createScheduleTps) {
    report(
      `${where} was built for createScheduleTps ${n(Number(tagged))} (tag ${STACK_QUOTA_TAG}), but the policy config checks against ${n(createScheduleTps)}: make sendtime:createScheduleTps in Pulumi.<stack>.yaml and createScheduleTps in policy/config/<stack>.json the same`,
    );
  }
}

/** A number in range, or a JSONPath (`<key>.$`) that supplies it at run time. */
function inRangeOrPath(obj: any, key: string, range: { min: number; max: number }): boolean {
  if (obj && typeof obj[`${key}.$`] === "string") return true;
  const v = obj?.[key];
  return Number.isInteger(v) && v >= range.min && v <= range.max;
}

const RETRY_COVERS_THROTTLING = ["Scheduler.ThrottlingException", "States.ALL", "States.TaskFailed"];

export const fanOutScheduleSafety: ResourceValidationPolicy = {
  name: "fanout-schedule-safety",
  description:
    "Every schedule deletes itself, spreads its sends, retries into a dead-letter queue, and its creation retries throttling.",
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    for (const task of tasksOf(args).tasks) {
      const where = `StateMachine "${args.name}" task "${task.name}"`;
      const p = task.state.Parameters ?? task.state.Arguments ?? {};
      const w = scheduler.flexibleWindowMinutes;
      const resource = String(task.state.Resource);
      const suffix = PATTERN_SUFFIX.exec(resource.replace(/^.*:createSchedule/i, ""));
      if (suffix) {
        const why =
          suffix[1] === "waitForTaskToken"
            ? "which waits for a task token that CreateSchedule never returns (the child hangs until its timeout; EXPRESS children refuse it)"
            : "which AWS SDK integrations do not support (there is no job to wait for)";
        report(
          `${where}: Resource "${resource}" uses the .${suffix[1]} integration pattern, ${why}: use "${resource.replace(/(:createSchedule)\..*$/i, "$1")}" (request-response)`,
        );
      }
      if (p.ActionAfterCompletion !== "DELETE") {
        report(
          `${where}: ActionAfterCompletion is ${JSON.stringify(p.ActionAfterCompletion ?? "unset")}, so spent schedules pile up toward the ${n(scheduler.maxSchedules)} quota: set "ActionAfterCompletion": "DELETE"`,
        );
      }
      const ftw = p.FlexibleTimeWindow;
      if (ftw?.Mode !== "FLEXIBLE" || !inRangeOrPath(ftw, "MaximumWindowInMinutes", w)) {
        report(
          `${where}: FlexibleTimeWindow ${JSON.stringify(ftw ?? "unset")} does not spread sends: use {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": ${w.min}–${n(w.max)}} (size it with scripts/size-window.ts)`,
        );
      }
      const retry = p.Target?.RetryPolicy;
      if (
        !inRangeOrPath(retry, "MaximumEventAgeInSeconds", scheduler.maxEventAgeSeconds) ||
        !inRangeOrPath(retry, "MaximumRetryAttempts", scheduler.maxRetryAttempts)
      ) {
        report(
          `${where}: Target.RetryPolicy ${JSON.stringify(retry ?? "unset")} is outside the API's ranges: MaximumEventAgeInSeconds ${scheduler.maxEventAgeSeconds.min}–${n(scheduler.maxEventAgeSeconds.max)}, MaximumRetryAttempts ${scheduler.maxRetryAttempts.min}–${scheduler.maxRetryAttempts.max}`,
        );
      }
      const dlq = p.Target?.DeadLetterConfig;
      if (!dlq || (typeof dlq.Arn !== "string" && typeof dlq["Arn.$"] !== "string")) {
        report(
          `${where}: no Target.DeadLetterConfig, so a send Scheduler gives up on vanishes: set {"DeadLetterConfig": {"Arn": "<SQS queue ARN>"}}`,
        );
      }
      const retriers: any[] = task.state.Retry ?? [];
      if (
        !retriers.some(
          (r) =>
            (r.ErrorEquals ?? []).some((e: string) => RETRY_COVERS_THROTTLING.includes(e)) && (r.MaxAttempts ?? 3) > 0,
        )
      ) {
        report(
          `${where}: no Retry covers Scheduler.ThrottlingException, so one throttle fails the batch: add a Retry with backoff and "JitterStrategy": "FULL"`,
        );
      }
    }
  },
};

export const fanOutBatchedChildren: ResourceValidationPolicy = {
  name: "fanout-batched-children",
  description:
    "A Distributed Map should not start one STANDARD child per recipient (about $75 per million in state transitions).",
  enforcementLevel: "advisory",
  validateResource: (args, report) => {
    const { definition, tasks } = tasksOf(args);
    const maps = new Set(tasks.flatMap((t) => t.maps.filter((m) => m.distributed).map((m) => m.name)));
    for (const name of maps) {
      const state = findState(definition, name);
      const standard = (state?.ItemProcessor?.ProcessorConfig?.ExecutionType ?? "STANDARD") === "STANDARD";
      const perItem = !state?.ItemBatcher || state.ItemBatcher.MaxItemsPerBatch === 1;
      if (standard && perItem) {
        report(
          `StateMachine "${args.name}" Map "${name}" starts one STANDARD child per item: about $75 per million recipients in state transitions; batch items (ItemBatcher) into EXPRESS children`,
        );
      }
    }
  },
};

/** The Map state of that name, inside Maps and Parallel branches too (a Parallel may share the name of a Map it runs). */
function findState(machine: any, name: string): any {
  for (const [n, s] of Object.entries<any>(machine?.States ?? {})) {
    if (n === name && s.Type === "Map") return s;
    for (const sub of [s.ItemProcessor ?? s.Iterator, ...(s.Branches ?? [])]) {
      const inner = findState(sub, name);
      if (inner) return inner;
    }
  }
  return undefined;
}

export const fanOutLogsExcludeExecutionData: ResourceValidationPolicy = {
  name: "fanout-logs-exclude-execution-data",
  description: "State machine logs leave out execution data: plan rows carry recipient addresses.",
  enforcementLevel: "advisory",
  validateResource: (args, report) => {
    if (args.type !== STATE_MACHINE) return;
    if (args.props.loggingConfiguration?.includeExecutionData === true) {
      report(
        `StateMachine "${args.name}" logs execution data, so recipient addresses land in CloudWatch Logs: set loggingConfiguration.includeExecutionData to false`,
      );
    }
  },
};
