/**
 * npm run preview -- [--stack dev] [--json] [--write-outputs FILE]
 * Renders the stack offline under Pulumi's mocks from Pulumi.<stack>.yaml and prints its resources and outputs.
 */
import * as pulumi from "@pulumi/pulumi";
import * as fs from "fs";
import * as path from "path";
import { commandMain, runMain } from "./lib/cli/run";
import { jsonFlag } from "./lib/cli/common-flags";
import { Command } from "./lib/cli/flags";
import { EXIT_CODES } from "./lib/cli/exit-codes";
import {
  MOCK_ACCOUNT,
  readStackConfig,
  RenderedResource,
  RenderedStack,
  renderStack,
  ROOT_DIR,
  stackOutputJson,
} from "./lib/offline/mock-stack";
import { POLICY_DIR, readPolicyConfig, ServedPolicyPack, Violation } from "./lib/offline/policy-runner";
import { UsageError } from "../infra/core/errors";
import { StackConfigError } from "./lib/offline/mock-stack";

const FLAGS = {
  stack: {
    type: "string",
    value: "NAME",
    help: "the Pulumi stack",
    note: "its Pulumi.<NAME>.yaml config is used",
    default: "dev",
  },
  "policy-config": {
    type: "string",
    value: "FILE",
    help: "the policy pack's config",
    defaultHelp: "policy/config/<NAME>.json",
  },
  "no-policy": { type: "boolean", help: "skip the policy pack" },
  ...jsonFlag('{"resources":[{"type","name","inputs"}],"outputs":{...},"policy":{"violations":[...]}}'),
  "write-outputs": {
    type: "string",
    value: "FILE",
    help: "also write the outputs as `pulumi stack output --json` would, for the scripts' `--outputs FILE`",
  },
} as const;

export const COMMAND: Command<typeof FLAGS> = {
  script: "preview",
  usage: ["[--stack NAME] [--policy-config FILE] [--no-policy] [--json] [--write-outputs FILE]"],
  summary: `Renders the sendtime stack offline (Pulumi mocks) with the config of Pulumi.<NAME>.yaml, prints every resource with
its key inputs and the stack outputs, then runs the policy pack (policy/) on it the way \`pulumi preview --policy-pack
policy\` does. --write-outputs is written before the pack runs, whatever it finds (secrets as "[secret]"; the values
are the mocks').`,
  flags: FLAGS,
  exitCodes: EXIT_CODES.preview,
  changesAws: false,
  reports: true,
  reference: "docs/deploying.md",
};

/** A served policy pack as the preview uses it: configured, asked, then closed. */
export type PolicyPack = Pick<ServedPolicyPack, "configure" | "analyze" | "close">;

/**
 * The whole CLI: flags in, exit code out (0 ok, 1 a mandatory violation); bad flags or config throw UsageError.
 * `startPolicyPack` serves the pack; a test that already serves one passes it here instead of starting another.
 */
export const main = commandMain(
  COMMAND,
  async (flags, io, startPolicyPack: () => Promise<PolicyPack> = () => ServedPolicyPack.start()): Promise<number> => {
    const stack = flags.stack ?? "dev";
    const config = readStackConfig(stack);
    const policyConfigFile = flags["no-policy"]
      ? undefined
      : policyConfigFileFor(stack, flags["policy-config"] as string | undefined);
    const policyConfig = policyConfigFile ? readPolicyConfig(policyConfigFile) : {};
    let rendered;
    try {
      rendered = await renderStack({ stack, config });
    } catch (e) {
      // The program's config errors reach here as Pulumi's RunError (infra/index.ts): both name the stack's file.
      if (e instanceof StackConfigError || e instanceof pulumi.RunError)
        throw new StackConfigError(`Pulumi.${stack}.yaml: ${e.message}`);
      throw e;
    }
    if (flags["write-outputs"] !== undefined) writeOutputs(flags["write-outputs"] as string, rendered);
    const custom = rendered.resources.filter((r) => r.custom);
    const violations = flags["no-policy"]
      ? []
      : await runPolicyPack(startPolicyPack, rendered, policyConfig, policyConfigFile);
    const mandatory = violations.filter((v) => v.enforcementLevel === "mandatory").length;
    if (flags.json) {
      const out = {
        stack,
        resources: custom.map((r) => ({ type: r.type, name: r.name, urn: r.urn, inputs: r.inputs })),
        outputs: rendered.outputs,
        policy: {
          pack: flags["no-policy"] ? null : POLICY_DIR_NAME,
          config: policyConfigFile ? path.relative(ROOT_DIR, policyConfigFile) : null,
          violations,
        },
      };
      io.out(JSON.stringify(out, null, 2) + "\n");
      return mandatory ? 1 : 0;
    }
    io.out(report(stack, rendered, violations, flags["no-policy"] as boolean, policyConfigFile));
    return mandatory ? 1 : 0;
  },
);

/** --write-outputs: the outputs file the operator scripts read (--outputs FILE), written whole or not at all. */
function writeOutputs(file: string, rendered: RenderedStack): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, stackOutputJson(rendered.outputs, rendered.secretOutputs));
    fs.renameSync(temp, file);
  } catch (e) {
    fs.rmSync(temp, { force: true });
    throw new UsageError(
      `--write-outputs ${file}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

async function runPolicyPack(
  startPolicyPack: () => Promise<PolicyPack>,
  rendered: RenderedStack,
  config: Record<string, unknown>,
  configFile: string | undefined,
): Promise<Violation[]> {
  const pack = await startPolicyPack();
  try {
    await pack.configure(config, configFile ? path.relative(process.cwd(), configFile) : "(no policy config)");
    return await pack.analyze(rendered);
  } finally {
    pack.close();
  }
}

/** The human-readable preview: resources under their components, outputs, then policy findings. */
function report(
  stack: string,
  rendered: RenderedStack,
  violations: Violation[],
  skipped: boolean,
  policyConfigFile?: string,
): string {
  const custom = rendered.resources.filter((r) => r.custom);
  const lines = [`Stack ${stack}: ${custom.length} resources (offline preview, mocked account ${MOCK_ACCOUNT})`, ""];
  // Each component with the resources it holds itself (the Sendtime around them all holds none of its own).
  for (const component of rendered.resources.filter((r) => !r.custom)) {
    const held = custom.filter((c) => c.parent === component.urn);
    if (!held.length) continue;
    lines.push(`${component.type.split(":").pop()} ${component.name}`);
    for (const r of held) lines.push(`  ${r.type}  ${r.name}${summary(r)}`);
  }
  for (const r of custom.filter((c) => !c.parent)) lines.push(`${r.type}  ${r.name}${summary(r)}`);
  lines.push("", "Outputs:");
  for (const [k, v] of Object.entries(rendered.outputs))
    lines.push(`  ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  lines.push("", ...policySummary(violations, skipped, policyConfigFile));
  return lines.join("\n") + "\n";
}

const POLICY_DIR_NAME = path.relative(ROOT_DIR, POLICY_DIR);

/**
 * The policy config to run the pack with: the flag's, else policy/config/<stack>.json. A stack without one is an error:
 * the pack's defaults (a 5,000/s quota) would pass a stack sized for another quota.
 */
export function policyConfigFileFor(stack: string, flag: string | undefined): string {
  if (flag !== undefined) return flag;
  const file = path.join(POLICY_DIR, "config", `${stack}.json`);
  if (!fs.existsSync(file)) {
    const shown = path.relative(ROOT_DIR, file);
    throw new UsageError(
      `${shown}: no policy config for stack ${stack}: copy policy/config/dev.json and set its createScheduleTps to the stack's, or pass --policy-config FILE (or --no-policy)`,
    );
  }
  return file;
}

/** Violations grouped by level, then policy, as the CLI prints them. */
function policySummary(violations: Violation[], skipped: boolean, configFile: string | undefined): string[] {
  if (skipped) return ["Policies: skipped (--no-policy)"];
  const config = configFile ? path.relative(ROOT_DIR, configFile) : "defaults";
  if (!violations.length) return [`Policies: ${POLICY_DIR_NAME} (config ${config}): no violations`];
  const lines = [
    `Policies: ${POLICY_DIR_NAME} (config ${config}): ${violations.length} violation${violations.length === 1 ? "" : "s"}`,
  ];
  for (const level of ["mandatory", "advisory", "remediate"]) {
    const byPolicy = new Map<string, Violation[]>();
    for (const v of violations.filter((x) => x.enforcementLevel === level))
      byPolicy.set(v.policyName, [...(byPolicy.get(v.policyName) ?? []), v]);
    for (const [policy, vs] of byPolicy) {
      lines.push(`  [${level}] ${policy}`);
      for (const v of vs) lines.push(`    ${v.message}`);
    }
  }
  return lines;
}

/** A resource's short scalar inputs, e.g. ` (type=STANDARD)`; long documents are left to --json. */
function summary(r: RenderedResource): string {
  const parts = Object.entries(r.inputs)
    .filter(
      ([k, v]) =>
        ["string", "number", "boolean"].includes(typeof v) &&
        String(v).length <= 48 &&
        !["bucket", "role"].includes(k) &&
        !/^__/.test(k),
    )
    .slice(0, 4)
    .map(([k, v]) => `${k}=${v}`);
  return parts.length ? `  (${parts.join(", ")})` : "";
}

// Last, so that every constant above is initialised before the CLI runs.
if (require.main === module) runMain(() => main(process.argv.slice(2)));
