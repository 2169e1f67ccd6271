/**
 * infra/sendtime.ts: the stack as one component, and its arguments. Stacks deployed before the component had its
 * parts at the top level; each part carries an alias there, so those stacks keep every URN (no resource replaced).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { RenderedResource, RenderedStack } from "../../scripts/lib/offline/mock-stack";
import { parseStackConfig } from "../../infra/config";
import { parseJourneyConfig } from "../../infra/core/journeys/journeys-definition";
import { isIanaZone } from "../../infra/core/journeys/subscriber-zone";
import { ConfigError } from "../../infra/config";
import { JourneyDefinitionError } from "../../infra/core/journeys/journeys-definition";
import { argsOfConfig, resolveSendtimeArgs } from "../../infra/sendtime-args";
import { devConfig, renderShipped } from "../helpers/stack";
import { ROOT } from "../helpers/cli";

/** Every URN of the dev, example and prod stacks as the program registered them before the Sendtime component. */
const BEFORE: Record<string, string[]> = JSON.parse(
  fs.readFileSync(path.join(ROOT, "tests", "fixtures", "urns-before-sendtime.json"), "utf8"),
);
const COMPONENT = "sendtime:index:Sendtime";

/**
 * URNs as the engine makes them: every ancestor's type in the chain (Pulumi's mocks keep only the parent's). Through
 * its aliases, by Pulumi's rule: an alias to the top level (no parent, or the root stack as parent, which is not part
 * of a type chain) makes `<type>::<name>`; a child inherits its parent's aliases, the parent's chain then its type.
 */
function engineUrn(r: RenderedResource, byUrn: Map<string, RenderedResource>, aliased: boolean): string {
  const [prefix] = /^urn:pulumi:[^:]*::[^:]*::/.exec(r.urn)!;
  const top = aliased && r.aliases.some((a) => a.noParent || /::pulumi:pulumi:Stack::/.test(a.parentUrn ?? ""));
  if (top || !r.parent) return `${prefix}${r.type}::${r.name}`;
  const parent = engineUrn(byUrn.get(r.parent)!, byUrn, aliased);
  const chain = parent.slice(prefix.length, parent.lastIndexOf("::"));
  return `${prefix}${chain}$${r.type}::${r.name}`;
}

describe("Sendtime, the stack as one component", function () {
  this.timeout(60_000);
  const stacks: Record<string, RenderedStack> = {};
  before(async () => {
    for (const name of Object.keys(BEFORE)) stacks[name] = await renderShipped(name);
  });

  it("holds every resource of the stack: one Sendtime at the top, every other resource under it", () => {
    for (const stack of Object.values(stacks)) {
      const byUrn = new Map(stack.resources.map((r) => [r.urn, r]));
      const [app, ...others] = stack.resources.filter((r) => r.type === COMPONENT);
      assert.deepStrictEqual([app?.name, others.length, app?.parent], ["sendtime", 0, undefined]);
      const outside = stack.resources.filter(
        (r) => r !== app && !engineUrn(r, byUrn, false).includes(`::${COMPONENT}$`),
      );
      assert.deepStrictEqual(
        outside.map((r) => r.urn),
        [],
      );
    }
  });

  it("each part directly under it has one alias, to the top level (parent: the root stack)", () => {
    for (const stack of Object.values(stacks)) {
      const app = stack.resources.find((r) => r.type === COMPONENT)!;
      const parts = stack.resources.filter((r) => r.parent === app.urn);
      assert.ok(parts.length >= 7, `${stack.stack}: ${parts.length} parts`);
      for (const part of parts) {
        assert.strictEqual(part.aliases.length, 1, `${part.name}: ${JSON.stringify(part.aliases)}`);
        const [alias] = part.aliases;
        assert.ok(alias.noParent || /::pulumi:pulumi:Stack::/.test(alias.parentUrn ?? ""), JSON.stringify(alias));
        assert.deepStrictEqual([alias.name, alias.type, alias.urn], [undefined, undefined, undefined]);
      }
    }
  });

  for (const name of ["dev", "example", "prod"]) {
    it(`${name}: every URN the stack had before the component is a URN of the same resource now, by its aliases`, () => {
      const stack = stacks[name];
      const byUrn = new Map(stack.resources.map((r) => [r.urn, r]));
      const known = new Set(stack.resources.map((r) => engineUrn(r, byUrn, true)));
      assert.deepStrictEqual(
        BEFORE[name].filter((urn) => !known.has(urn)),
        [],
      );
      // The URNs did change (the test would pass trivially otherwise): the aliases are what keeps them.
      const now = new Set(stack.resources.map((r) => engineUrn(r, byUrn, false)));
      assert.deepStrictEqual(
        BEFORE[name].filter((urn) => now.has(urn)),
        [],
      );
    });
  }
});

describe("Sendtime's arguments", () => {
  it("are the stack config: the example stack's config, as arguments, checks to the same settings", () => {
    const config = devConfig();
    const get = (key: string) => config[`sendtime:${key}`];
    const parsed = parseStackConfig(get).config;
    const { journeys, eventBusName } = parseJourneyConfig(get, isIanaZone);
    assert.ok(journeys.length > 0 && parsed.unsubscribe && parsed.alarmEmail, "the example sets them");
    assert.deepStrictEqual(resolveSendtimeArgs(argsOfConfig(parsed, journeys, eventBusName)), {
      config: parsed,
      journeys,
      eventBusName,
    });
  });

  it("fill in the defaults docs/deploying.md lists for the keys (an identity and an address are enough)", () => {
    const { config, journeys, eventBusName } = resolveSendtimeArgs({
      senderIdentity: "example.com",
      fromAddress: "news@example.com",
    });
    assert.deepStrictEqual(
      [
        config.fromAddress,
        config.createScheduleTps,
        config.batchSize,
        config.defaultWindowMinutes,
        config.templatesDir,
      ],
      ["news@example.com", 5000, 400, 15, "templates"],
    );
    assert.deepStrictEqual([journeys, eventBusName, config.unsubscribe], [[], "default", undefined]);
    assert.strictEqual(
      resolveSendtimeArgs({ senderIdentity: "example.com", fromAddress: "news@example.com", templatesDir: "none" })
        .config.templatesDir,
      undefined,
    );
  });

  it("refuse a bad argument, a half of unsubscribe and a misspelt one, naming it", () => {
    const refused = (args: object, pattern: RegExp) =>
      assert.throws(
        () => resolveSendtimeArgs({ senderIdentity: "example.com", fromAddress: "news@example.com", ...args }),
        (e: unknown) => (e instanceof ConfigError || e instanceof JourneyDefinitionError) && pattern.test(e.message),
      );
    refused(
      { maxConcurrency: 20_000 },
      /^sendtime:maxConcurrency = "20000" is not valid: a whole number from 1 to 10000$/,
    );
    refused({ fromAddress: "news@other.org" }, /sendtime:fromAddress = "news@other.org" .* of the sender identity/);
    refused(
      { unsubscribe: { contactList: "news" } },
      /sendtime:unsubscribeContactList is set but sendtime:unsubscribeTopic/,
    );
    refused(
      { maxConcurency: 5 },
      /sendtime:maxConcurency is not a sendtime setting: did you mean sendtime:maxConcurrency\?/,
    );
    refused({ journeys: [{ name: "x" }] }, /sendtime:journeys/);
  });
});
