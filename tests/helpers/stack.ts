import { readStackConfig, RenderedResource, RenderedStack, renderStack } from "../../scripts/lib/offline/mock-stack";
import type { IamStatement } from "./iam-evaluator";

/**
 * The config the stack tests render: Pulumi.example.yaml, which sets every key (journeys, alarms, unsubscribe),
 * under the stack name dev (resource names as in the dev stack). Pulumi.dev.yaml itself is minimal; the
 * project-template test renders it as it is.
 */
export const devConfig = () => readStackConfig("example");

/** Renders the stack with the example config plus overrides (`sendtime:` prefix added; undefined removes a key). */
export async function renderWith(overrides: Record<string, string | undefined> = {}): Promise<RenderedStack> {
  const config = devConfig();
  for (const [k, v] of Object.entries(overrides)) {
    const key = k.includes(":") ? k : `sendtime:${k}`;
    if (v === undefined) delete config[key];
    else config[key] = v;
  }
  return renderOnce("dev", config);
}

/** Renders a shipped stack (`Pulumi.<stack>.yaml`) as it is. */
export const renderShipped = (stack: string): Promise<RenderedStack> => renderOnce(stack, readStackConfig(stack));

/**
 * A render is about half a second and the same config renders the same stack, so each stack and config is
 * rendered once per test run; every caller gets its own copy (a test that edits its stack cannot change
 * another's). Failed renders are not kept: a test of bad config sees its own error.
 */
const rendered = new Map<string, Promise<RenderedStack>>();
async function renderOnce(stack: string, config: Record<string, string>): Promise<RenderedStack> {
  const key = JSON.stringify([stack, Object.entries(config).sort()]);
  let render = rendered.get(key);
  if (!render) {
    render = renderStack({ stack, config });
    rendered.set(key, render);
    render.catch(() => rendered.delete(key));
  }
  return copyOf(await render);
}

/** Plain objects and arrays copied; anything else (a Pulumi asset, which holds promises) shared. */
function copyOf<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyOf) as T;
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyOf(v)])) as T;
  return value;
}

export function only(stack: RenderedStack, type: string, name?: string): RenderedResource {
  const found = stack.resources.filter((r) => r.type === type && (name === undefined || r.name === name));
  if (found.length !== 1) throw new Error(`expected one ${type}${name ? ` named ${name}` : ""}, found ${found.length}`);
  return found[0];
}

export function all(stack: RenderedStack, type: string): RenderedResource[] {
  return stack.resources.filter((r) => r.type === type);
}

export function definitionOf(stack: RenderedStack): any {
  return JSON.parse(only(stack, "aws:sfn/stateMachine:StateMachine", "fanout").inputs.definition);
}

/** The statements of every inline policy (RolePolicy) attached to the role the stack names `name`. */
export function inlineStatements(stack: RenderedStack, name: string): IamStatement[] {
  const physical = only(stack, "aws:iam/role:Role", name).outputs.arn.split("/").pop();
  return all(stack, "aws:iam/rolePolicy:RolePolicy")
    .filter((p) => p.inputs.role === physical)
    .flatMap((p) => JSON.parse(p.inputs.policy).Statement as IamStatement[]);
}
