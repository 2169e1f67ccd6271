/**
 * `node render-under-mocks.js PROGRAM` in a user's project: runs the compiled Pulumi program under Pulumi's mocks
 * (the project's own @pulumi/pulumi), with the config JSON of $CONFIG, and prints one JSON line: the resources
 * registered (type, name, parent's type) and the outputs; or {"error": message} when the program stops.
 */
"use strict";
const path = require("path");
const pulumi = require("@pulumi/pulumi");

const ACCOUNT = "123456789012";
const registered = [];

async function main() {
  pulumi.runtime.setAllConfig(JSON.parse(process.env.CONFIG));
  await pulumi.runtime.setMocks(
    {
      newResource({ type, name, inputs, custom }) {
        registered.push({ type, name, custom: !!custom });
        const physical = inputs.name ?? `${name}-1`;
        const arn = `arn:aws:${type.split(":")[1].split("/")[0]}:us-east-1:${ACCOUNT}:${physical}`;
        return {
          id: custom ? `${name}-id` : undefined,
          state: { ...inputs, name: physical, arn, url: `https://${name}` },
        };
      },
      call: () => ({ partition: "aws", region: "us-east-1", accountId: ACCOUNT, id: ACCOUNT }),
    },
    "shop",
    "dev",
    false,
  );
  let program;
  try {
    program = require(path.resolve(process.argv[2]));
  } catch (e) {
    console.log(JSON.stringify({ error: e.message }));
    return;
  }
  const outputs = {};
  // null for an output without a value (JSON would drop the key): every name the program exports is listed.
  for (const [key, value] of Object.entries(program))
    outputs[key] = value === undefined ? null : ((await new Promise((r) => pulumi.output(value).apply(r))) ?? null);
  await require("@pulumi/pulumi/runtime/settings").waitForRPCs();
  console.log(JSON.stringify({ registered, outputs }));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: e.stack }));
  process.exitCode = 1;
});
