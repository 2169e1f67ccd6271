/**
 * The docs check (`npm run docs:check`): every ```console block of README.md, CHANGELOG.md and docs/*.md is run and
 * its output compared, and every link between the pages must resolve (file and #anchor).
 *
 * A console block is a list of `$ command` lines (a line ending in `\` continues on the next), each followed by the
 * output it prints (stdout and stderr, in the order written). A line that is only `…` stands for any number of
 * lines. The blocks of one page run in order, in one shell, in one temporary folder that holds a copy of the
 * repository, so a later command may use what an earlier one wrote (`out/…`) or defined (a shell function). The exit
 * code is not compared: examples of refusals exit 1 or 2 on purpose.
 *
 * Usage: npm run docs:check [-- PAGE …] [--links-only]. Exit 0 all match, 1 a mismatch or a broken link, 2 bad usage.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const ROOT = path.resolve(__dirname, "..", "..");
const COMMAND_TIMEOUT_MS = 180_000;
/** Entries of the repository a page's temporary folder does not get: its history, output and caches. */
const NOT_COPIED = new Set([".git", "out", ".bench-cache"]);

export interface Example {
  /** 1-based line of the `$` in the page. */
  line: number;
  command: string;
  expected: string[];
}

/** The examples of a Markdown page, in order: every `$ command` of every ```console block. */
export function parseExamples(markdown: string): Example[] {
  const lines = markdown.split(/\r?\n/);
  const examples: Example[] = [];
  let inConsole = false;
  let fence = "";
  let current: Example | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const trimmed = raw.trim();
    if (!inConsole) {
      const open = /^(\s*)(`{3,})console\s*$/.exec(raw);
      if (open) {
        inConsole = true;
        fence = open[2];
      }
      continue;
    }
    if (trimmed === fence) {
      inConsole = false;
      current = undefined;
      continue;
    }
    if (trimmed.startsWith("$ ")) {
      let command = trimmed.slice(2);
      const line = i + 1;
      while (command.endsWith("\\") && i + 1 < lines.length) command = command.slice(0, -1) + " " + lines[++i].trim();
      current = { line, command, expected: [] };
      examples.push(current);
      continue;
    }
    if (!current) throw new Error(`line ${i + 1}: a console block's output comes after a "$ command" line`);
    current.expected.push(raw);
  }
  if (inConsole) throw new Error("a ```console block is never closed");
  return examples;
}

/** Text as lines for comparison: indentation common to all lines removed, line ends trimmed, no trailing empty lines. */
export function normalise(lines: string[]): string[] {
  const out = lines.map((l) => l.replace(/\s+$/, ""));
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  while (out.length > 0 && out[0] === "") out.shift();
  const indents = out.filter((l) => l !== "").map((l) => /^ */.exec(l)![0].length);
  const common = indents.length > 0 ? Math.min(...indents) : 0;
  return out.map((l) => l.slice(common));
}

const ELISION = "…";

/**
 * Whether `actual` matches `expected`, where an expected line that is only `…` matches any number of lines.
 * Returns undefined on a match, else the 0-based index of the first expected line that could not be matched.
 */
export function firstMismatch(expected: string[], actual: string[]): number | undefined {
  const e = normalise(expected);
  const a = normalise(actual);
  // reach[i][j]: the first i expected lines match the first j actual lines.
  let reach: boolean[] = new Array(a.length + 1).fill(false);
  reach[0] = true;
  let furthest = 0;
  for (let i = 0; i < e.length; i++) {
    const next: boolean[] = new Array(a.length + 1).fill(false);
    const wild = e[i].trim() === ELISION;
    let any = false;
    for (let j = 0; j <= a.length; j++) {
      if (wild) next[j] = reach[j] || (j > 0 && next[j - 1]);
      else next[j] = j > 0 && reach[j - 1] && a[j - 1] === e[i];
      any ||= next[j];
    }
    if (!any) return i;
    furthest = i + 1;
    reach = next;
  }
  return reach[a.length] ? undefined : furthest;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (but `-` and `_`), spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a page has: one per heading, repeated ones numbered as GitHub does (`-1`, `-2`). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence: string | undefined;
  for (const line of markdown.split(/\r?\n/)) {
    const f = /^\s*(`{3,})/.exec(line);
    if (f) {
      if (fence === undefined) fence = f[1];
      else if (line.trim() === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Links of a page outside code (fenced blocks and `inline code`): [text](target). */
export function links(markdown: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  let fence: string | undefined;
  markdown.split(/\r?\n/).forEach((line, i) => {
    const f = /^\s*(`{3,})/.exec(line);
    if (f) {
      if (fence === undefined) fence = f[1];
      else if (line.trim() === fence) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const text = line.replace(/`[^`]*`/g, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ line: i + 1, target: m[1] });
  });
  return out;
}

/** Broken links between pages: a relative target whose file is missing, or whose #anchor that file does not have. */
export function brokenLinks(page: string): string[] {
  const text = fs.readFileSync(page, "utf8");
  const problems: string[] = [];
  for (const { line, target } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [file, anchor] = target.split("#", 2);
    const resolved = file === "" ? page : path.resolve(path.dirname(page), decodeURIComponent(file));
    const where = `${path.relative(ROOT, page)}:${line}`;
    if (!fs.existsSync(resolved)) {
      problems.push(`${where}: link ${target}: no file ${path.relative(ROOT, resolved)}`);
      continue;
    }
    if (anchor !== undefined && anchor !== "") {
      if (!resolved.endsWith(".md"))
        problems.push(`${where}: link ${target}: an anchor into a file that is not Markdown`);
      else if (!anchors(fs.readFileSync(resolved, "utf8")).has(anchor))
        problems.push(`${where}: link ${target}: ${path.relative(ROOT, resolved)} has no heading #${anchor}`);
    }
  }
  return problems;
}

export function pages(): string[] {
  const docs = path.join(ROOT, "docs");
  const inDocs = fs.existsSync(docs)
    ? fs
        .readdirSync(docs)
        .filter((f) => f.endsWith(".md"))
        .sort()
        .map((f) => path.join(docs, f))
    : [];
  const top = ["README.md", "CHANGELOG.md"].map((f) => path.join(ROOT, f)).filter((f) => fs.existsSync(f));
  return [...top, ...inDocs];
}

/**
 * A temporary folder that is a copy of the repository (node_modules linked, no out/ or caches), so that paths the
 * tools print relative to their own root read as they do in a checkout.
 */
function scratchRepository(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-docs-"));
  for (const entry of fs.readdirSync(ROOT)) {
    if (NOT_COPIED.has(entry)) continue;
    if (entry === "node_modules") fs.symlinkSync(fs.realpathSync(path.join(ROOT, entry)), path.join(dir, entry));
    else fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  }
  return dir;
}

/**
 * Runs a page's examples in one shell, in order (so a function or variable a command defines serves the next), each
 * command's output and exit code ended by a marker line, and compares each output with the page's.
 */
function runPage(page: string, out: (line: string) => void): number {
  const examples = parseExamples(fs.readFileSync(page, "utf8"));
  if (examples.length === 0) return 0;
  const dir = scratchRepository();
  const marker = `sendtime-docs-check-${process.pid}-${Date.now()}`;
  const script = [
    "exec 2>&1 </dev/null",
    ...examples.flatMap((ex) => [ex.command, `printf '\\n${marker} %d\\n' $?`]),
  ].join("\n");
  const started = Date.now();
  let failures = 0;
  try {
    const r = spawnSync("bash", ["-c", script], {
      cwd: dir,
      encoding: "utf8",
      timeout: COMMAND_TIMEOUT_MS * examples.length,
      maxBuffer: 256 * 1024 * 1024,
      // No AWS credentials or endpoints from the caller's shell: an example must not reach AWS.
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AWS_"))),
    });
    const name = path.relative(ROOT, page);
    if (r.error) {
      out(`FAIL ${name}: ${r.error.message}`);
      return 1;
    }
    const parts = r.stdout.split(new RegExp(`^${marker} (\\d+)$`, "m"));
    examples.forEach((ex, i) => {
      const where = `${name}:${ex.line}`;
      if (2 * i + 1 >= parts.length) {
        failures++;
        out(`FAIL ${where}: the shell ended before this command ran`);
        return;
      }
      const actual = parts[2 * i].split(/\r?\n/);
      const code = parts[2 * i + 1];
      const at = firstMismatch(ex.expected, actual);
      if (at === undefined) {
        out(`ok   ${where} (exit ${code})`);
        return;
      }
      failures++;
      const expected = normalise(ex.expected);
      out(`FAIL ${where} (exit ${code}): $ ${ex.command}`);
      out(`  expected line ${at + 1}: ${expected[at] ?? "(end of output)"}`);
      out(`  actual output:`);
      for (const l of normalise(actual)) out(`    ${l}`);
    });
    out(`     ${name}: ${examples.length} examples in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return failures;
}

export function main(argv: string[], out: (line: string) => void): number {
  const linksOnly = argv.includes("--links-only");
  const named = argv.filter((a) => a !== "--links-only");
  const unknown = named.find((a) => a.startsWith("--"));
  if (unknown) {
    out(`error: ${unknown} is not a docs:check flag (allowed: --links-only, and page paths)`);
    return 2;
  }
  const all = pages();
  const chosen = named.length === 0 ? all : named.map((p) => path.resolve(p));
  const missing = chosen.find((p) => !fs.existsSync(p));
  if (missing) {
    out(`error: ${missing}: no such page`);
    return 2;
  }
  let failures = 0;
  for (const page of all)
    for (const problem of brokenLinks(page)) {
      failures++;
      out(`FAIL ${problem}`);
    }
  if (!linksOnly)
    for (const page of chosen) {
      try {
        failures += runPage(page, out);
      } catch (e) {
        failures++;
        out(`FAIL ${path.relative(ROOT, page)}: ${(e as Error).message}`);
      }
    }
  out(failures === 0 ? "docs:check: every example and link holds" : `docs:check: ${failures} failed`);
  return failures === 0 ? 0 : 1;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2), (l) => console.log(l));
