/**
 * A small interpreter for the subset of Amazon States Language (JSONPath) the fan-out uses: Task (aws-sdk
 * integrations, answered by a fake), Pass, Fail, Choice (IsPresent, IsNull, StringEquals, IsTimestamp, TimestampGreaterThanPath, Not/And/Or), Map (DISTRIBUTED with ItemReader JSONL + ItemBatcher + ResultWriter,
 * and INLINE), Parameters/ItemSelector with paths and intrinsics (States.Format, States.Array, States.JsonToString),
 * ResultSelector, ResultPath, OutputPath, Retry and Catch; and Choice and Pass states in JSONata (QueryLanguage
 * "JSONata": Condition, Output, evaluated by the jsonata library with `$states.input` and `$states.context`). It runs the definition
 * the stack deploys, so tests can check what CreateSchedule requests it would make. Unknown constructs throw: the
 * interpreter never guesses.
 *
 * Time is virtual: the execution starts at `Services.startTime`, every aws-sdk call takes `Services.callSeconds`,
 * every retry waits its capped delay (the worst case of full jitter), an inline Map runs its items in waves of
 * MaxConcurrency, the Distributed Map starts its children when it starts, and an EXPRESS child that passes 5 minutes
 * fails with States.Timeout, as Step Functions ends it. The context object's State.EnteredTime is that clock.
 */
import { evaluateJsonataSync, JsonataError } from "./jsonata-sync";

export class StatesError extends Error {
  constructor(
    public readonly error: string,
    public readonly cause = "",
  ) {
    super(`${error}: ${cause}`);
  }
}

export interface Services {
  /** An aws-sdk integration call, e.g. ("scheduler", "createSchedule", params); throw StatesError to fail. */
  sdk(service: string, action: string, params: any): any;
  /** S3 object text for the ItemReader. */
  getObject(bucket: string, key: string): string;
  /** Virtual seconds each aws-sdk call takes (default 0). */
  callSeconds?: number;
  /**
   * When the execution starts (ISO instant): State.EnteredTime counts from it. Absent: 1970-01-01T00:00:00Z, a start
   * before any plan's sends (tests of the fan-out's timing pass their own).
   */
  startTime?: string;
  /** Where the Distributed Map writes results; receives failed batches. */
  writeResults?(
    bucket: string,
    prefix: string,
    results: { failed: { input: any; error: string }[]; succeeded: any[] },
  ): void;
}

export interface RunStats {
  /** Every retry, with the capped backoff delay it would wait (before jitter). */
  retries: { state: string; error: string; attempt: number; maxDelaySeconds: number }[];
}

interface Context {
  execution: { Input: any };
  map?: { Item: { Value: any; Index: number } };
  /** Virtual seconds since the execution started at `originMs`, and when it is ended (EXPRESS: 300). */
  clock: { seconds: number; limit?: number; originMs: number };
  /** The state being run and when it was entered, for the context object. */
  state?: { Name: string; EnteredTime: string };
}

/** EXPRESS executions run at most 5 minutes. */
const EXPRESS_LIMIT_SECONDS = 300;

export function runStateMachine(
  definition: any,
  input: any,
  services: Services,
  stats: RunStats = { retries: [] },
): any {
  const originMs = Date.parse(services.startTime ?? "1970-01-01T00:00:00Z");
  if (Number.isNaN(originMs)) throw new Error(`startTime ${services.startTime} is not an ISO instant`);
  return runStates(
    definition,
    input,
    { execution: { Input: input }, clock: { seconds: 0, originMs } },
    services,
    stats,
  );
}

function runStates(machine: any, input: any, ctx: Context, services: Services, stats: RunStats): any {
  let name: string = machine.StartAt;
  let data = input;
  for (let steps = 0; steps < 10_000; steps++) {
    const state = machine.States[name];
    if (!state) throw new Error(`no state ${name}`);
    ctx.state = { Name: name, EnteredTime: new Date(ctx.clock.originMs + ctx.clock.seconds * 1000).toISOString() };
    const { output, next } = runState(name, state, data, ctx, services, stats);
    const { seconds, limit } = ctx.clock;
    if (limit !== undefined && seconds > limit)
      throw new StatesError("States.Timeout", `execution ran ${seconds} s, over ${limit} s`);
    data = output;
    if (next === undefined) return data;
    name = next;
  }
  throw new Error("too many steps");
}

function runState(
  name: string,
  state: any,
  input: any,
  ctx: Context,
  services: Services,
  stats: RunStats,
): { output: any; next?: string } {
  const known = new Set([
    "Type",
    "Comment",
    "Resource",
    "Parameters",
    "ResultSelector",
    "ResultPath",
    "OutputPath",
    "Retry",
    "Catch",
    "Next",
    "End",
    "Result",
    "ItemReader",
    "ItemBatcher",
    "ItemsPath",
    "ItemSelector",
    "ItemProcessor",
    "MaxConcurrency",
    "ToleratedFailurePercentage",
    "ResultWriter",
    "Choices",
    "Default",
    "QueryLanguage",
    "Output",
    "Error",
    "Cause",
  ]);
  for (const k of Object.keys(state))
    if (!known.has(k)) throw new Error(`interpreter does not support ${k} (state ${name})`);
  if (state.InputPath !== undefined) throw new Error("InputPath unsupported");
  if (state.Output !== undefined && state.QueryLanguage !== "JSONata")
    throw new Error(`Output is JSONata's (state ${name})`);

  if (state.QueryLanguage !== undefined && state.QueryLanguage !== "JSONPath") {
    if (state.QueryLanguage === "JSONata" && state.Type === "Pass") return jsonataPass(name, state, input, ctx);
    if (state.QueryLanguage !== "JSONata" || state.Type !== "Choice")
      throw new Error(`interpreter supports JSONata in Choice and Pass states only (state ${name})`);
    return { output: input, next: jsonataChoice(name, state, input, ctx) };
  }
  if (state.Type === "Fail") throw new StatesError(state.Error, state.Cause);
  if (state.Type === "Choice") {
    const rule = state.Choices.find((r: any) => choiceMatches(r, input, ctx));
    const next = rule ? rule.Next : state.Default;
    if (next === undefined) throw new StatesError("States.NoChoiceMatched", `no rule of ${name} matched`);
    return { output: input, next };
  }

  const attemptBody = (): any => {
    switch (state.Type) {
      case "Pass":
        return state.Result !== undefined
          ? state.Result
          : state.Parameters
            ? resolveTemplate(state.Parameters, input, ctx)
            : input;
      case "Task": {
        const m = /^arn:[^:]+:states:::aws-sdk:([a-z0-9]+):([A-Za-z]+)$/.exec(state.Resource);
        if (!m) throw new Error(`unsupported resource ${state.Resource}`);
        const params = resolveTemplate(state.Parameters ?? {}, input, ctx);
        ctx.clock.seconds += services.callSeconds ?? 0;
        return services.sdk(m[1], m[2], params);
      }
      case "Map":
        return state.ItemProcessor.ProcessorConfig?.Mode === "DISTRIBUTED"
          ? runDistributedMap(state, input, ctx, services, stats)
          : runInlineMap(state, input, ctx, services, stats);
      default:
        throw new Error(`unsupported state type ${state.Type}`);
    }
  };

  const attempts = new Map<object, number>();
  for (;;) {
    try {
      let result = attemptBody();
      if (state.ResultSelector) result = resolveTemplate(state.ResultSelector, result, ctx);
      const output = selectPath(applyResultPath(input, result, state.ResultPath), state.OutputPath);
      return { output, next: state.End ? undefined : state.Next };
    } catch (e) {
      if (!(e instanceof StatesError)) throw e;
      const retrier = (state.Retry ?? []).find((r: any) => matches(r.ErrorEquals, e.error));
      if (retrier) {
        const done = attempts.get(retrier) ?? 0;
        const max = retrier.MaxAttempts ?? 3;
        if (done < max) {
          attempts.set(retrier, done + 1);
          const base = (retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** done;
          stats.retries.push({
            state: name,
            error: e.error,
            attempt: done + 1,
            maxDelaySeconds: Math.min(base, retrier.MaxDelaySeconds ?? Infinity),
          });
          ctx.clock.seconds += Math.min(base, retrier.MaxDelaySeconds ?? Infinity);
          continue;
        }
      }
      const catcher = (state.Catch ?? []).find((c: any) => matches(c.ErrorEquals, e.error));
      if (!catcher) throw e;
      return {
        output: applyResultPath(input, { Error: e.error, Cause: e.cause }, catcher.ResultPath),
        next: catcher.Next,
      };
    }
  }
}

/** A JSONata Choice: the first rule whose Condition is true; a Condition that is not a boolean is an error. */
function jsonataChoice(name: string, state: any, input: any, ctx: Context): string {
  for (const k of Object.keys(state))
    if (!["Type", "Comment", "QueryLanguage", "Choices", "Default"].includes(k))
      throw new Error(`interpreter does not support ${k} (state ${name})`);
  const states = { input, context: contextObject(ctx) };
  for (const rule of state.Choices) {
    const m = /^\{%([\s\S]*)%\}$/.exec(rule.Condition ?? "");
    if (!m || Object.keys(rule).some((k) => k !== "Condition" && k !== "Next"))
      throw new Error(`unsupported JSONata rule ${JSON.stringify(rule)}`);
    let value: unknown;
    try {
      value = evaluateJsonataSync(m[1], { states });
    } catch (e) {
      if (e instanceof JsonataError) throw new StatesError("States.QueryEvaluationError", `${name}: ${e.message}`);
      throw e;
    }
    if (typeof value !== "boolean")
      throw new StatesError(
        "States.QueryEvaluationError",
        `${name}: Condition gave ${JSON.stringify(value)}, not a boolean`,
      );
    if (value) return rule.Next;
  }
  if (state.Default === undefined) throw new StatesError("States.NoChoiceMatched", `no rule of ${name} matched`);
  return state.Default;
}

/** A JSONata Pass: its Output evaluated (`{% … %}`), or its input when it has none. */
function jsonataPass(name: string, state: any, input: any, ctx: Context): { output: any; next?: string } {
  for (const k of Object.keys(state))
    if (!["Type", "Comment", "QueryLanguage", "Output", "Next", "End"].includes(k))
      throw new Error(`interpreter does not support ${k} (state ${name})`);
  let output = input;
  if (state.Output !== undefined) {
    const m = /^\{%([\s\S]*)%\}$/.exec(state.Output);
    if (!m) throw new Error(`unsupported JSONata Output ${JSON.stringify(state.Output)}`);
    try {
      output = evaluateJsonataSync(m[1], { states: { input, context: contextObject(ctx) } });
    } catch (e) {
      if (e instanceof JsonataError) throw new StatesError("States.QueryEvaluationError", `${name}: ${e.message}`);
      throw e;
    }
    if (output === undefined) throw new StatesError("States.QueryEvaluationError", `${name}: Output gave nothing`);
  }
  return { output, next: state.End ? undefined : state.Next };
}

/** The context object: Execution, State (Name, EnteredTime) and, inside a Map, Map.Item. */
function contextObject(ctx: Context): any {
  return { Execution: ctx.execution, State: ctx.state, Map: ctx.map };
}

/** One Choice rule. Comparing a variable that is missing is a runtime error, as in Step Functions. */
function choiceMatches(rule: any, input: any, ctx: Context): boolean {
  if (rule.Not) return !choiceMatches(rule.Not, input, ctx);
  if (rule.And) return rule.And.every((r: any) => choiceMatches(r, input, ctx));
  if (rule.Or) return rule.Or.some((r: any) => choiceMatches(r, input, ctx));
  if (rule.IsPresent !== undefined) {
    let present = true;
    try {
      getPath(input, rule.Variable, ctx);
    } catch (e) {
      if (!(e instanceof StatesError)) throw e;
      present = false;
    }
    return present === rule.IsPresent;
  }
  const value = getPath(input, rule.Variable, ctx);
  if (rule.IsNull !== undefined) return (value === null) === rule.IsNull;
  if (rule.StringEquals !== undefined) return value === rule.StringEquals;
  if (rule.IsTimestamp !== undefined) return isTimestamp(value) === rule.IsTimestamp;
  if (rule.TimestampGreaterThanPath !== undefined) {
    const other = getPath(input, rule.TimestampGreaterThanPath, ctx);
    // Step Functions: a comparison of values that are not both timestamps is false.
    return isTimestamp(value) && isTimestamp(other) && Date.parse(value) > Date.parse(other);
  }
  throw new Error(`interpreter does not support the Choice rule ${JSON.stringify(rule)}`);
}

/** An RFC 3339 timestamp as Choice rules take it: date, time, a zone (Z or an offset). */
function isTimestamp(v: unknown): v is string {
  return (
    typeof v === "string" &&
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) &&
    !Number.isNaN(Date.parse(v))
  );
}

function matches(errorEquals: string[], error: string): boolean {
  return errorEquals.includes(error) || (errorEquals.includes("States.ALL") && !error.startsWith("States.Runtime"));
}

function runInlineMap(state: any, input: any, ctx: Context, services: Services, stats: RunStats): any[] {
  const items = selectPath(input, state.ItemsPath ?? "$");
  if (!Array.isArray(items)) throw new StatesError("States.Runtime", "ItemsPath is not an array");
  const concurrency = state.MaxConcurrency || 40;
  const out: any[] = [];
  for (let wave = 0; wave < items.length; wave += concurrency) {
    // The items of a wave run side by side from the same instant; the wave ends with its slowest.
    const start = ctx.clock.seconds;
    let end = start;
    items.slice(wave, wave + concurrency).forEach((value, i) => {
      const index = wave + i;
      const itemCtx: Context = {
        ...ctx,
        map: { Item: { Value: value, Index: index } },
        clock: { ...ctx.clock, seconds: start },
      };
      const itemInput = state.ItemSelector ? resolveTemplate(state.ItemSelector, input, itemCtx) : value;
      out.push(runStates(state.ItemProcessor, itemInput, itemCtx, services, stats));
      end = Math.max(end, itemCtx.clock.seconds);
    });
    ctx.clock.seconds = end;
  }
  return out;
}

function runDistributedMap(state: any, input: any, ctx: Context, services: Services, stats: RunStats): any {
  const reader = state.ItemReader;
  if (reader.ReaderConfig?.InputType !== "JSONL") throw new Error("only JSONL ItemReader supported");
  const where = resolveTemplate(reader.Parameters, input, ctx);
  const text = services.getObject(where.Bucket, where.Key);
  const items = text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
  const batcher = state.ItemBatcher;
  const batchInput = batcher?.BatchInput ? resolveTemplate(batcher.BatchInput, input, ctx) : undefined;
  const batches: any[][] = [];
  for (const item of items) {
    const last = batches[batches.length - 1];
    const size = (b: any[]) => Buffer.byteLength(JSON.stringify({ Items: b, BatchInput: batchInput }));
    if (
      last &&
      last.length < (batcher?.MaxItemsPerBatch ?? 1) &&
      size([...last, item]) <= (batcher?.MaxInputBytesPerBatch ?? 262_144)
    )
      last.push(item);
    else batches.push([item]);
  }
  const failed: { input: any; error: string; items: number }[] = [];
  const succeeded: any[] = [];
  for (const batch of batches) {
    const childInput = batcher ? { Items: batch, BatchInput: batchInput } : batch[0];
    try {
      const express = state.ItemProcessor.ProcessorConfig?.ExecutionType === "EXPRESS";
      // Every child starts when the Map does (MaxConcurrency is not modelled).
      const clock = {
        seconds: 0,
        limit: express ? EXPRESS_LIMIT_SECONDS : undefined,
        originMs: ctx.clock.originMs + ctx.clock.seconds * 1000,
      };
      succeeded.push(
        runStates(state.ItemProcessor, childInput, { execution: { Input: childInput }, clock }, services, stats),
      );
    } catch (e) {
      if (!(e instanceof StatesError)) throw e;
      failed.push({ input: childInput, error: e.error, items: batch.length });
    }
  }
  const writer = state.ResultWriter;
  const w = writer ? resolveTemplate(writer.Parameters, input, ctx) : undefined;
  if (w) services.writeResults?.(w.Bucket, w.Prefix, { failed, succeeded });
  const failedItems = failed.reduce((n, f) => n + f.items, 0);
  if (items.length && (failedItems / items.length) * 100 > (state.ToleratedFailurePercentage ?? 0)) {
    throw new StatesError("States.ExceedToleratedFailureThreshold", `${failedItems} of ${items.length} items failed`);
  }
  return {
    ResultWriterDetails: w ? { Bucket: w.Bucket, Key: `${w.Prefix}/manifest.json` } : undefined,
    failedItems,
    items: items.length,
  };
}

function applyResultPath(input: any, result: any, resultPath: string | null | undefined): any {
  if (resultPath === null) return input;
  if (resultPath === undefined || resultPath === "$") return result;
  const keys = parsePath(resultPath, "$");
  const copy = structuredClone(input ?? {});
  let node = copy;
  keys.slice(0, -1).forEach((k) => (node = node[k] ??= {}));
  node[keys[keys.length - 1]] = result;
  return copy;
}

function selectPath(data: any, path: string | null | undefined): any {
  if (path === null) return {};
  if (path === undefined || path === "$") return data;
  return getPath(data, path, undefined);
}

function parsePath(path: string, root: string): string[] {
  if (path === root) return [];
  if (!path.startsWith(root + ".")) throw new Error(`unsupported path ${path}`);
  return path.slice(root.length + 1).split(".");
}

function getPath(data: any, path: string, ctx: Context | undefined): any {
  let node: any;
  let keys: string[];
  if (path.startsWith("$$")) {
    if (!ctx) throw new Error("context path outside a state");
    node = contextObject(ctx);
    keys = parsePath(path, "$$");
  } else {
    node = data;
    keys = parsePath(path, "$");
  }
  for (const k of keys) {
    if (node === null || typeof node !== "object" || !(k in node))
      throw new StatesError("States.Runtime", `path ${path} not found`);
    node = node[k];
  }
  return node;
}

/** Parameters/ItemSelector/ResultSelector: keys ending in `.$` take a path or an intrinsic function. */
function resolveTemplate(template: any, data: any, ctx: Context): any {
  if (Array.isArray(template)) return template.map((t) => resolveTemplate(t, data, ctx));
  if (template === null || typeof template !== "object") return template;
  const out: Record<string, any> = {};
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith(".$")) out[key.slice(0, -2)] = evaluate(value as string, data, ctx);
    else out[key] = resolveTemplate(value, data, ctx);
  }
  return out;
}

function evaluate(expr: string, data: any, ctx: Context): any {
  if (expr.startsWith("$")) return getPath(data, expr, ctx);
  const m = /^(States\.[A-Za-z]+)\((.*)\)$/.exec(expr);
  if (!m) throw new Error(`unsupported expression ${expr}`);
  const args = splitArgs(m[2]).map((a) =>
    a.startsWith("'") ? a.slice(1, -1).replace(/\\(.)/g, "$1") : evaluate(a, data, ctx),
  );
  switch (m[1]) {
    case "States.Format": {
      const [fmt, ...rest] = args as [string, ...any[]];
      let i = 0;
      return fmt.replace(/\{\}/g, () => {
        const v = rest[i++];
        if (v !== null && typeof v === "object")
          throw new StatesError("States.IntrinsicFailure", "Format takes no objects");
        return String(v);
      });
    }
    case "States.Array":
      return args;
    case "States.JsonToString":
      return JSON.stringify(args[0]);
    default:
      throw new Error(`unsupported intrinsic ${m[1]}`);
  }
}

function splitArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0,
    quote = false,
    cur = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      cur += c;
      if (c === "\\") cur += s[++i];
      else if (c === "'") quote = false;
    } else if (c === "'") {
      quote = true;
      cur += c;
    } else if (c === "(") {
      depth++;
      cur += c;
    } else if (c === ")") {
      depth--;
      cur += c;
    } else if (c === "," && depth === 0) {
      out.push(cur.trim());
      cur = "";
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
