/**
 * The docs that list config keys are held to the config the program accepts (infra/config.ts): Pulumi.example.yaml
 * ("every key a stack can set"), docs/deploying.md's config table and its `pulumi new` prompt table (pulumi-template/Pulumi.yaml's
 * `template:` block).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { parseStackConfig } from "../../infra/config";
import { JOURNEY_CONFIG_KEYS } from "../../infra/core/journeys/journeys-definition";
import { ROOT_DIR } from "../../scripts/lib/offline/mock-stack";

const read = (file: string) => fs.readFileSync(path.join(ROOT_DIR, file), "utf8");

/** Every `sendtime:` key the program reads: the keys parseStackConfig asks for, and the journeys' keys. */
function schemaKeys(): string[] {
  const asked = new Set<string>();
  const base: Record<string, string> = { senderIdentity: "example.com", fromAddress: "news@example.com" };
  parseStackConfig((key) => {
    asked.add(key);
    return base[key];
  });
  return [...asked, ...JOURNEY_CONFIG_KEYS].sort();
}

/** A YAML line `  sendtime:key: value`, set or commented out (`  # sendtime:key: value`). */
const KEY_LINE = /^\s*(#\s*)?sendtime:([A-Za-z]+):(.*)$/;

function exampleKeys(): { set: string[]; commented: Map<string, string> } {
  const set = Object.keys((parse(read("Pulumi.example.yaml")) as { config: Record<string, unknown> }).config)
    .filter((k) => k.startsWith("sendtime:"))
    .map((k) => k.slice("sendtime:".length));
  const commented = new Map<string, string>();
  for (const line of read("Pulumi.example.yaml").split("\n")) {
    const m = KEY_LINE.exec(line);
    if (m?.[1]) commented.set(m[2], line.replace(/^(\s*)#\s*/, "$1"));
  }
  return { set, commented };
}

/** The cells of each row of the Markdown table whose header row starts with `| heading |`. */
function tableRows(markdown: string, heading: string): string[][] {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => new RegExp(`^\\|\\s*${heading}\\s*\\|`).test(l));
  assert.ok(start >= 0, `a table headed "${heading}"`);
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith("|"); i++)
    rows.push(lines[i].split("|").slice(1, -1));
  return rows;
}

/** The `code` spans of a cell matching `pattern`. */
const codeIn = (cell: string, pattern: RegExp) =>
  [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]).filter((k) => pattern.test(k));

describe("docs held to the config schema (infra/config.ts)", () => {
  const keys = schemaKeys();

  it("the schema's keys are found (a sanity check of the recording reader)", () => {
    for (const k of ["senderIdentity", "frequencyCap", "trackingDomain", "templatesDir", "maxSchedules", "journeys"])
      assert.ok(keys.includes(k), k);
  });

  it("Pulumi.example.yaml names every key a stack can set, each set or given commented out", () => {
    const { set, commented } = exampleKeys();
    const missing = keys.filter((k) => !set.includes(k) && !commented.has(k));
    assert.deepStrictEqual(missing, [], "keys of infra/config.ts that Pulumi.example.yaml does not name");
    const unknown = [...set, ...commented.keys()].filter((k) => !keys.includes(k));
    assert.deepStrictEqual(unknown, [], "keys Pulumi.example.yaml names that the program does not read");
  });

  it("Pulumi.example.yaml's commented-out values are valid: the stack with all of them set is accepted", () => {
    const { commented } = exampleKeys();
    const lines = read("Pulumi.example.yaml")
      .split("\n")
      .map((line) => {
        const m = KEY_LINE.exec(line);
        return m?.[1] ? commented.get(m[2])! : line;
      });
    const config = (parse(lines.join("\n")) as { config: Record<string, unknown> }).config;
    const value = (key: string) => {
      const v = config[`sendtime:${key}`];
      return v === undefined ? undefined : typeof v === "string" ? v : JSON.stringify(v);
    };
    const { config: parsed } = parseStackConfig(value, Object.keys(config));
    assert.ok(parsed.kmsKeyArn && parsed.trackingDomain && parsed.frequencyCap, "the optional keys are all set");
  });

  it("docs/deploying.md's config table has one row per key", () => {
    const rows = tableRows(read("docs/deploying.md"), "key");
    assert.deepStrictEqual(rows.flatMap(([key]) => codeIn(key, /^[a-z][A-Za-z]+$/)).sort(), keys);
  });

  it("docs/deploying.md's `pulumi new` prompt table is pulumi-template/Pulumi.yaml's template: block, key for key and default for default", () => {
    const template = (
      parse(read("pulumi-template/Pulumi.yaml")) as { template: { config: Record<string, { default: string }> } }
    ).template.config;
    const documented = tableRows(read("docs/deploying.md"), "prompt").flatMap(([prompt, def]) =>
      codeIn(prompt, /^(aws|sendtime):[A-Za-z]+$/).map((key) => [
        key,
        def.trim() === "empty" ? "" : def.trim().replace(/^`|`$/g, ""),
      ]),
    );
    assert.deepStrictEqual(
      documented,
      Object.entries(template).map(([k, c]) => [k, c.default]),
    );
  });
});
