/**
 * Every command's --help is generated from its one flag table, and the parser takes its options from the same table:
 * help ≤ 50 lines, every accepted flag in the help, every flag the help names accepted, usage lines runnable as written.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { Command } from "../../../../scripts/lib/cli/flags";
import { helpText } from "../../../../scripts/lib/cli/flags";
import { parseFlags } from "../../../../scripts/lib/cli/run";
import { ROOT, runScript } from "../../../helpers/cli";

const scripts: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts;
/**
 * The npm scripts that run a command (bench takes no flags: its settings are environment variables; sendtime
 * dispatches to the others: tests/scripts/sendtime.test.ts).
 */
const COMMANDS = Object.entries(scripts)
  .map(([name, line]) => [name, /^ts-node --transpile-only (scripts\/[a-z-]+\.ts)$/.exec(line)?.[1]] as const)
  .filter((e): e is readonly [string, string] => e[1] !== undefined && e[0] !== "bench" && e[0] !== "sendtime");

const EMPTY_FILE = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-help-")), "empty.yaml");
fs.writeFileSync(EMPTY_FILE, "");

/** The values of a command line that does not ask for --help. */
function valuesOf(argv: string[], command: Command): Record<string, unknown> {
  const parsed = parseFlags(argv, command);
  assert.ok(!parsed.help);
  return parsed.values as Record<string, unknown>;
}

function commandOf(file: string): Command {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const command = require(path.join(ROOT, file)).COMMAND as Command | undefined;
  assert.ok(command, `${file} exports no COMMAND (its flag table)`);
  return command;
}

/** The flags a help text names, outside `code spans` (those quote other commands, such as `pulumi stack output --json`). */
function flagsNamed(help: string): Set<string> {
  return new Set([...help.replace(/`[^`]*`/gs, "").matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]));
}

describe("every command's --help, from its flag table", () => {
  it("covers every command of package.json", () => {
    assert.ok(COMMANDS.length >= 11, `found ${COMMANDS.map((c) => c[0]).join(", ")}`);
    for (const [name, file] of COMMANDS) assert.strictEqual(commandOf(file).script, name, file);
  });

  for (const [name, file] of COMMANDS) {
    describe(name, () => {
      it("is at most 50 lines of at most 140 columns, ending with where the reference is", () => {
        const lines = helpText(commandOf(file)).trimEnd().split("\n");
        assert.ok(lines.length <= 50, `${lines.length} lines`);
        for (const line of lines) assert.ok(line.length <= 140, `${line.length} columns: ${line}`);
        const reference = /^Reference: (docs\/[a-z-]+\.md)$/.exec(lines[lines.length - 1]);
        assert.ok(reference, lines[lines.length - 1]);
        assert.ok(fs.existsSync(path.join(ROOT, reference[1])), `${reference[1]} does not exist`);
        assert.ok(lines.some((l) => l.startsWith("Exit codes: 0 ")));
      });

      it("names every flag it accepts, and accepts every flag it names", () => {
        const command = commandOf(file);
        const named = flagsNamed(helpText(command));
        const accepted = Object.keys(command.flags);
        assert.deepStrictEqual(
          accepted.filter((f) => !named.has(f)),
          [],
          "accepted but not in the help",
        );
        assert.deepStrictEqual(
          [...named].filter((f) => !accepted.includes(f) && f !== "help"),
          [],
          "in the help but refused",
        );
      });

      it("parses every flag of its table, each with its value, and refuses one it does not have", () => {
        const command = commandOf(file);
        for (const [flag, spec] of Object.entries(command.flags)) {
          // --config names a file it reads: an empty one. A typed flag takes its parser's example; the value is what
          // its parser makes of it.
          const v1 = flag === "config" ? EMPTY_FILE : (spec.parse?.example ?? "v1");
          const v2 = spec.parse?.example ?? "v2";
          const argv =
            spec.type === "boolean" ? [`--${flag}`] : [`--${flag}`, v1, ...(spec.multiple ? [`--${flag}`, v2] : [])];
          const values = valuesOf(argv, command);
          const typed = (v: string) => (spec.parse && flag !== "config" ? spec.parse.parse(v, flag) : v);
          const expected = spec.type === "boolean" ? true : spec.multiple ? [typed(v1), typed(v2)] : typed(v1);
          assert.deepStrictEqual(values[flag], expected, flag);
        }
        assert.deepStrictEqual(parseFlags(["--help"], command), { help: true });
        assert.throws(() => parseFlags(["--no-such-flag"], command), /unknown flag --no-such-flag/);
        // A misspelt flag gets the nearest one; a bare word (npm's `--` left out) says how flags are given.
        // A name over 4 letters, or the longest when all are short (demo: --out, --now; `--oux` is still nearest --out).
        const names = Object.keys(command.flags);
        const first =
          names.find((f) => f.length > 4) ?? names.reduce((longest, f) => (f.length > longest.length ? f : longest));
        const misspelt = first.slice(0, -1) + (first.endsWith("x") ? "y" : "x");
        assert.throws(
          () => parseFlags([`--${misspelt}`], command),
          (e: Error) => e.message.includes(`(did you mean --${first}?)`),
        );
        assert.throws(() => parseFlags(["word"], command), /unexpected argument "word": flags start with --/);
      });

      it("has usage lines runnable as written (npm run -s <script> --, and that script runs this file)", () => {
        const usage = helpText(commandOf(file))
          .split("\n")
          .filter((l) => /^(Usage:| {6}) npm run/.test(l));
        assert.ok(usage.length >= 1);
        for (const line of usage) {
          const m = /^(?:Usage:| {6}) npm run -s ([a-z-]+) -- /.exec(line);
          assert.ok(m, line);
          assert.strictEqual(scripts[m[1]], `ts-node --transpile-only ${file}`, line);
        }
      });
    });
  }

  it("size-window documents --template only now that it takes it (the drift the issue found: documented, refused)", () => {
    const help = helpText(commandOf("scripts/size-window.ts"));
    assert.ok(flagsNamed(help).has("template"));
    assert.ok("template" in commandOf("scripts/size-window.ts").flags);
  });

  it("the real command prints that text and exits 0 (npm's way of running it)", () => {
    const r = runScript("scripts/size-window.ts", ["--help"]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.stdout, helpText(commandOf("scripts/size-window.ts")));
  });
});
