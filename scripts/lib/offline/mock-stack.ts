/**
 * Renders the Pulumi program offline under Pulumi's own mocks: every resource the stack registers, with its
 * inputs fully resolved and mocked ids/ARNs in the formats AWS uses, plus the stack outputs.
 * Used by `npm run preview`, the tests and the offline policy run.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseYaml } from "yaml";
import { InputError } from "../../../infra/core/errors";

/** A stack's `Pulumi.<stack>.yaml` cannot be read for the offline preview. */
export class StackConfigError extends InputError {}

export const PROJECT = "sendtime";
export const MOCK_ACCOUNT = "123456789012";
export const ROOT_DIR = path.resolve(__dirname, "..", "..", "..");
const PROGRAM_DIR = path.join(ROOT_DIR, "infra");

export interface RenderedResource {
  type: string;
  name: string;
  /**
   * As Pulumi's mocks make it: the parent's own type, then the resource's (the engine chains every ancestor's type;
   * equal up to a component's children).
   */
  urn: string;
  /** URN of the parent component, when there is one. */
  parent?: string;
  custom: boolean;
  id: string;
  /** What the program passed: resolved, as the provider would receive it. */
  inputs: Record<string, any>;
  /** What the resource reports after creation (inputs plus mocked ids, ARNs, names). */
  outputs: Record<string, any>;
  /** The aliases the program gave it, as the engine receives them (a child's inherited ones the engine adds). */
  aliases: RenderedAlias[];
}

/** An alias: an old URN, or what differed (`parentUrn` the old parent, `noParent` none: the top level). */
export interface RenderedAlias {
  urn?: string;
  name?: string;
  type?: string;
  parentUrn?: string;
  noParent?: boolean;
}

export interface RenderedStack {
  stack: string;
  resources: RenderedResource[];
  outputs: Record<string, unknown>;
  /** The outputs that are secret (or hold a secret anywhere inside): `pulumi stack output` masks them whole. */
  secretOutputs: string[];
}

/** The mask `pulumi stack output --json` prints for a secret output without --show-secrets. */
export const SECRET_MASK = "[secret]";

/**
 * The stack outputs as `pulumi stack output --json` prints them: one flat object of output name → value, a secret
 * output (or one holding a secret) as "[secret]", an undefined one left out, indented by two spaces.
 */
export function stackOutputJson(outputs: Record<string, unknown>, secretOutputs: string[]): string {
  const shown = Object.fromEntries(
    Object.entries(outputs).map(([k, v]) => [k, secretOutputs.includes(k) ? SECRET_MASK : v]),
  );
  return JSON.stringify(shown, null, 2) + "\n";
}

/** A stack's config from `Pulumi.<stack>.yaml`, as the flat `"namespace:key": "value"` map Pulumi hands a program. */
export function readStackConfig(stack: string, rootDir = ROOT_DIR): Record<string, string> {
  const file = path.join(rootDir, `Pulumi.${stack}.yaml`);
  if (!fs.existsSync(file))
    throw new StackConfigError(
      `${path.relative(process.cwd(), file) || file}: no such stack config file (stacks: ${listStacks(rootDir).join(", ") || "none"})`,
    );
  let doc: any;
  try {
    doc = parseYaml(fs.readFileSync(file, "utf8")) ?? {};
  } catch (e) {
    throw new StackConfigError(`${file}: not valid YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  const config: Record<string, string> = {};
  for (const [key, value] of Object.entries(doc.config ?? {})) {
    if (value !== null && typeof value === "object" && "secure" in value) {
      throw new StackConfigError(`${file}: ${key} is a secret; the offline preview reads plain values only`);
    }
    // Structured values (lists, objects) reach a Pulumi program as JSON text, as the CLI passes them.
    config[key.includes(":") ? key : `${PROJECT}:${key}`] =
      value !== null && typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  return config;
}

export function listStacks(rootDir = ROOT_DIR): string[] {
  return fs.readdirSync(rootDir).flatMap((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1] ?? []);
}

/** Deterministic stand-in for Pulumi's auto-naming (`<name>-<7 hex>`), so previews are reproducible. */
function autoName(name: string): string {
  return `${name}-${createHash("sha256").update(name).digest("hex").slice(0, 7)}`;
}

function partitionOf(region: string): string {
  if (region.startsWith("cn-")) return "aws-cn";
  if (region.startsWith("us-gov-")) return "aws-us-gov";
  return "aws";
}

/** A mocked resource: its id and what it reports after creation. */
type Mocked = { id: string; state: Record<string, any> };
/** What a mock is made from: the resource's name and inputs, and where it lives. */
type MockContext = { name: string; inputs: any; region: string; part: string; acct: string };

/** Ids and outputs of each AWS resource type, in the formats AWS returns them; any other type gets `<name>-id`. */
function mockResource(type: string, name: string, inputs: any, region: string): Mocked {
  const mock = Object.hasOwn(MOCKS, type) ? MOCKS[type] : undefined;
  return mock
    ? mock({ name, inputs, region, part: partitionOf(region), acct: MOCK_ACCOUNT })
    : { id: `${name}-id`, state: {} };
}

/** One entry per resource type: a table, read as one. */
const MOCKS: Record<string, (c: MockContext) => Mocked> = {
  "aws:s3/bucket:Bucket": ({ name, inputs, region, part }) => {
    const bucket = inputs.bucket ?? autoName(name);
    return {
      id: bucket,
      state: { bucket, arn: `arn:${part}:s3:::${bucket}`, region, bucketDomainName: `${bucket}.s3.amazonaws.com` },
    };
  },
  "aws:iam/role:Role": ({ name, inputs, part, acct }) => {
    const roleName = inputs.name ?? autoName(name);
    return {
      id: roleName,
      state: {
        name: roleName,
        arn: `arn:${part}:iam::${acct}:role/${roleName}`,
        uniqueId: `AROA${hex(name, 17).toUpperCase()}`,
      },
    };
  },
  "aws:iam/rolePolicy:RolePolicy": ({ name, inputs }) => {
    const policyName = inputs.name ?? autoName(name);
    return { id: `${inputs.role}:${policyName}`, state: { name: policyName } };
  },
  "aws:sqs/queue:Queue": ({ name, inputs, region, part, acct }) => {
    const queueName = inputs.name ?? autoName(name);
    const url = `https://sqs.${region}.amazonaws.com/${acct}/${queueName}`;
    return { id: url, state: { name: queueName, url, arn: `arn:${part}:sqs:${region}:${acct}:${queueName}` } };
  },
  "aws:sfn/stateMachine:StateMachine": ({ name, inputs, region, part, acct }) => {
    const smName = inputs.name ?? autoName(name);
    const arn = `arn:${part}:states:${region}:${acct}:stateMachine:${smName}`;
    return { id: arn, state: { name: smName, arn, status: "ACTIVE" } };
  },
  "aws:dynamodb/table:Table": ({ name, inputs, region, part, acct }) => {
    const tableName = inputs.name ?? autoName(name);
    return {
      id: tableName,
      state: { name: tableName, arn: `arn:${part}:dynamodb:${region}:${acct}:table/${tableName}` },
    };
  },
  "aws:cloudwatch/logGroup:LogGroup": ({ name, inputs, region, part, acct }) => {
    const lgName = inputs.name ?? autoName(name);
    return { id: lgName, state: { name: lgName, arn: `arn:${part}:logs:${region}:${acct}:log-group:${lgName}` } };
  },
  "aws:cloudwatch/metricAlarm:MetricAlarm": ({ name, inputs, region, part, acct }) => {
    const alarmName = inputs.name ?? autoName(name);
    return {
      id: alarmName,
      state: { name: alarmName, arn: `arn:${part}:cloudwatch:${region}:${acct}:alarm:${alarmName}` },
    };
  },
  "aws:sns/topic:Topic": ({ name, inputs, region, part, acct }) => {
    const topicName = inputs.name ?? autoName(name);
    const arn = `arn:${part}:sns:${region}:${acct}:${topicName}`;
    return { id: arn, state: { name: topicName, arn } };
  },
  "aws:sns/topicSubscription:TopicSubscription": ({ name, inputs }) => ({
    id: `${inputs.topic}:${hex(name, 8)}`,
    state: { arn: `${inputs.topic}:${hex(name, 8)}` },
  }),
  "aws:sesv2/configurationSet:ConfigurationSet": ({ inputs, region, part, acct }) => ({
    id: inputs.configurationSetName,
    state: { arn: `arn:${part}:ses:${region}:${acct}:configuration-set/${inputs.configurationSetName}` },
  }),
  "aws:sesv2/emailIdentity:EmailIdentity": ({ inputs, region, part, acct }) => {
    const isDomain = !String(inputs.emailIdentity).includes("@");
    return {
      id: inputs.emailIdentity,
      state: {
        arn: `arn:${part}:ses:${region}:${acct}:identity/${inputs.emailIdentity}`,
        identityType: isDomain ? "DOMAIN" : "EMAIL_ADDRESS",
        dkimSigningAttributes: isDomain
          ? { tokens: [1, 2, 3].map((i) => hex(`${inputs.emailIdentity}${i}`, 32)) }
          : undefined,
      },
    };
  },
  "aws:sesv2/contactList:ContactList": ({ inputs, region, part, acct }) => ({
    id: inputs.contactListName,
    state: { arn: `arn:${part}:ses:${region}:${acct}:contact-list/${inputs.contactListName}` },
  }),
  "aws:lambda/function:Function": ({ name, inputs, region, part, acct }) => {
    const fnName = inputs.name ?? autoName(name);
    const arn = `arn:${part}:lambda:${region}:${acct}:function:${fnName}`;
    return {
      id: fnName,
      state: {
        name: fnName,
        arn,
        invokeArn: `arn:${part}:apigateway:${region}:lambda:path/2015-03-31/functions/${arn}/invocations`,
      },
    };
  },
  "aws:lambda/functionUrl:FunctionUrl": ({ name, inputs, region }) => {
    const urlId = hex(name, 32);
    return {
      id: String(inputs.functionName),
      state: { functionUrl: `https://${urlId}.lambda-url.${region}.on.aws/`, urlId },
    };
  },
  "aws:ssm/parameter:Parameter": ({ name, inputs, region, part, acct }) => {
    // A name with a leading slash ("/a/b") makes "parameter/a/b"; one without, "parameter/<name>".
    const paramName = inputs.name ?? autoName(name);
    const arn = `arn:${part}:ssm:${region}:${acct}:parameter/${String(paramName).replace(/^\//, "")}`;
    return { id: paramName, state: { name: paramName, arn, version: 1 } };
  },
  "aws:cloudwatch/eventRule:EventRule": ({ name, inputs, region, part, acct }) => {
    const ruleName = inputs.name ?? autoName(name);
    const bus = inputs.eventBusName ?? "default";
    const path = bus === "default" ? ruleName : `${bus}/${ruleName}`;
    return { id: path, state: { name: ruleName, arn: `arn:${part}:events:${region}:${acct}:rule/${path}` } };
  },
  "aws:pinpoint/smsvoicev2ConfigurationSet:Smsvoicev2ConfigurationSet": ({ name, inputs, region, part, acct }) => {
    const setName = inputs.name ?? autoName(name);
    return {
      id: setName,
      state: { name: setName, arn: `arn:${part}:sms-voice:${region}:${acct}:configuration-set/${setName}` },
    };
  },
  "aws:pinpoint/smsvoicev2OptOutList:Smsvoicev2OptOutList": ({ name, inputs, region, part, acct }) => {
    const listName = inputs.name ?? autoName(name);
    return {
      id: listName,
      state: { name: listName, arn: `arn:${part}:sms-voice:${region}:${acct}:opt-out-list/${listName}` },
    };
  },
  "aws:scheduler/scheduleGroup:ScheduleGroup": ({ name, inputs, region, part, acct }) => {
    const groupName = inputs.name ?? autoName(name);
    return {
      id: groupName,
      state: { name: groupName, arn: `arn:${part}:scheduler:${region}:${acct}:schedule-group/${groupName}` },
    };
  },
};

function hex(seed: string, length: number): string {
  return createHash("sha256").update(seed).digest("hex").slice(0, length);
}

/**
 * Runs infra/ under mocks with the given config and returns what it registered. Safe to call repeatedly in one
 * process: each call resets the mocks and reloads the program.
 */
export async function renderStack(options: { stack?: string; config: Record<string, string> }): Promise<RenderedStack> {
  const stack = options.stack ?? "dev";
  const region = options.config["aws:region"];
  if (!region) {
    throw new StackConfigError(
      "aws:region is not set: the offline preview assumes no Region (pulumi config set aws:region us-east-1)",
    );
  }
  const registered: { type: string; name: string; custom: boolean; inputs: any; id: string; state: any }[] = [];

  pulumi.runtime.setAllConfig(options.config);
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const { id, state } = args.custom
          ? mockResource(args.type, args.name, args.inputs, region)
          : { id: "", state: {} };
        const outputs = { ...args.inputs, ...state };
        registered.push({
          type: args.type,
          name: args.name,
          custom: !!args.custom,
          inputs: args.inputs,
          id,
          state: outputs,
        });
        return { id: args.custom ? id : undefined, state: outputs };
      },
      call: (args) => mockCall(args.token, region),
    },
    PROJECT,
    stack,
    false,
  );

  const requests = recordRequests();

  // The program's own modules (infra/*.ts) load again, reading this config; the pure layers under them (infra/core,
  // state-machines, handlers) stay loaded, so that their classes are the ones the caller already holds (an
  // `instanceof InputError` in a CLI loaded before this render still matches an error thrown after it).
  for (const key of Object.keys(require.cache)) {
    if (path.dirname(key) === PROGRAM_DIR) delete require.cache[key];
  }
  // The program runs in the project's folder, as Pulumi runs it (it reads templates/ there), wherever this is called.
  const cwd = process.cwd();
  process.chdir(ROOT_DIR);
  const outputs: Record<string, unknown> = {};
  const secretOutputs: string[] = [];
  try {
    const program = require(PROGRAM_DIR);
    for (const [key, value] of Object.entries(program)) {
      outputs[key] = await resolve(value);
      // pulumi.output() looks inside plain objects and arrays too: one secret in them makes the whole output secret.
      if (await pulumi.isSecret(pulumi.output(value))) secretOutputs.push(key);
    }
    await waitForRegistrations();
  } finally {
    process.chdir(cwd);
  }

  const monitor = pulumi.runtime.getMonitor() as any;
  const urns: string[] = [...monitor.getRegisteredResources().keys()];
  const resources = registered.map((r) => {
    const urn = urns.find((u) => u.endsWith(`$${r.type}::${r.name}`) || u.endsWith(`::${r.type}::${r.name}`)) ?? "";
    return {
      type: r.type,
      name: r.name,
      urn,
      parent: requests.parents.get(`${r.type}::${r.name}`) || undefined,
      custom: r.custom,
      id: r.id,
      inputs: r.inputs,
      outputs: r.state,
      aliases: requests.aliases.get(`${r.type}::${r.name}`) ?? [],
    };
  });
  return { stack, resources, outputs, secretOutputs };
}

/**
 * The mock monitor hands mocks neither parents nor aliases: read them from each RegisterResource request on its way
 * in (the parent's URN as the mocks name it).
 */
function recordRequests(): { aliases: Map<string, RenderedAlias[]>; parents: Map<string, string> } {
  const recorded = new Map<string, RenderedAlias[]>();
  const parents = new Map<string, string>();
  const monitor = pulumi.runtime.getMonitor() as any;
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, callback: unknown) => {
    const list = req.getAliasesList().map((a: any): RenderedAlias => {
      if (!a.hasSpec()) return { urn: a.getUrn() };
      const spec = a.getSpec();
      const alias: RenderedAlias = {};
      if (spec.getName()) alias.name = spec.getName();
      if (spec.getType()) alias.type = spec.getType();
      if (spec.getParenturn()) alias.parentUrn = spec.getParenturn();
      if (spec.getNoparent()) alias.noParent = true;
      return alias;
    });
    recorded.set(`${req.getType()}::${req.getName()}`, list);
    parents.set(`${req.getType()}::${req.getName()}`, req.getParent());
    return register(req, callback);
  };
  return { aliases: recorded, parents };
}

/** The provider functions the program calls, answered as AWS would for the mock account and this Region. */
function mockCall(token: string, region: string): Record<string, unknown> {
  switch (token) {
    case "aws:index/getCallerIdentity:getCallerIdentity":
      return {
        accountId: MOCK_ACCOUNT,
        arn: `arn:${partitionOf(region)}:iam::${MOCK_ACCOUNT}:user/preview`,
        userId: "AIDAPREVIEW",
        id: MOCK_ACCOUNT,
      };
    case "aws:index/getRegion:getRegion":
      return { region, name: region, id: region, endpoint: `ec2.${region}.amazonaws.com`, description: region };
    case "aws:index/getPartition:getPartition": {
      const partition = partitionOf(region);
      return {
        partition,
        id: partition,
        dnsSuffix: partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com",
        reverseDnsPrefix: "com.amazonaws",
      };
    }
    default:
      throw new Error(`offline preview has no mock for ${token}`);
  }
}

async function resolve(value: unknown): Promise<unknown> {
  if (pulumi.Output.isInstance(value)) return new Promise((r) => (value as pulumi.Output<unknown>).apply((v) => r(v)));
  return value;
}

async function waitForRegistrations(): Promise<void> {
  const settings = require("@pulumi/pulumi/runtime/settings");
  await settings.waitForRPCs();
}
