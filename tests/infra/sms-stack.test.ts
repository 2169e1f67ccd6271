/**
 * Texts in the stack (sendtime:sms): the config's checks, the SMS configuration set, opt-out list and event
 * destination, the sender's one SMS permission and parameters, and the stack outputs; absent config, none of them.
 */
import * as assert from "assert";
import { ConfigError, parseStackConfig } from "../../infra/config";
import { resolveSendtimeArgs } from "../../infra/sendtime-args";
import { all, definitionOf, devConfig, inlineStatements, only, renderWith } from "../helpers/stack";

const POOL = "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-0123456789abcdef0123456789abcdef";
const SMS = JSON.stringify({ poolArn: POOL, mps: 1 });

const CONFIG_SET = "aws:pinpoint/smsvoicev2ConfigurationSet:Smsvoicev2ConfigurationSet";
const OPT_OUT_LIST = "aws:pinpoint/smsvoicev2OptOutList:Smsvoicev2OptOutList";
const DESTINATION = "aws:pinpoint/smsvoicev2EventDestination:Smsvoicev2EventDestination";

function getter(overrides: Record<string, string | undefined>) {
  const dev = devConfig();
  return (key: string) => (key in overrides ? overrides[key] : dev[`sendtime:${key}`]);
}

function rejects(sms: string, message: RegExp) {
  assert.throws(
    () => parseStackConfig(getter({ sms })),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError, `expected ConfigError, got ${e}`);
      assert.match(e.message, /^sendtime:sms = /);
      assert.match(e.message, message);
      assert.ok(!e.message.includes("\n"), "one line");
      return true;
    },
  );
}

describe("stack config sendtime:sms", () => {
  it("absent: no SMS", () => assert.strictEqual(parseStackConfig(getter({ sms: undefined })).config.sms, undefined));

  it("the pool and its parts per second; the message type PROMOTIONAL unless said", () => {
    assert.deepStrictEqual(parseStackConfig(getter({ sms: SMS })).config.sms, {
      poolArn: POOL,
      mps: 1,
      messageType: "PROMOTIONAL",
    });
    const named = JSON.stringify({
      poolArn: POOL,
      mps: "3",
      configurationSetName: "texts",
      optOutListName: "stops",
      messageType: "TRANSACTIONAL",
    });
    assert.deepStrictEqual(parseStackConfig(getter({ sms: named })).config.sms, {
      poolArn: POOL,
      configurationSetName: "texts",
      optOutListName: "stops",
      mps: 3,
      messageType: "TRANSACTIONAL",
    });
  });

  it("each bad key is one line naming it", () => {
    rejects("{", /not JSON/);
    rejects("[1]", /not an object/);
    rejects(JSON.stringify({ poolArn: POOL, mps: 1, mpss: 2 }), /unknown key mpss/);
    rejects(JSON.stringify({ mps: 1 }), /poolArn must be a pool's ARN/);
    rejects(JSON.stringify({ poolArn: POOL.replace("pool/", "phone-number/"), mps: 1 }), /poolArn must be/);
    rejects(JSON.stringify({ poolArn: POOL.replace("pool-0", "pool-*"), mps: 1 }), /poolArn must be/);
    rejects(JSON.stringify({ poolArn: POOL }), /mps must be a whole number .* from 1 to 10000/);
    rejects(JSON.stringify({ poolArn: POOL, mps: 0 }), /mps must be/);
    rejects(JSON.stringify({ poolArn: POOL, mps: 1.5 }), /mps must be/);
    rejects(JSON.stringify({ poolArn: POOL, mps: 10_001 }), /mps must be/);
    rejects(JSON.stringify({ poolArn: POOL, mps: 1, configurationSetName: "a b" }), /configurationSetName must be/);
    rejects(JSON.stringify({ poolArn: POOL, mps: 1, optOutListName: "x".repeat(65) }), /optOutListName must be/);
    rejects(JSON.stringify({ poolArn: POOL, mps: 1, messageType: "promotional" }), /messageType must be/);
  });

  it("the Sendtime argument sms is held to the same checks", () => {
    const base = { senderIdentity: "example.com", fromAddress: "news@example.com" };
    assert.strictEqual(resolveSendtimeArgs({ ...base, sms: { poolArn: POOL, mps: 2 } }).config.sms?.mps, 2);
    assert.throws(
      () => resolveSendtimeArgs({ ...base, sms: { poolArn: POOL, mps: 0 } }),
      (e: unknown) => e instanceof ConfigError && /^sendtime:sms = .*mps must be/.test(e.message),
    );
  });
});

describe("the stack with sendtime:sms", function () {
  this.timeout(30_000);

  it("creates the configuration set and opt-out list, named for the stack, and the funnel's event destination", async () => {
    const stack = await renderWith({ sms: SMS });
    assert.strictEqual(only(stack, CONFIG_SET).inputs.name, "sendtime-dev-sms");
    assert.strictEqual(only(stack, CONFIG_SET).inputs.defaultMessageType, "PROMOTIONAL");
    assert.strictEqual(only(stack, OPT_OUT_LIST).inputs.name, "sendtime-dev-sms");
    const d = only(stack, DESTINATION).inputs;
    assert.strictEqual(d.configurationSetName, "sendtime-dev-sms");
    for (const t of ["TEXT_SENT", "TEXT_DELIVERED", "TEXT_SUCCESSFUL", "TEXT_BLOCKED", "TEXT_CARRIER_UNREACHABLE"])
      assert.ok(d.matchingEventTypes.includes(t), t);
    assert.ok(!d.matchingEventTypes.includes("TEXT_QUEUED"));
    const group = only(stack, "aws:cloudwatch/logGroup:LogGroup", "sms-events");
    assert.strictEqual(d.cloudwatchLogsDestination.logGroupArn, group.outputs.arn);
    assert.strictEqual(group.inputs.name, "/sendtime/dev/sms-events");
  });

  it("the event destination's role: trusted by sms-voice for this account and configuration set, writes only its log group", async () => {
    const stack = await renderWith({ sms: SMS });
    const role = only(stack, "aws:iam/role:Role", "sms-events-role");
    assert.strictEqual(only(stack, DESTINATION).inputs.cloudwatchLogsDestination.iamRoleArn, role.outputs.arn);
    assert.deepStrictEqual(JSON.parse(role.inputs.assumeRolePolicy).Statement, [
      {
        Effect: "Allow",
        Principal: { Service: "sms-voice.amazonaws.com" },
        Action: "sts:AssumeRole",
        Condition: {
          StringEquals: { "aws:SourceAccount": "123456789012" },
          ArnLike: { "aws:SourceArn": "arn:aws:sms-voice:us-east-1:123456789012:configuration-set/sendtime-dev-sms" },
        },
      },
    ]);
    assert.deepStrictEqual(inlineStatements(stack, "sms-events-role"), [
      {
        Sid: "WriteSmsEvents",
        Effect: "Allow",
        Action: ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"],
        Resource: "arn:aws:logs:us-east-1:123456789012:log-group:/sendtime/dev/sms-events:*",
      },
    ]);
  });

  it("the sender may send texts only from the pool through the configuration set, and is told both", async () => {
    const stack = await renderWith({ sms: SMS });
    const sms = inlineStatements(stack, "bulk-sender-role").filter((s) =>
      [s.Action].flat().some((a) => String(a).startsWith("sms-voice:")),
    );
    assert.deepStrictEqual(sms, [
      {
        Sid: "SendText",
        Effect: "Allow",
        Action: "sms-voice:SendTextMessage",
        Resource: [POOL, "arn:aws:sms-voice:us-east-1:123456789012:configuration-set/sendtime-dev-sms"],
      },
    ]);
  });

  it("names given: no configuration set or opt-out list created; the permission names the given set", async () => {
    const sms = JSON.stringify({ poolArn: POOL, mps: 1, configurationSetName: "texts", optOutListName: "stops" });
    const stack = await renderWith({ sms });
    assert.deepStrictEqual([all(stack, CONFIG_SET).length, all(stack, OPT_OUT_LIST).length], [0, 0]);
    assert.strictEqual(only(stack, DESTINATION).inputs.configurationSetName, "texts");
    const resources = inlineStatements(stack, "bulk-sender-role").find((s) => s.Sid === "SendText")!.Resource;
    assert.deepStrictEqual(resources, [POOL, "arn:aws:sms-voice:us-east-1:123456789012:configuration-set/texts"]);
    assert.strictEqual(stack.outputs.smsOptOutListName, "stops");
  });

  it("exports the sms* outputs; without sendtime:sms none of them, no SMS resource and no SMS permission", async () => {
    const stack = await renderWith({ sms: JSON.stringify({ poolArn: POOL, mps: 3, messageType: "TRANSACTIONAL" }) });
    assert.deepStrictEqual(
      {
        smsPoolArn: stack.outputs.smsPoolArn,
        smsConfigurationSetName: stack.outputs.smsConfigurationSetName,
        smsOptOutListName: stack.outputs.smsOptOutListName,
        smsEventLogGroupName: stack.outputs.smsEventLogGroupName,
        smsMps: stack.outputs.smsMps,
        smsMessageType: stack.outputs.smsMessageType,
      },
      {
        smsPoolArn: POOL,
        smsConfigurationSetName: "sendtime-dev-sms",
        smsOptOutListName: "sendtime-dev-sms",
        smsEventLogGroupName: "/sendtime/dev/sms-events",
        smsMps: 3,
        smsMessageType: "TRANSACTIONAL",
      },
    );
    const bare = await renderWith({ sms: undefined });
    assert.deepStrictEqual(
      Object.keys(bare.outputs).filter((k) => k.startsWith("sms") && bare.outputs[k] !== undefined),
      [],
    );
    assert.deepStrictEqual(
      bare.resources.filter((r) => r.type.startsWith("aws:pinpoint/") || r.type === "sendtime:index:Sms"),
      [],
    );
    const statements = inlineStatements(bare, "bulk-sender-role");
    assert.ok(!JSON.stringify(statements).includes("sms-voice"));
  });

  it("the fan-out's texts take the stack's message type (PROMOTIONAL unless sendtime:sms says otherwise)", async () => {
    const messageTypes = (definition: unknown) =>
      [
        ...JSON.stringify(definition).matchAll(
          /'PROMOTIONAL', 'TRANSACTIONAL'\] \? \$row\.message_type : \\"(\w+)\\"/g,
        ),
      ].map((m) => m[1]);
    const transactional = await renderWith({
      sms: JSON.stringify({ poolArn: POOL, mps: 3, messageType: "TRANSACTIONAL" }),
    });
    assert.deepStrictEqual([...new Set(messageTypes(definitionOf(transactional)))], ["TRANSACTIONAL"]);
    const promotional = await renderWith({ sms: SMS });
    assert.deepStrictEqual([...new Set(messageTypes(definitionOf(promotional)))], ["PROMOTIONAL"]);
  });
});
