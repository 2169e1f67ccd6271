import { readStackConfig, RenderedResource, RenderedStack, renderStack } from "../../scripts/lib/offline/mock-stack";

export const devConfig = () => readStackConfig("dev");

/** Renders the stack with the dev config plus overrides (`sendtime:` prefix added; undefined removes a key). */
export async function renderWith(overrides: Record<string, string | undefined> = {}): Promise<RenderedStack> {
  const config = devConfig();
  for (const [k, v] of Object.entries(overrides)) {
    const key = k.includes(":") ? k : `sendtime:${k}`;
    if (v === undefined) delete config[key];
    else config[key] = v;
  }
  return renderStack({ config });
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
