/**
 * Runs state machines written in JSONata (QueryLanguage "JSONata"), the subset the send gate and the sender use:
 * Task (aws-sdk and optimized integrations, answered by fakes), Choice (Condition), Pass, Succeed (with Output), Fail,
 * Wait (Seconds, recorded, not slept: they move the virtual clock of `$states.context.State.EnteredTime`, which starts at
 * the execution's StartTime) and inline Map (Items, ItemSelector, MaxConcurrency: items run one after another,
 * each with `$states.context.Map.Item`); Arguments, Output, Retry and Catch with `$states.input`, `$states.result`,
 * `$states.errorOutput` and `$states.context`. TimeoutSeconds is accepted, not modelled. Expressions are
 * evaluated by the jsonata library itself. Unknown fields throw: the interpreter never guesses.
 * Also a fake DynamoDB table that evaluates ConditionExpression and UpdateExpression like the service.
 */
import jsonata from "jsonata";
import { RunStats, StatesError } from "./asl-interpreter";

export interface JsonataServices {
  /** An integration call, e.g. ("dynamodb", "updateItem", args) or ("sesv2", "sendEmail", args). */
  call(service: string, action: string, args: any): any | Promise<any>;
}

const KNOWN = new Set([
  "Type",
  "Comment",
  "Resource",
  "Arguments",
  "Output",
  "Retry",
  "Catch",
  "Next",
  "End",
  "Choices",
  "Default",
  "Error",
  "Cause",
  "Seconds",
  "TimeoutSeconds",
  "Items",
  "ItemSelector",
  "ItemProcessor",
  "MaxConcurrency",
]);

/**
 * JSONata run statistics: the interpreter's retries, every Wait's Seconds in order and, when `sizes` is given, the
 * bytes of every state's input as JSON (Step Functions refuses more than 256 KB: States.DataLimitExceeded).
 */
export type JsonataRunStats = RunStats & { waits?: number[]; sizes?: number[] };

/** Each run is an execution of its own (an Id of its own) unless the test gives one. */
let executions = 0;

export async function runJsonataMachine(
  machine: any,
  input: any,
  services: JsonataServices,
  context: { startTime: string; executionId?: string; elapsedSeconds?: number },
  stats: JsonataRunStats = { retries: [] },
  mapContext?: { Execution: unknown; Map: { Item: { Value: unknown; Index: number } }; State?: unknown },
): Promise<{ output: any; path: string[] }> {
  if (!mapContext && machine.QueryLanguage !== "JSONata") throw new Error("not a JSONata state machine");
  const path: string[] = [];
  let name: string = machine.StartAt;
  let data = input;
  const ctx: Record<string, unknown> = mapContext ?? {
    Execution: { Id: context.executionId ?? `execution-${++executions}`, Input: input, StartTime: context.startTime },
  };
  for (let steps = 0; steps < 1000; steps++) {
    const state = machine.States[name];
    if (!state) throw new Error(`no state ${name}`);
    for (const k of Object.keys(state))
      if (!KNOWN.has(k)) throw new Error(`interpreter does not support ${k} (state ${name})`);
    path.push(name);
    const entered = Date.parse(context.startTime) + (context.elapsedSeconds ?? 0) * 1000;
    ctx.State = { Name: name, EnteredTime: new Date(entered).toISOString() };
    stats.sizes?.push(Buffer.byteLength(JSON.stringify(data ?? null)));
    const states = { input: data, context: ctx };
    switch (state.Type) {
      case "Succeed":
        return { output: state.Output === undefined ? data : await template(state.Output, states), path };
      case "Wait": {
        const seconds = await template(state.Seconds, states);
        if (!Number.isInteger(seconds) || seconds < 0)
          throw new StatesError(
            "States.Runtime",
            `${name}: Seconds ${JSON.stringify(seconds)} is not a whole number ≥ 0`,
          );
        (stats.waits ??= []).push(seconds);
        context.elapsedSeconds = (context.elapsedSeconds ?? 0) + seconds;
        name = state.Next;
        continue;
      }
      case "Map": {
        const items = await template(state.Items, states);
        if (!Array.isArray(items)) throw new StatesError("States.Runtime", `${name}: Items is not an array`);
        if (state.ItemProcessor?.ProcessorConfig?.Mode !== "INLINE") throw new Error(`${name}: only inline Maps`);
        const results: any[] = [];
        for (const [index, value] of items.entries()) {
          const itemContext = { Execution: ctx.Execution, Map: { Item: { Value: value, Index: index } } };
          const itemInput =
            state.ItemSelector === undefined
              ? value
              : await template(state.ItemSelector, { input: data, context: itemContext });
          results.push(
            (await runJsonataMachine(state.ItemProcessor, itemInput, services, context, stats, itemContext)).output,
          );
        }
        data = state.Output === undefined ? results : await template(state.Output, { ...states, result: results });
        if (state.End) return { output: data, path };
        name = state.Next;
        continue;
      }
      case "Fail":
        throw Object.assign(new StatesError(state.Error, state.Cause), { path });
      case "Choice": {
        let next = state.Default;
        for (const c of state.Choices) {
          if ((await template(c.Condition, states)) === true) {
            next = c.Next;
            break;
          }
        }
        if (next === undefined) throw new StatesError("States.NoChoiceMatched", name);
        name = next;
        continue;
      }
      case "Pass":
      case "Task": {
        const outcome = await runTask(name, state, states, services, stats);
        if (outcome.caught !== undefined) {
          data = outcome.output;
          name = outcome.caught;
          continue;
        }
        data = outcome.output;
        if (state.End) return { output: data, path };
        name = state.Next;
        continue;
      }
      default:
        throw new Error(`unsupported state type ${state.Type}`);
    }
  }
  throw new Error("too many steps");
}

/** Runs a Task or Pass with its retries; `caught` names the Catch's Next when an error was caught. */
async function runTask(
  name: string,
  state: any,
  states: any,
  services: JsonataServices,
  stats: RunStats,
): Promise<{ output: any; caught?: string }> {
  const attempts = new Map<object, number>();
  for (;;) {
    try {
      let result = states.input;
      if (state.Type === "Task") {
        const m = /^arn:[^:]+:states:::(?:aws-sdk:)?([a-z0-9]+):([A-Za-z]+)$/.exec(state.Resource);
        if (!m) throw new Error(`unsupported resource ${state.Resource}`);
        const args = await template(state.Arguments ?? {}, states);
        result = structuredClone(await services.call(m[1], m[2], args));
      }
      const output = state.Output === undefined ? result : await template(state.Output, { ...states, result });
      return { output };
    } catch (e) {
      if (!(e instanceof StatesError)) throw e;
      const retrier = (state.Retry ?? []).find((r: any) => matches(r.ErrorEquals, e.error));
      const done = retrier ? (attempts.get(retrier) ?? 0) : 0;
      if (retrier && done < (retrier.MaxAttempts ?? 3)) {
        attempts.set(retrier, done + 1);
        const base = (retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** done;
        stats.retries.push({
          state: name,
          error: e.error,
          attempt: done + 1,
          maxDelaySeconds: Math.min(base, retrier.MaxDelaySeconds ?? Infinity),
        });
        continue;
      }
      const catcher = (state.Catch ?? []).find((c: any) => matches(c.ErrorEquals, e.error));
      if (!catcher) throw e;
      const errorOutput = { Error: e.error, Cause: e.cause };
      const output =
        catcher.Output === undefined ? errorOutput : await template(catcher.Output, { ...states, errorOutput });
      return { caught: catcher.Next as string, output };
    }
  }
}

function matches(errorEquals: string[], error: string): boolean {
  return errorEquals.includes(error) || (errorEquals.includes("States.ALL") && !error.startsWith("States.Runtime"));
}

/** The functions Step Functions adds to JSONata that the state machines use: $parse (a JSON string to its value). */
const STEP_FUNCTIONS_FUNCTIONS = {
  parse: (text: string) => {
    if (typeof text !== "string") throw new Error("$parse: not a string");
    return JSON.parse(text);
  },
};

/** A JSON template: strings of the form `{% expr %}` are JSONata expressions; everything else is literal. */
async function template(t: any, states: any): Promise<any> {
  if (typeof t === "string") {
    const m = /^\{%([\s\S]*)%\}$/.exec(t);
    if (!m) return t;
    try {
      const value = await jsonata(m[1].trim()).evaluate({}, { states, ...STEP_FUNCTIONS_FUNCTIONS });
      // State data is JSON: plain objects and arrays, as Step Functions passes them on.
      return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
    } catch (e) {
      throw new StatesError("States.QueryEvaluationError", (e as Error).message);
    }
  }
  if (Array.isArray(t)) return Promise.all(t.map((x) => template(x, states)));
  if (t && typeof t === "object") {
    const out: Record<string, any> = {};
    for (const [k, v] of Object.entries(t)) out[k] = await template(v, states);
    return out;
  }
  return t;
}

type Value = { S?: string; N?: string; SS?: string[] };
type Item = Record<string, Value>;

/**
 * One DynamoDB table keyed by `pk`: UpdateItem with ConditionExpression (ADD, DELETE, SET, if_not_exists), PutItem
 * with ConditionExpression, and GetItem.
 */
export class FakeTable {
  items = new Map<string, Item>();
  updates: any[] = [];

  constructor(private readonly tableName: string) {}

  call(action: string, args: any): any {
    if (args.TableName !== this.tableName) throw new Error(`unexpected table ${args.TableName}`);
    if (action === "putItem") return this.put(args);
    const pk = args.Key?.pk?.S;
    if (typeof pk !== "string" || Object.keys(args.Key).length !== 1)
      throw new Error(`bad key ${JSON.stringify(args.Key)}`);
    if (action === "getItem") {
      const item = this.items.get(pk);
      return item ? { Item: structuredClone(item) } : {};
    }
    if (action !== "updateItem") throw new Error(`unsupported DynamoDB action ${action}`);
    this.updates.push(args);
    const values: Record<string, Value> = args.ExpressionAttributeValues ?? {};
    const current = this.items.get(pk);
    if (args.ConditionExpression && !evaluateCondition(args.ConditionExpression, current ?? {}, values)) {
      throw new StatesError("DynamoDB.ConditionalCheckFailedException", "The conditional request failed");
    }
    const next: Item = structuredClone(current ?? { pk: { S: pk } });
    applyUpdate(args.UpdateExpression, next, values);
    this.items.set(pk, next);
    return {};
  }

  private put(args: any): any {
    const pk = args.Item?.pk?.S;
    if (typeof pk !== "string") throw new Error(`bad item ${JSON.stringify(args.Item)}`);
    this.updates.push(args);
    const current = this.items.get(pk);
    if (args.ConditionExpression && !evaluateCondition(args.ConditionExpression, current ?? {}, {}))
      throw new StatesError("DynamoDB.ConditionalCheckFailedException", "The conditional request failed");
    this.items.set(pk, structuredClone(args.Item));
    return {};
  }
}

const number = (v: Value | undefined, what: string) => {
  if (v?.N === undefined) throw new StatesError("DynamoDB.ValidationException", `${what} is not a number`);
  return Number(v.N);
};

/** ConditionExpression: OR, AND, NOT, parentheses, attribute_exists/attribute_not_exists, contains, comparisons. */
export function evaluateCondition(expression: string, item: Item, values: Record<string, Value>): boolean {
  const tokens = expression.match(/\(|\)|,|<=|>=|<>|<|>|=|[A-Za-z_:][A-Za-z0-9_]*/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = (expected?: string): string => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`unexpected end of ${expression}`);
    if (expected !== undefined && t !== expected) throw new Error(`expected ${expected} at ${i} in ${expression}`);
    return t;
  };
  const operand = (t: string): Value | undefined => (t.startsWith(":") ? values[t] : item[t]);
  const or = (): boolean => {
    let v = and();
    while (peek() === "OR") (take(), (v = and() || v));
    return v;
  };
  const and = (): boolean => {
    let v = not();
    while (peek() === "AND") (take(), (v = not() && v));
    return v;
  };
  const not = (): boolean => {
    if (peek() !== "NOT") return primary();
    take();
    return !not();
  };
  const primary = (): boolean => {
    const t = take();
    if (t === "(") {
      const v = or();
      take(")");
      return v;
    }
    if (t === "attribute_exists" || t === "attribute_not_exists") {
      take("(");
      const name = take();
      take(")");
      return (item[name] !== undefined) === (t === "attribute_exists");
    }
    if (t === "contains") {
      take("(");
      const container = operand(take());
      take(",");
      const needle = operand(take());
      take(")");
      if (!container) return false;
      if (container.SS) return container.SS.includes(needle?.S ?? "");
      return (container.S ?? "").includes(needle?.S ?? "");
    }
    const op = take();
    const [l, r] = [operand(t), operand(take())];
    // As in DynamoDB, a comparison with a missing attribute is false, not an error.
    if (l === undefined || r === undefined) return false;
    const left = number(l, t);
    const right = number(r, "right operand");
    const compare: Record<string, boolean> = {
      "<": left < right,
      "<=": left <= right,
      ">": left > right,
      ">=": left >= right,
      "=": left === right,
      "<>": left !== right,
    };
    if (!(op in compare)) throw new Error(`unsupported operator ${op}`);
    return compare[op];
  };
  const result = or();
  if (i !== tokens.length) throw new Error(`unparsed rest of ${expression}`);
  return result;
}

/**
 * UpdateExpression clauses ADD (numbers, string sets), DELETE (elements of a string set; an empty set is removed, as
 * DynamoDB does) and SET (a value or if_not_exists).
 */
function applyUpdate(expression: string, item: Item, values: Record<string, Value>): void {
  for (const [, keyword, body] of expression.matchAll(/(ADD|SET|DELETE)\s+(.*?)(?=\s+(?:ADD|SET|DELETE)\s|$)/g)) {
    for (const clause of body.split(/,(?![^(]*\))/).map((c) => c.trim())) {
      if (keyword === "DELETE") {
        const [name, placeholder] = clause.split(/\s+/);
        const v = values[placeholder];
        if (!v?.SS) throw new Error(`DELETE of ${JSON.stringify(v)}`);
        if (item[name] !== undefined && !item[name].SS)
          throw new StatesError("DynamoDB.ValidationException", `${name} is not a set`);
        const left = (item[name]?.SS ?? []).filter((x) => !v.SS!.includes(x));
        if (left.length) item[name] = { SS: left };
        else delete item[name];
      } else if (keyword === "ADD") {
        const [name, placeholder] = clause.split(/\s+/);
        const v = values[placeholder];
        if (v.N !== undefined) item[name] = { N: String((item[name] ? number(item[name], name) : 0) + Number(v.N)) };
        else if (v.SS) item[name] = { SS: [...new Set([...(item[name]?.SS ?? []), ...v.SS])] };
        else throw new Error(`ADD of ${JSON.stringify(v)}`);
      } else {
        const m = /^(\w+)\s*=\s*(?:if_not_exists\((\w+),\s*(:\w+)\)|(:\w+))$/.exec(clause);
        if (!m) throw new Error(`unsupported SET ${clause}`);
        if (m[4]) item[m[1]] = values[m[4]];
        else if (item[m[2]] === undefined) item[m[1]] = values[m[3]];
      }
    }
  }
}
