/**
 * Runs the policy pack offline the way `pulumi preview --policy-pack policy` does: the pack is started with
 * Pulumi's own policy-pack runner (ts-node, type-checked, cwd = the pack), which serves the analyzer gRPC API and
 * prints its port; this client then does the CLI's part — GetAnalyzerInfo, the config reconciliation the CLI does
 * (`all`, per-policy levels, configSchema defaults and checks), Configure, Analyze for every resource (its inputs),
 * and AnalyzeStack with all of them (their outputs).
 */
import { ChildProcess, spawn } from "child_process";
import * as path from "path";
import { RenderedResource, RenderedStack, ROOT_DIR } from "./mock-stack";
import { UsageError } from "../../../infra/core/errors";
import { readInputFile } from "../text/input-files";

const PULUMI_DIR = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
const fromPulumi = (id: string) => require(require.resolve(id, { paths: [PULUMI_DIR] }));
const grpc = fromPulumi("@grpc/grpc-js");
const analyzerRpc = require("@pulumi/pulumi/proto/analyzer_grpc_pb");
const analyzerProto = require("@pulumi/pulumi/proto/analyzer_pb");
const structProto = fromPulumi("google-protobuf/google/protobuf/struct_pb");
const emptyProto = fromPulumi("google-protobuf/google/protobuf/empty_pb");

export const POLICY_DIR = path.join(ROOT_DIR, "policy");
const LEVELS = ["advisory", "mandatory", "disabled", "remediate"] as const;
type Level = (typeof LEVELS)[number];

/** As the Pulumi CLI names a policy event's fields. */
export interface Violation {
  policyName: string;
  policyPackName: string;
  enforcementLevel: Level;
  message: string;
  description: string;
  urn: string;
}

interface PolicyInfo {
  name: string;
  enforcementLevel: Level;
  schema?: { properties: Record<string, any>; required: string[] };
}

/** Where a pack to serve is: its folder, the program the runner loads there, the @pulumi/pulumi whose runner runs it. */
export interface PackLocation {
  dir?: string;
  program?: string;
  pulumiDir?: string;
}

/** A served policy pack; Configure and analyze as often as needed, then close(). */
export class ServedPolicyPack {
  private constructor(
    private readonly child: ChildProcess,
    private readonly client: any,
    readonly policies: PolicyInfo[],
  ) {}

  /**
   * Starts the pack as the CLI does and reads what it offers. By default the repository's pack from its TypeScript
   * sources (`index.ts`, type-checked by the runner's ts-node): no build needed. An installed pack is started with
   * `{ dir, program: ".", pulumiDir }`: its package.json `main` (the bundle), with the runner of its own
   * @pulumi/pulumi.
   */
  static async start(
    { dir = POLICY_DIR, program = "index.ts", pulumiDir = PULUMI_DIR } = {} as PackLocation,
  ): Promise<ServedPolicyPack> {
    const runner = path.join(pulumiDir, "cmd", "run-policy-pack");
    const child = spawn(process.execPath, [runner, "127.0.0.1:0", program], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d) => {
        out += d;
        const m = /^(\d+)\s*$/m.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.on("exit", (code) =>
        reject(
          new Error(`policy pack exited (${code}) before serving: ${stderr.trim().split("\n").slice(-3).join(" ")}`),
        ),
      );
    });
    const client = new analyzerRpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const info = await call(client, "getAnalyzerInfo", new emptyProto.Empty());
    const policies: PolicyInfo[] = info.getPoliciesList().map((p: any) => {
      const schema = p.getConfigschema();
      return {
        name: p.getName(),
        enforcementLevel: LEVELS[p.getEnforcementlevel()],
        schema: schema
          ? { properties: schema.getProperties()?.toJavaScript() ?? {}, required: schema.getRequiredList() }
          : undefined,
      };
    });
    return new ServedPolicyPack(child, client, policies);
  }

  /** Reconciles a policy config file's content as the CLI does, and sends Configure. */
  async configure(config: Record<string, unknown>, source: string): Promise<void> {
    const request = new analyzerProto.ConfigureAnalyzerRequest();
    const map = request.getPolicyconfigMap();
    for (const [name, c] of Object.entries(reconcilePolicyConfig(this.policies, config, source))) {
      const pc = new analyzerProto.PolicyConfig();
      pc.setEnforcementlevel(LEVELS.indexOf(c.enforcementLevel));
      pc.setProperties(structProto.Struct.fromJavaScript(c.properties));
      map.set(name, pc);
    }
    await call(this.client, "configure", request);
  }

  /** Analyze (inputs) for every custom resource, then AnalyzeStack (outputs) for all of them. */
  async analyze(stack: RenderedStack): Promise<Violation[]> {
    const resources = stack.resources.filter((r) => r.custom);
    const violations: Violation[] = [];
    for (const r of resources) {
      const res = await call(this.client, "analyze", describe(new analyzerProto.AnalyzeRequest(), r, r.inputs));
      violations.push(...diagnostics(res, r.urn));
    }
    const stackReq = new analyzerProto.AnalyzeStackRequest();
    stackReq.setResourcesList(
      resources.map((r) => {
        const ar = describe(new analyzerProto.AnalyzerResource(), r, r.outputs);
        if (r.parent) ar.setParent(r.parent);
        ar.setDependenciesList(dependenciesOf(r, resources));
        return ar;
      }),
    );
    violations.push(...diagnostics(await call(this.client, "analyzeStack", stackReq), ""));
    return violations;
  }

  close(): void {
    this.client.close();
    this.child.kill();
  }
}

function call(client: any, method: string, request: unknown): Promise<any> {
  return new Promise((resolve, reject) =>
    client[method](request, (err: Error | null, res: any) => (err ? reject(err) : resolve(res))),
  );
}

const toStruct = (value: Record<string, unknown>) =>
  structProto.Struct.fromJavaScript(JSON.parse(JSON.stringify(value ?? {})));

/** Type, name, URN, properties and options: what Analyze (inputs) and AnalyzeStack (outputs) both carry. */
function describe(message: any, r: RenderedResource, properties: Record<string, unknown>) {
  message.setType(r.type);
  message.setName(r.name);
  message.setUrn(r.urn);
  message.setProperties(toStruct(properties));
  message.setOptions(resourceOptions(r));
  return message;
}

/** The options the CLI sends with every resource; without them the pack refuses to analyze. */
function resourceOptions(r: RenderedResource) {
  const opts = new analyzerProto.AnalyzerResourceOptions();
  opts.setProtect(false);
  opts.setCustomtimeouts(new analyzerProto.AnalyzerResourceOptions.CustomTimeouts());
  if (r.parent) opts.setParent(r.parent);
  return opts;
}

/** What the engine would list as dependencies: the resources whose id or ARN this one's inputs use. */
function dependenciesOf(r: RenderedResource, all: RenderedResource[]): string[] {
  const text = JSON.stringify(r.inputs);
  return all
    .filter(
      (o) =>
        o !== r &&
        ((o.id && o.id.length > 3 && text.includes(JSON.stringify(o.id).slice(1, -1))) ||
          (o.outputs.arn && text.includes(o.outputs.arn))),
    )
    .map((o) => o.urn);
}

function diagnostics(res: any, urn: string): Violation[] {
  return res.getDiagnosticsList().map((d: any) => {
    const description = d.getDescription();
    const message: string = d.getMessage();
    return {
      policyName: d.getPolicyname(),
      policyPackName: d.getPolicypackname(),
      enforcementLevel: LEVELS[d.getEnforcementlevel()],
      // The pack prefixes every message with the policy's description; keep the specific part.
      message: message.startsWith(description + "\n") ? message.slice(description.length + 1) : message,
      description,
      urn: d.getUrn() || urn,
    };
  });
}

/**
 * The CLI's reconciliation of a policy config file with the pack: `all` sets every level, a string sets one policy's
 * level, an object sets its level and properties; configSchema defaults fill the rest and its types, ranges and
 * `required` are checked. A problem is a UsageError naming the file and key.
 */
export function reconcilePolicyConfig(
  policies: PolicyInfo[],
  config: Record<string, unknown>,
  source: string,
): Record<string, { enforcementLevel: Level; properties: Record<string, unknown> }> {
  const known = new Set(policies.map((p) => p.name));
  const levelOf = (key: string, v: unknown): Level => {
    if (typeof v === "string" && (LEVELS as readonly string[]).includes(v)) return v as Level;
    throw new UsageError(
      `${source}: ${key} = ${JSON.stringify(v)}: enforcement level must be one of ${LEVELS.join(", ")}`,
    );
  };
  for (const key of Object.keys(config)) {
    if (key !== "all" && !known.has(key))
      throw new UsageError(`${source}: no policy "${key}" in the pack (policies: ${[...known].join(", ")})`);
  }
  const all = config.all === undefined ? undefined : levelOf("all", config.all);
  const out: Record<string, { enforcementLevel: Level; properties: Record<string, unknown> }> = {};
  for (const p of policies) {
    const given = config[p.name];
    let level = all ?? p.enforcementLevel;
    let props: Record<string, unknown> = {};
    if (typeof given === "string") level = levelOf(p.name, given);
    else if (given && typeof given === "object") {
      const { enforcementLevel, ...rest } = given as Record<string, unknown>;
      if (enforcementLevel !== undefined) level = levelOf(`${p.name}.enforcementLevel`, enforcementLevel);
      props = rest;
    } else if (given !== undefined)
      throw new UsageError(`${source}: ${p.name} must be an enforcement level or an object`);
    const schema = p.schema?.properties ?? {};
    for (const key of Object.keys(props)) {
      if (!(key in schema))
        throw new UsageError(
          `${source}: ${p.name}.${key} is not a setting of this policy (settings: ${Object.keys(schema).join(", ") || "none"})`,
        );
    }
    for (const [key, s] of Object.entries<any>(schema)) {
      if (props[key] === undefined && s.default !== undefined) props[key] = s.default;
      if (props[key] !== undefined) checkSchemaValue(`${source}: ${p.name}.${key}`, props[key], s);
    }
    for (const key of p.schema?.required ?? []) {
      if (props[key] === undefined) throw new UsageError(`${source}: ${p.name}.${key} is required`);
    }
    out[p.name] = { enforcementLevel: level, properties: props };
  }
  return out;
}

function checkSchemaValue(where: string, v: unknown, s: any): void {
  const fail = (allowed: string): never => {
    throw new UsageError(`${where} = ${JSON.stringify(v)}: must be ${allowed}`);
  };
  if (s.type === "integer" && !Number.isInteger(v)) fail("a whole number");
  if (s.type === "number" && typeof v !== "number") fail("a number");
  if (s.type === "string" && typeof v !== "string") fail("a string");
  if (s.type === "boolean" && typeof v !== "boolean") fail("true or false");
  if (typeof v === "number") {
    if (s.minimum !== undefined && v < s.minimum) fail(`at least ${s.minimum}`);
    if (s.maximum !== undefined && v > s.maximum) fail(`at most ${s.maximum}`);
    if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) fail(`above ${s.exclusiveMinimum}`);
  }
  if (s.enum && !s.enum.includes(v)) fail(`one of ${s.enum.join(", ")}`);
}

/** Reads a policy config file (JSON), or a UsageError naming it. */
export function readPolicyConfig(file: string): Record<string, unknown> {
  const text = readInputFile(file);
  try {
    const value = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("not an object");
    return value;
  } catch (e) {
    throw new UsageError(`${file}: not a JSON object of policy settings (${(e as Error).message})`);
  }
}
