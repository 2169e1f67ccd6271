/** awsguard-style helpers: build validation args for a resource type + props, run a policy, assert on violations. */
import * as assert from "assert";
import {
  PolicyResource,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidationArgs,
  StackValidationPolicy,
} from "@pulumi/policy";

export function resourceArgs(
  type: string,
  props: Record<string, any>,
  config: Record<string, unknown> = {},
  name = "test",
): ResourceValidationArgs {
  return {
    type,
    props,
    urn: `urn:pulumi:test::sendtime::${type}::${name}`,
    name,
    opts: { protect: false, ignoreChanges: [], aliases: [], additionalSecretOutputs: [], customTimeouts: {} } as any,
    stackTags: new Map(),
    isType: () => false,
    asType: () => undefined,
    getConfig: <T extends object>() => config as T,
    notApplicable: () => {
      throw new Error("not applicable");
    },
  } as unknown as ResourceValidationArgs;
}

async function violationsOf(policy: ResourceValidationPolicy, args: ResourceValidationArgs): Promise<string[]> {
  const found: string[] = [];
  const validations = [policy.validateResource ?? []].flat();
  for (const v of validations) await v(args, (message: string) => found.push(message));
  return found;
}

export async function assertHasResourceViolation(
  policy: ResourceValidationPolicy,
  args: ResourceValidationArgs,
  expected: { message: string | RegExp },
) {
  const found = await violationsOf(policy, args);
  const ok = found.some((m) =>
    typeof expected.message === "string" ? m.includes(expected.message) : expected.message.test(m),
  );
  assert.ok(ok, `expected a violation matching ${expected.message}; got ${JSON.stringify(found, null, 1)}`);
}

export async function assertNoResourceViolations(policy: ResourceValidationPolicy, args: ResourceValidationArgs) {
  assert.deepStrictEqual(await violationsOf(policy, args), []);
}

export function stackResource(
  type: string,
  name: string,
  props: Record<string, any>,
  dependencies: PolicyResource[] = [],
): PolicyResource {
  return {
    type,
    name,
    props,
    urn: `urn:pulumi:test::sendtime::${type}::${name}`,
    opts: {} as any,
    dependencies,
    propertyDependencies: {},
    isType: () => false,
    asType: () => undefined,
  } as unknown as PolicyResource;
}

async function stackViolationsOf(
  policy: StackValidationPolicy,
  resources: PolicyResource[],
): Promise<{ message: string; urn?: string }[]> {
  const found: { message: string; urn?: string }[] = [];
  const args = { resources, stackTags: new Map(), getConfig: () => ({}) } as unknown as StackValidationArgs;
  await policy.validateStack(args, (message: string, urn?: string) => found.push({ message, urn }));
  return found;
}

export async function assertHasStackViolation(
  policy: StackValidationPolicy,
  resources: PolicyResource[],
  expected: { message: string | RegExp; urn?: string },
) {
  const found = await stackViolationsOf(policy, resources);
  const ok = found.some(
    (v) =>
      (typeof expected.message === "string"
        ? v.message.includes(expected.message)
        : expected.message.test(v.message)) &&
      (!expected.urn || v.urn === expected.urn),
  );
  assert.ok(ok, `expected a violation matching ${expected.message}; got ${JSON.stringify(found, null, 1)}`);
}

export async function assertNoStackViolations(policy: StackValidationPolicy, resources: PolicyResource[]) {
  assert.deepStrictEqual(await stackViolationsOf(policy, resources), []);
}

/** An IAM document as the stack writes it (JSON text). */
export const doc = (...Statement: object[]) => JSON.stringify({ Version: "2012-10-17", Statement });

/** A rendered stack as AnalyzeStack sees it: every custom resource with its outputs (inputs plus what AWS reports). */
export function packResources(stack: { resources: { type: string; name: string; custom: boolean; outputs: any }[] }) {
  return stack.resources
    .filter((r) => r.custom)
    .map((r) => stackResource(r.type, r.name, JSON.parse(JSON.stringify(r.outputs))));
}

/** The one resource of `type` named `name` among `resources`. */
export function named(resources: PolicyResource[], type: string, name: string): PolicyResource {
  const found = resources.filter((r) => r.type === type && r.name === name);
  assert.strictEqual(found.length, 1, `one ${type} named ${name}`);
  return found[0];
}
