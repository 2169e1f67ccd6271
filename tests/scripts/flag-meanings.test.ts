/**
 * One meaning per flag everywhere (issue 35): a flag several commands take has one kind of value (its parser's kind)
 * and one description (`help`; what a command adds is its `note`); every command that changes AWS takes --dry-run,
 * every command that reports takes --json. The commands are read from package.json, their tables from their files.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as path from "path";
import type { Command } from "../../scripts/lib/cli/flags";
import { flagKind } from "../../scripts/lib/cli/flags";
import { ROOT } from "../helpers/cli";

const scripts: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts;
const COMMANDS: [string, Command][] = Object.entries(scripts)
  .map(([name, line]) => [name, /^ts-node --transpile-only (scripts\/[a-z-]+\.ts)$/.exec(line)?.[1]] as const)
  .filter((e): e is readonly [string, string] => e[1] !== undefined && e[0] !== "bench" && e[0] !== "sendtime")
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  .map(([name, file]) => [name, require(path.join(ROOT, file)).COMMAND as Command]);

/**
 * Flags whose name two commands use for two things, each kept because renaming would break command lines people run
 * (the contract: extend, never rename). A new clash fails the test; these are the whole list.
 */
const KNOWN_CLASHES: Record<string, string> = {
  // import-pinpoint --campaign FILE (a get-campaign file; --campaign-id is its sendtime id) vs a campaign id elsewhere.
  campaign: "import-pinpoint",
  // reschedule --step N (which step) vs launch-campaign/size-window --step +Nd:TEMPLATE (a later step).
  step: "reschedule",
  // send-test --to ADDRESS vs campaign-report --to INSTANT (the end of the range).
  to: "send-test",
};

/** What changes AWS, by what each command calls (independent of the tables' own `changesAws`). */
const CHANGES_AWS = [
  "launch-campaign",
  "cancel-campaign",
  "pause-campaign",
  "resume-campaign",
  "reschedule",
  "redrive",
  "enrol",
  "send-test",
];
/** What reports a result on stdout (every command but the demo, whose results are its files). */
const REPORTS = COMMANDS.map(([name]) => name).filter((name) => name !== "demo");

describe("one meaning per flag, across every command's table", () => {
  it("reads every command", () => assert.ok(COMMANDS.length >= 14, COMMANDS.map((c) => c[0]).join(", ")));

  it("a flag several commands take has one kind of value and one description in all of them", () => {
    const seen = new Map<string, { command: string; kind: string; help: string }>();
    const problems: string[] = [];
    for (const [command, c] of COMMANDS)
      for (const [name, flag] of Object.entries(c.flags)) {
        if (KNOWN_CLASHES[name] === command) continue;
        const mine = { command, kind: flagKind(flag), help: flag.help };
        const first = seen.get(name);
        if (!first) seen.set(name, mine);
        else if (
          (first.kind !== mine.kind || first.help !== mine.help) &&
          !problems.some((p) => p.startsWith(`--${name}:`))
        )
          problems.push(
            `--${name}: ${first.command} ${first.kind} "${first.help}" vs ${command} ${mine.kind} "${mine.help}"`,
          );
      }
    assert.deepStrictEqual(problems, []);
  });

  it("the known clashes are still clashes (an entry that no longer clashes goes)", () => {
    for (const [name, command] of Object.entries(KNOWN_CLASHES)) {
      const own = COMMANDS.find(([c]) => c === command)![1].flags[name];
      const other = COMMANDS.find(([c, t]) => c !== command && name in t.flags)![1].flags[name];
      assert.ok(own && other, name);
      assert.notStrictEqual(`${flagKind(own)} ${own.help}`, `${flagKind(other)} ${other.help}`, name);
    }
  });

  it("every command that changes AWS takes --dry-run, every command that reports takes --json", () => {
    assert.deepStrictEqual(
      COMMANDS.filter(([, c]) => c.changesAws)
        .map(([n]) => n)
        .sort(),
      [...CHANGES_AWS].sort(),
    );
    assert.deepStrictEqual(
      COMMANDS.filter(([, c]) => c.reports)
        .map(([n]) => n)
        .sort(),
      [...REPORTS].sort(),
    );
    for (const name of CHANGES_AWS) {
      const flag = COMMANDS.find(([n]) => n === name)![1].flags["dry-run"];
      assert.ok(flag?.type === "boolean", `${name} has no --dry-run`);
    }
    for (const name of REPORTS) {
      const flag = COMMANDS.find(([n]) => n === name)![1].flags.json;
      assert.ok(flag?.type === "boolean", `${name} has no --json`);
    }
  });

  it("--timeout-seconds bounds the whole command in every command that has it", () => {
    for (const [name, c] of COMMANDS) {
      const flag = c.flags["timeout-seconds"];
      if (flag) assert.strictEqual(flag.help, "the whole command's time limit, every AWS call included", name);
    }
  });

  it("--encoding takes utf-8 as utf8 (any case), latin-1 as latin1, and names what it allows otherwise", () => {
    for (const [name, c] of COMMANDS) {
      const encoding = c.flags.encoding;
      if (!encoding) continue;
      const parse = (raw: string) => encoding.parse!.parse(raw, "encoding");
      assert.deepStrictEqual(
        ["utf-8", "UTF8", "utf8", "Latin-1", "latin1"].map(parse),
        ["utf8", "utf8", "utf8", "latin1", "latin1"],
        name,
      );
      assert.throws(() => parse("ascii"), /^Error: --encoding ascii: one of utf8, latin1$/);
    }
  });
});
