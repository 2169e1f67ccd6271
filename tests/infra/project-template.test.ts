/**
 * The `pulumi new` template (pulumi-template/: its Pulumi.yaml's `template:` block is what `pulumi new` asks for; the
 * project depends on the library) and the shipped stacks: the default stack is minimal, the example stack keeps the
 * demo journey and the alarm address. The template installed and run: tests/packages/library.packed.ts.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { parseStackConfig } from "../../infra/config";
import { readStackConfig, ROOT_DIR } from "../../scripts/lib/offline/mock-stack";
import { all, renderShipped } from "../helpers/stack";
import { ConfigError } from "../../infra/config";

const TEMPLATE_DIR = path.join(ROOT_DIR, "pulumi-template");
const project = parse(fs.readFileSync(path.join(TEMPLATE_DIR, "Pulumi.yaml"), "utf8"));
const template = project.template as {
  description: string;
  config: Record<string, { description: string; default: string }>;
};

/** A value each template key refuses, so a key the program does not read (a typo) cannot pass. */
const BAD: Record<string, string> = {
  "sendtime:senderIdentity": "not an identity",
  "sendtime:fromAddress": "nobody",
  "sendtime:createScheduleTps": "0",
  "sendtime:recipientRetentionDays": "0",
  "sendtime:alarmEmail": "not-an-address",
  "sendtime:unsubscribeContactList": "has spaces",
  "sendtime:unsubscribeTopic": "has spaces",
  "sendtime:templatesDir": "/etc/templates",
};

describe("the pulumi new template (pulumi-template/) and the shipped stacks", function () {
  this.timeout(60_000);

  it("is a thin project: its program builds one Sendtime from the library, at the repository's versions", () => {
    const root = JSON.parse(fs.readFileSync(path.join(ROOT_DIR, "package.json"), "utf8"));
    const pkg = JSON.parse(fs.readFileSync(path.join(TEMPLATE_DIR, "package.json"), "utf8"));
    assert.deepStrictEqual(pkg.dependencies, {
      "@pulumi/aws": root.dependencies["@pulumi/aws"],
      "@pulumi/pulumi": root.dependencies["@pulumi/pulumi"],
      sendtime: root.version,
    });
    assert.deepStrictEqual(pkg.devDependencies, {
      "@types/node": root.devDependencies["@types/node"],
      typescript: root.devDependencies.typescript,
    });
    const program = fs.readFileSync(path.join(TEMPLATE_DIR, "index.ts"), "utf8");
    assert.deepStrictEqual(
      [...program.matchAll(/from "([^"]+)"/g)].map((m) => m[1]),
      ["sendtime/infra"],
    );
    assert.deepStrictEqual([project.name, project.runtime.name, project.main], ["${PROJECT}", "nodejs", undefined]);
    // The repository's own Pulumi.yaml is no template any more: `pulumi new` of it would copy the whole repository.
    assert.strictEqual(parse(fs.readFileSync(path.join(ROOT_DIR, "Pulumi.yaml"), "utf8")).template, undefined);
  });

  it("has a template: a description, and a description and default for every key a new user sets", () => {
    assert.ok(template.description.length > 20);
    assert.deepStrictEqual(Object.keys(template.config), ["aws:region", ...Object.keys(BAD)]);
    for (const [key, c] of Object.entries(template.config)) {
      assert.ok(typeof c.description === "string" && c.description.length > 10, `${key}: description`);
      assert.strictEqual(typeof c.default, "string", `${key}: default (a string, as Pulumi config values are)`);
    }
  });

  it("the template's defaults make a valid stack; each key is one the program reads (a bad value is refused naming it)", () => {
    const defaults = Object.fromEntries(Object.entries(template.config).map(([k, c]) => [k, c.default]));
    const get = (over: Record<string, string>) => (key: string) => ({ ...defaults, ...over })[`sendtime:${key}`];
    const { config } = parseStackConfig(get({}));
    assert.deepStrictEqual(
      [config.senderIdentity, config.fromAddress, config.alarmEmail, config.unsubscribe],
      ["mail.example.com", "news@mail.example.com", undefined, undefined],
    );
    for (const [key, bad] of Object.entries(BAD)) {
      const over: Record<string, string> = { [key]: bad };
      // the two unsubscribe keys go together
      if (key === "sendtime:unsubscribeContactList") over["sendtime:unsubscribeTopic"] = "campaigns";
      if (key === "sendtime:unsubscribeTopic") over["sendtime:unsubscribeContactList"] = "sendtime-dev";
      assert.throws(
        () => parseStackConfig(get(over)),
        (e: unknown) => e instanceof ConfigError && e.message.includes(key),
        key,
      );
    }
  });

  it("the default stack (dev) is minimal: no journey, no alarm subscription, no example address to mail", async () => {
    assert.deepStrictEqual(Object.keys(readStackConfig("dev")).sort(), [
      "aws:region",
      "sendtime:fromAddress",
      "sendtime:senderIdentity",
    ]);
    const dev = await renderShipped("dev");
    assert.deepStrictEqual(all(dev, "aws:sns/topicSubscription:TopicSubscription"), []);
    assert.deepStrictEqual(
      dev.resources.filter((r) => /lambda/i.test(r.type)).map((r) => r.type),
      [],
    );
    // Its only rules are the guardrails' (on by default): the fan-out's starts and the guardrail alarms.
    assert.deepStrictEqual(
      all(dev, "aws:cloudwatch/eventRule:EventRule").map((r) => r.name),
      ["guardrails-alarms", "guardrails-launches"],
    );
    assert.ok(!JSON.stringify(dev.resources.map((r) => r.inputs)).includes("ops@example.com"));
  });

  it("the example stack keeps them: the onboarding journey and alarms to ops@example.com", async () => {
    const example = await renderShipped("example");
    const subs = all(example, "aws:sns/topicSubscription:TopicSubscription");
    assert.deepStrictEqual(
      subs.map((s) => [s.inputs.protocol, s.inputs.endpoint]),
      [["email", "ops@example.com"]],
    );
    assert.ok(example.resources.some((r) => r.type === "aws:lambda/function:Function"));
    assert.deepStrictEqual(
      (example.outputs.journeyDefinitions as { name: string }[]).map((j) => j.name),
      ["onboarding"],
    );
  });
});
