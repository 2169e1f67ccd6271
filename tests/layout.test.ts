import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";

/**
 * tests/ mirrors the source tree: the test of infra/core/zones/phone.ts is tests/infra/core/zones/phone.test.ts, a
 * command's test sits beside the command's path (tests/scripts/launch-campaign.test.ts), a test of several modules
 * goes where its main subject lives. Outside the mirror: tests/helpers, tests/fixtures, tests/docs, tests/ci, tests/packages (npm run test:packages) and
 * the cross-cutting tests at the top of tests/ (layers, function length, this one).
 */
const ROOT = path.resolve(__dirname, "..");
const SOURCE_ROOTS = ["infra", "policy", "scripts"];
const OUTSIDE_THE_MIRROR = ["helpers", "fixtures", "docs", "ci", "packages"];

/** Every file under `dir`, as a path relative to the repository with forward slashes. */
function filesUnder(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(root, rel));
    else out.push(rel);
  }
  return out;
}

/** The source files by base name (`csv` → ["scripts/lib/recipients/csv.ts"]). */
function sourcesByName(root: string): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const top of SOURCE_ROOTS)
    for (const file of filesUnder(root, top).filter((f) => f.endsWith(".ts"))) {
      const name = path.posix.basename(file, ".ts");
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
  return byName;
}

/** The folders of the modules a test file imports (`"../../scripts/enrol"` from tests/scripts → `scripts`). */
function importedFolders(file: string, text: string): Set<string> {
  const folders = new Set<string>();
  for (const [, spec] of text.matchAll(/["'](\.\.?\/[^"'\s]+)["']/g))
    folders.add(path.posix.dirname(path.posix.join(path.posix.dirname(file), spec)));
  return folders;
}

/**
 * One line for each file under tests/ that is out of place: in a folder that mirrors no source folder, or named
 * after the one source file of that name, which lives in another folder, while importing nothing from its own
 * folder (a command's test imports the command: tests/scripts/promises.test.ts runs scripts/enrol.ts).
 */
export function misplaced(
  root: string,
  testFiles: string[],
  read = (file: string) => fs.readFileSync(path.join(root, file), "utf8"),
): string[] {
  const byName = sourcesByName(root);
  const problems: string[] = [];
  for (const file of testFiles) {
    const parts = file.split("/");
    if (parts[0] !== "tests") throw new Error(`${file} is not under tests/`);
    if (parts.length === 2 || OUTSIDE_THE_MIRROR.includes(parts[1])) continue;
    const folder = parts.slice(1, -1).join("/");
    if (
      !SOURCE_ROOTS.includes(parts[1]) ||
      !fs.statSync(path.join(root, folder), { throwIfNoEntry: false })?.isDirectory()
    ) {
      problems.push(`${file}: tests/${folder} mirrors no source folder (${folder}/ does not exist)`);
      continue;
    }
    const name = path.posix.basename(file).replace(/\.test\.ts$/, "");
    const sources = byName.get(name) ?? [];
    const elsewhere = sources.length === 1 && path.posix.dirname(sources[0]) !== folder;
    if (file.endsWith(".test.ts") && elsewhere && !importedFolders(file, read(file)).has(folder))
      problems.push(`${file}: its subject ${sources[0]} lives in ${path.posix.dirname(sources[0])}/`);
  }
  return problems;
}

describe("tests/ mirrors the source tree", () => {
  it("every file under tests/ is in a folder that mirrors a source folder, or outside the mirror", () => {
    assert.deepStrictEqual(misplaced(ROOT, filesUnder(ROOT, "tests")), []);
  });

  it("names a test in a folder that mirrors nothing, and a test away from its one subject", () => {
    assert.deepStrictEqual(
      misplaced(
        ROOT,
        [
          "tests/scripts/lib/nowhere/a.test.ts",
          "tests/lib/b.test.ts",
          "tests/scripts/csv.test.ts",
          "tests/scripts/lib/recipients/csv.test.ts",
          "tests/helpers/anything/c.ts",
          "tests/scripts/promises.test.ts",
          "tests/top-level.test.ts",
        ],
        (file) =>
          file.endsWith("promises.test.ts")
            ? 'import { main } from "../../scripts/enrol";'
            : 'import "../../scripts/lib/recipients/csv";',
      ),
      [
        "tests/scripts/lib/nowhere/a.test.ts: tests/scripts/lib/nowhere mirrors no source folder (scripts/lib/nowhere/ does not exist)",
        "tests/lib/b.test.ts: tests/lib mirrors no source folder (lib/ does not exist)",
        "tests/scripts/csv.test.ts: its subject scripts/lib/recipients/csv.ts lives in scripts/lib/recipients/",
      ],
    );
  });
});
