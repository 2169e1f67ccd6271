/**
 * sms-send-scoped and sms-configuration-set-events: on hand-built resources, on the rendered stack with
 * sendtime:sms, and through the pack served as the CLI serves it (gRPC), with a planted wildcard and a planted
 * configuration set without an event destination.
 */
import * as assert from "assert";
import * as path from "path";
import { smsConfigurationSetEvents, smsSendScoped } from "../../policy/sms";
import { ServedPolicyPack, readPolicyConfig, POLICY_DIR } from "../../scripts/lib/offline/policy-runner";
import { only, renderWith } from "../helpers/stack";
import {
  assertHasResourceViolation,
  assertHasStackViolation,
  assertNoResourceViolations,
  assertNoStackViolations,
  doc,
  packResources,
  resourceArgs,
  stackResource,
} from "./util";

const POOL = "arn:aws:sms-voice:us-east-1:123456789012:pool/pool-0123456789abcdef0123456789abcdef";
const SET = "arn:aws:sms-voice:us-east-1:123456789012:configuration-set/sendtime-dev-sms";
const ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy";
const CONFIG_SET = "aws:pinpoint/smsvoicev2ConfigurationSet:Smsvoicev2ConfigurationSet";
const DESTINATION = "aws:pinpoint/smsvoicev2EventDestination:Smsvoicev2EventDestination";

const send = (statement: object) =>
  resourceArgs(ROLE_POLICY, { role: "sender", policy: doc({ Effect: "Allow", ...statement }) });

describe("policy: sms-send-scoped", () => {
  const p = smsSendScoped;

  it("passes SendTextMessage on the pool and the configuration set", () =>
    assertNoResourceViolations(p, send({ Action: "sms-voice:SendTextMessage", Resource: [POOL, SET] })));

  it("passes a policy without SMS actions", () =>
    assertNoResourceViolations(p, send({ Action: "ses:SendEmail", Resource: "*" })));

  it("fails SendTextMessage on *", () =>
    assertHasResourceViolation(p, send({ Action: "sms-voice:SendTextMessage", Resource: "*" }), {
      message: /allows sms-voice:SendTextMessage on "\*": list only the pool and the configuration set/,
    }));

  it("fails sms-voice:* on a wildcard pool, and on a phone number (a send bypassing the pool)", async () => {
    await assertHasResourceViolation(
      p,
      send({ Action: "sms-voice:*", Resource: [POOL.replace(/pool-\w+$/, "*"), SET] }),
      { message: /on "arn:aws:sms-voice:us-east-1:123456789012:pool\/\*"/ },
    );
    const phone = "arn:aws:sms-voice:us-east-1:123456789012:phone-number/phone-1";
    await assertHasResourceViolation(p, send({ Action: "sms-voice:SendTextMessage", Resource: [phone, SET] }), {
      message: `on "${phone}"`,
    });
  });

  it("fails a grant without the configuration set (texts sent outside it have no events)", () =>
    assertHasResourceViolation(p, send({ Action: "sms-voice:SendTextMessage", Resource: POOL }), {
      message: "without a configuration-set ARN",
    }));

  it("fails NotAction and NotResource", async () => {
    await assertHasResourceViolation(p, send({ NotAction: "s3:*", Resource: [POOL, SET] }), { message: "NotAction" });
    await assertHasResourceViolation(p, send({ Action: "sms-voice:SendTextMessage", NotResource: POOL }), {
      message: "NotResource",
    });
  });
});

const set = (name = "sendtime-dev-sms") => stackResource(CONFIG_SET, name, { name, arn: SET });
const destination = (props: object) =>
  stackResource(DESTINATION, "d", {
    configurationSetName: "sendtime-dev-sms",
    matchingEventTypes: ["TEXT_DELIVERED", "TEXT_BLOCKED"],
    ...props,
  });

describe("policy: sms-configuration-set-events", () => {
  const p = smsConfigurationSetEvents;

  it("passes a set with a destination of delivered and failed texts, or of TEXT_ALL, by name or ARN", async () => {
    await assertNoStackViolations(p, [set(), destination({})]);
    await assertNoStackViolations(p, [
      set(),
      destination({ configurationSetName: SET, matchingEventTypes: ["TEXT_ALL"] }),
    ]);
  });

  it("fails a set without a destination, or whose only destination is disabled, on the set", async () => {
    const s = set();
    await assertHasStackViolation(p, [s], {
      message: /"sendtime-dev-sms" has no enabled event destination/,
      urn: s.urn,
    });
    await assertHasStackViolation(p, [s, destination({ enabled: false })], { message: "no enabled event destination" });
    await assertHasStackViolation(p, [s, destination({ configurationSetName: "other" })], {
      message: "no enabled event destination",
    });
  });

  it("fails a destination that misses the delivered or the failed texts", async () => {
    await assertHasStackViolation(p, [set(), destination({ matchingEventTypes: ["TEXT_SENT", "TEXT_BLOCKED"] })], {
      message: /no delivered texts/,
    });
    await assertHasStackViolation(p, [set(), destination({ matchingEventTypes: ["TEXT_SUCCESSFUL"] })], {
      message: /no failed texts/,
    });
  });

  it("passes the rendered stack with sendtime:sms, and one without", async function () {
    this.timeout(30_000);
    const stack = await renderWith();
    assert.ok(stack.resources.some((r) => r.type === CONFIG_SET));
    await assertNoStackViolations(p, packResources(stack));
    await assertNoStackViolations(p, packResources(await renderWith({ sms: undefined })));
  });
});

describe("the SMS policies served as the CLI serves them (gRPC)", function () {
  this.timeout(60_000);
  let pack: ServedPolicyPack;
  before(async () => {
    const starting = ServedPolicyPack.start();
    starting.catch(() => {});
    await renderWith();
    pack = await starting;
    await pack.configure(readPolicyConfig(path.join(POLICY_DIR, "config", "dev.json")), "dev.json");
  });
  after(() => pack?.close());

  it("the stack with sendtime:sms has no violations", async () => {
    assert.deepStrictEqual(await pack.analyze(await renderWith()), []);
  });

  it("the sender's SMS permission widened to * fails sms-send-scoped, on the sender's policy", async () => {
    const stack = await renderWith();
    const policy = only(stack, ROLE_POLICY, "bulk-sender-permissions");
    const d = JSON.parse(policy.inputs.policy);
    d.Statement.find((s: { Sid?: string }) => s.Sid === "SendText").Resource = "*";
    policy.inputs.policy = policy.outputs.policy = JSON.stringify(d);
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.enforcementLevel, v.urn]),
      [["sms-send-scoped", "mandatory", policy.urn]],
    );
  });

  it("the event destination removed fails sms-configuration-set-events, on the configuration set", async () => {
    const stack = await renderWith();
    stack.resources = stack.resources.filter((r) => r.type !== DESTINATION);
    const violations = await pack.analyze(stack);
    assert.deepStrictEqual(
      violations.map((v) => [v.policyName, v.urn]),
      [["sms-configuration-set-events", only(stack, CONFIG_SET).urn]],
    );
  });
});
