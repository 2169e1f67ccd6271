import * as assert from "assert";
import { parseStackConfig } from "../../infra/config";
import { batchSecondsWithOneSlowRow, maxCallsInFlight } from "../../infra/core/plan/quotas";
import { devConfig } from "../helpers/stack";
import { ConfigError } from "../../infra/config";
import { isEmailAddress } from "../../infra/core/send/email";

/** The dev stack's config as `get(key)`, with overrides. */
function getter(overrides: Record<string, string | undefined> = {}) {
  const dev = devConfig();
  return (key: string) => (key in overrides ? overrides[key] : dev[`sendtime:${key}`]);
}

function rejects(overrides: Record<string, string | undefined>, message: RegExp) {
  assert.throws(
    () => parseStackConfig(getter(overrides)),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError, `expected ConfigError, got ${e}`);
      assert.match(e.message, message);
      assert.ok(!e.message.includes("\n"), "one line");
      return true;
    },
  );
}

describe("stack config", () => {
  it("accepts the shipped dev config", () => {
    const { config } = parseStackConfig(getter());
    assert.strictEqual(config.senderIdentity, "mail.example.com");
    assert.strictEqual(config.batchSize, 400);
    assert.deepStrictEqual(config.unsubscribe, { contactList: "sendtime-dev", topic: "campaigns" });
  });

  it("applies the documented defaults", () => {
    const { config } = parseStackConfig(
      (k) => (({ senderIdentity: "example.com", fromAddress: "news@example.com" }) as Record<string, string>)[k],
    );
    assert.strictEqual(config.createScheduleTps, 5000);
    assert.strictEqual(config.maxEventAgeSeconds, 7200);
    assert.strictEqual(config.maxRetryAttempts, 5);
    assert.strictEqual(config.innerConcurrency, 25);
    assert.strictEqual(config.alarmEmail, undefined);
    assert.strictEqual(config.unsubscribe, undefined);
  });

  it("names the key when a required one is missing", () =>
    rejects({ senderIdentity: undefined }, /^sendtime:senderIdentity is required/));

  it("rejects a value that is not a whole number, naming key, value and range", () =>
    rejects(
      { maxConcurrency: "12.5" },
      /^sendtime:maxConcurrency = "12.5" is not valid: a whole number from 1 to 10000$/,
    ));

  for (const [key, bad, range] of [
    ["toleratedFailurePercentage", "101", "0 to 100"],
    ["defaultWindowMinutes", "0", "1 to 1440"],
    ["defaultWindowMinutes", "1441", "1 to 1440"],
    ["maxEventAgeSeconds", "59", "60 to 86400"],
    ["maxEventAgeSeconds", "86401", "60 to 86400"],
    ["maxRetryAttempts", "186", "0 to 185"],
    ["innerConcurrency", "41", "1 to 40"],
    ["createScheduleTps", "0", "1 to 1000000"],
  ]) {
    it(`rejects ${key} = ${bad} (allowed ${range})`, () =>
      rejects({ [key]: bad }, new RegExp(`sendtime:${key} = "${bad}" is not valid: a whole number from ${range}`)));
  }

  it("accepts the API's boundary values", () => {
    const { config } = parseStackConfig(
      getter({
        defaultWindowMinutes: "1440",
        maxEventAgeSeconds: "60",
        maxRetryAttempts: "0",
        toleratedFailurePercentage: "0",
      }),
    );
    assert.strictEqual(config.defaultWindowMinutes, 1440);
    assert.strictEqual(config.maxRetryAttempts, 0);
  });

  it("rejects a batch that cannot finish in EXPRESS's 5 minutes even unthrottled but for one row, saying the largest that fits", () => {
    // 1,720 rounds of 0.1 s plus one row retried to its limit (128 s) is exactly 300 s
    assert.strictEqual(batchSecondsWithOneSlowRow(1720, 1), 300);
    assert.strictEqual(
      parseStackConfig(getter({ batchSize: "1720", innerConcurrency: "1", maxConcurrency: "1" })).config.batchSize,
      1720,
    );
    rejects(
      { batchSize: "1721", innerConcurrency: "1" },
      /^sendtime:batchSize = "1721" is not valid: with innerConcurrency 1 a batch takes 300 s at 0.1 s a call with one row retried to its limit \(128 s\), over the 300 s EXPRESS limit; use at most 1720$/,
    );
    assert.strictEqual(parseStackConfig(getter({ batchSize: "10000" })).config.batchSize, 10000);
  });

  it("sizes the fan-out from the quota by default: calls in flight = quota × 0.95 × 0.1 s, as close as whole Maps allow", () => {
    const shape = (tps: string) => {
      const { config } = parseStackConfig(
        (k) => ({ senderIdentity: "example.com", fromAddress: "a@example.com", createScheduleTps: tps })[k],
      );
      return [config.maxConcurrency, config.innerConcurrency, config.batchSize];
    };
    // 5,000 × 0.95 × 0.1 = 475 = 19 × 25; 20,000 → 1,900 = 50 × 38; 100 → 9.5 → 9 calls in one child
    assert.deepStrictEqual(shape("5000"), [19, 25, 400]);
    assert.deepStrictEqual(shape("20000"), [50, 38, 400]);
    assert.deepStrictEqual(shape("100"), [1, 9, 400]);
    assert.strictEqual(maxCallsInFlight(5000), 475);
  });

  it("exports the schedule quota for the launcher: 10,000,000 by default, or the configured one", () => {
    assert.strictEqual(parseStackConfig(getter()).config.maxSchedules, 10_000_000);
    assert.strictEqual(parseStackConfig(getter({ maxSchedules: "25000000" })).config.maxSchedules, 25_000_000);
    rejects({ maxSchedules: "0" }, /^sendtime:maxSchedules = "0" is not valid: a whole number from 1 to 1000000000$/);
  });

  it("rejects an unknown key, naming the closest known one", () => {
    const dev = devConfig();
    const keys = [...Object.keys(dev), "sendtime:maxConcurency"];
    assert.throws(
      () => parseStackConfig(getter({ maxConcurency: "100" }), keys),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message === "sendtime:maxConcurency is not a sendtime setting: did you mean sendtime:maxConcurrency?",
    );
  });
  it("rejects an unknown key far from every known one, listing them", () =>
    assert.throws(
      () => parseStackConfig(getter(), [...Object.keys(devConfig()), "sendtime:colour"]),
      (e: unknown) =>
        e instanceof ConfigError &&
        /^sendtime:colour is not a sendtime setting \(settings: senderIdentity, fromAddress, /.test(e.message),
    ));
  it("accepts every key it reads, and keys of other namespaces", () =>
    assert.doesNotThrow(() =>
      parseStackConfig(getter(), [...Object.keys(devConfig()), "aws:profile", "sendtime:kmsKeyArn"]),
    ));

  it("rejects a sender identity that is neither a domain nor an address", () =>
    rejects({ senderIdentity: "not a domain" }, /senderIdentity = "not a domain" is not valid/));
  it("rejects a from address outside the identity", () =>
    rejects(
      { fromAddress: "news@other.com" },
      /fromAddress = "news@other.com" is not valid: an address of the sender identity "mail.example.com"/,
    ));
  it("accepts a from address on a subdomain of the identity", () =>
    assert.strictEqual(
      parseStackConfig(getter({ fromAddress: "a@eu.mail.example.com" })).config.fromAddress,
      "a@eu.mail.example.com",
    ));
  it("rejects a malformed alarm email", () =>
    rejects({ alarmEmail: "ops at example" }, /alarmEmail = "ops at example" is not valid: an email address/));
  it("accepts the addresses SES takes and refuses the rest", () => {
    for (const ok of ["first.last+tag@sub.example.co.uk", "o'brien@example.com", "x@xn--bcher-kva.example"])
      assert.ok(isEmailAddress(ok), ok);
    for (const bad of [
      "ü@example.com",
      "a@bücher.example",
      "a..b@example.com",
      ".a@example.com",
      "a@example",
      "a b@example.com",
      "a@-example.com",
      "<a@example.com>",
    ])
      assert.ok(!isEmailAddress(bad), bad);
  });
  it("rejects half an unsubscribe setting", () =>
    rejects({ unsubscribeTopic: undefined }, /unsubscribeContactList is set but sendtime:unsubscribeTopic is not/));
  it("rejects a log retention CloudWatch does not offer", () =>
    rejects({ logRetentionDays: "31" }, /logRetentionDays = "31" is not valid: one of CloudWatch Logs' values/));
  it("rejects a KMS key that is not an ARN", () =>
    rejects({ kmsKeyArn: "alias/mine" }, /kmsKeyArn = "alias\/mine" is not valid: a KMS key or alias ARN/));
  it("takes a tracking domain as a bare host name and refuses URLs, addresses and bad labels", () => {
    assert.strictEqual(
      parseStackConfig(getter({ trackingDomain: "track.example.com" })).config.trackingDomain,
      "track.example.com",
    );
    assert.strictEqual(parseStackConfig(getter()).config.trackingDomain, undefined);
    for (const bad of [
      "https://track.example.com",
      "track.example.com/x",
      "track.example.com:443",
      "news@example.com",
      "-a.example.com",
      "localhost",
    ])
      rejects(
        { trackingDomain: bad },
        new RegExp(`^sendtime:trackingDomain = ".*" is not valid: a host name such as track.example.com`),
      );
  });
  it("takes a frequency cap as JSON {max, per} and refuses anything else, naming what is allowed", () => {
    assert.deepStrictEqual(parseStackConfig(getter({ frequencyCap: '{"max": 2, "per": "day"}' })).config.frequencyCap, {
      max: 2,
      per: "day",
    });
    assert.deepStrictEqual(parseStackConfig(getter({ frequencyCap: '{"per":"month","max":1}' })).config.frequencyCap, {
      max: 1,
      per: "month",
    });
    assert.strictEqual(parseStackConfig(getter()).config.frequencyCap, undefined);
    for (const bad of [
      '{"max": 0, "per": "day"}',
      '{"max": 2.5, "per": "day"}',
      '{"max": 2, "per": "week"}',
      '{"max": 2}',
      '{"max": 2, "per": "day", "tz": "x"}',
      "2/day",
      "[2]",
      "null",
    ])
      rejects(
        { frequencyCap: bad },
        /^sendtime:frequencyCap = ".*" is not valid: JSON \{"max": N, "per": P\} with N a whole number from 1 to 1000 and P one of day, month/,
      );
  });
});
