/**
 * npm run preview -- [--stack dev] [--json]
 * Renders the stack offline under Pulumi's mocks from Pulumi.<stack>.yaml and prints its resources and outputs.
 */
import * as pulumi from "@pulumi/pulumi";
import { parseFlags, runMain, UsageError } from "./lib/cli";
import { readStackConfig, RenderedResource, renderStack, StackConfigError } from "./lib/mock-stack";

const USAGE = `
Usage: npm run preview -- [--stack NAME] [--json]

Renders the sendtime stack offline (Pulumi mocks) with the config of Pulumi.<NAME>.yaml and prints every
resource with its key inputs, and the stack outputs.

  --stack NAME   stack whose config to use (default: dev)
  --json         print {"resources":[{"type","name","inputs"}],"outputs":{...},"policy":{"violations":[]}}
`;

runMain(async () => {
  const flags = parseFlags(process.argv.slice(2), { stack: { type: "string", default: "dev" }, json: { type: "boolean", default: false } }, USAGE);
  const stack = flags.stack as string;
  let rendered;
  try {
    rendered = await renderStack({ stack, config: readStackConfig(stack) });
  } catch (e) {
    if (e instanceof StackConfigError || e instanceof pulumi.RunError) throw new UsageError(e.message);
    throw e;
  }
  const custom = rendered.resources.filter((r) => r.custom);
  if (flags.json) {
    const out = {
      stack,
      resources: custom.map((r) => ({ type: r.type, name: r.name, urn: r.urn, inputs: r.inputs })),
      outputs: rendered.outputs,
      policy: { violations: [] as unknown[] },
    };
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    return 0;
  }
  const lines = [`Stack ${stack}: ${custom.length} resources (offline preview, mocked account ${"123456789012"})`, ""];
  for (const component of rendered.resources.filter((r) => !r.custom)) {
    lines.push(`${component.type.split(":").pop()} ${component.name}`);
    for (const r of custom.filter((c) => c.parent === component.urn)) lines.push(`  ${r.type}  ${r.name}${summary(r)}`);
  }
  for (const r of custom.filter((c) => !c.parent)) lines.push(`${r.type}  ${r.name}${summary(r)}`);
  lines.push("", "Outputs:");
  for (const [k, v] of Object.entries(rendered.outputs)) lines.push(`  ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
});

/** A resource's short scalar inputs, e.g. ` (type=STANDARD)`; long documents are left to --json. */
function summary(r: RenderedResource): string {
  const parts = Object.entries(r.inputs)
    .filter(([k, v]) => ["string", "number", "boolean"].includes(typeof v) && String(v).length <= 48 && !["bucket", "role"].includes(k) && !/^__/.test(k))
    .slice(0, 4)
    .map(([k, v]) => `${k}=${v}`);
  return parts.length ? `  (${parts.join(", ")})` : "";
}
