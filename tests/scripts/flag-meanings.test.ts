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
import { ROOT, runMain } from "../helpers/cli";

const scripts: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts;
const COMMANDS: [string, Command][] = Object.entries(scripts)
  .map(([name, line]) => [name, /^ts-node --transpile-only (scripts\/[a-z-]+\.ts)$/.exec(line)?.[1]] as const)
  .filter((e): e is readonly [string, string] => e[1] !== undefined && e[0] !== "bench" && e[0] !== "sendtime")
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  .map(([name, file]) => [name, require(path.join(ROOT, file)).COMMAND as Command]);

/**
 * The flags renamed so that each name means one thing (they meant another thing in other commands), old → new, by
 * command: the old spelling is refused there, naming the new one.
 */
const RENAMED: [command: string, old: string, now: string][] = [
  ["import-pinpoint", "campaign", "campaign-file"],
  ["reschedule", "step", "step-number"],
  ["send-test", "to", "address"],
];

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
  // --put-sms-opt-outs puts numbers into the stack's SMS opt-out list.
  "import-pinpoint",
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

  it("a renamed flag: the new name in the table, the old one not, and the old spelling one line naming the new (exit 2)", async () => {
    for (const [command, old, now] of RENAMED) {
      const c = COMMANDS.find(([n]) => n === command)![1];
      assert.ok(now in c.flags && !(old in c.flags), command);
      assert.deepStrictEqual(c.renamed, { [old]: now }, command);
      // Another command still takes the old name, with its own meaning.
      assert.ok(
        COMMANDS.some(([n, t]) => n !== command && old in t.flags),
        `--${old} is in no other command`,
      );
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const main = require(path.join(ROOT, "scripts", `${command}.ts`)).main;
      for (const given of [[`--${old}`, "x"], [`--${old}=x`]]) {
        const r = await runMain(main, given);
        assert.strictEqual(r.code, 2, `${command} ${given.join(" ")}: ${r.stderr}`);
        assert.strictEqual(
          r.stderr,
          `error: --${old} is now --${now} in this command (--${old} means another thing elsewhere) (see --help)\n`,
        );
        assert.strictEqual(r.stdout, "");
      }
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
