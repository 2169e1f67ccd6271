/**
 * `npm test`: mocha runs the test files in parallel (`--parallel`, one worker per core, at least 2), and the type
 * check with the lint (eslint.config.mjs: the promise rules; one program for both, tools/types-and-lint.js) and the
 * format check run beside it. No test file depends on
 * another having run before it in the same process, or on running alone (tests/ keeps no state between files), so a
 * worker can take any file. Timings: docs/benchmarks.md, "npm test".
 * Mocha's output is streamed as it comes (in parallel, each file's as it ends); the checks' output, which is empty
 * when they pass, follows it; the last line is `N passed, N failed` with the checks' verdict (pending tests, if any,
 * are counted too). Exit 0 only when both checks and every test pass. SENDTIME_TEST_JOBS=1 runs mocha serially.
 */
"use strict";

const { spawn } = require("child_process");
const os = require("os");
const path = require("path");

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Runs `npm run -s <script>` (or `command`) to the end, its output kept: resolves {name, code, output}. */
function check(script, command = [npm, "run", "-s", script]) {
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code) => resolve({ name: script, code: code ?? 1, output }));
  });
}

/** Mocha's workers: SENDTIME_TEST_JOBS, or one per core and at least 2 (mocha's own default is cores − 1). */
function jobs() {
  const given = Number(process.env.SENDTIME_TEST_JOBS);
  return Number.isInteger(given) && given > 0 ? given : Math.max(2, os.availableParallelism());
}

/**
 * Mocha's counts from its output: the spec reporter's summary (a blank line, `  1403 passing (52s)`, then
 * `  1 pending` and `  2 failing` when there are any), the same serial and parallel. Whole lines only, so that no
 * test's title reads as one; the first such block, as the failures' messages (which could quote one) follow it. A
 * count that is not there is 0; no summary at all (mocha did not get to run) is null.
 */
function summary(output) {
  const m = /\n\n {2}(\d+) passing \(\S+\)\n(?: {2}(\d+) pending\n)?(?: {2}(\d+) failing\n)?/.exec(`\n${output}\n`);
  return m ? { passed: Number(m[1]), pending: Number(m[2] ?? 0), failed: Number(m[3] ?? 0) } : null;
}

/** Runs mocha with the project's config, its output streamed and read for its summary. */
function mocha() {
  const n = jobs();
  const parallel = n > 1 ? ["--parallel", "--jobs", String(n)] : [];
  return new Promise((resolve) => {
    // Node ≥ 22.1 keeps the V8 code of every module it loads in NODE_COMPILE_CACHE and reuses it in the next process:
    // the workers, the CLIs and the policy pack the tests start each load @pulumi/* and the AWS SDK (Node 20 ignores
    // it). In .cache/ (gitignored), as tsc's and prettier's state is, unless NODE_COMPILE_CACHE is set already.
    const cache = process.env.NODE_COMPILE_CACHE ?? path.join(__dirname, "..", ".cache", "node-compile");
    const child = spawn(process.execPath, [require.resolve("mocha/bin/mocha.js"), ...parallel, "tests/**/*.test.ts"], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, NODE_COMPILE_CACHE: cache },
    });
    let output = "";
    child.stdout.on("data", (d) => {
      process.stdout.write(d);
      output += d;
    });
    child.on("close", (code) => {
      resolve({ code: code ?? 1, counts: summary(output.replace(/\u001b\[[0-9;]*m/g, "")) });
    });
  });
}

async function main() {
  // The type check and the lint share one TypeScript program (tools/types-and-lint.js): `npm run typecheck` and
  // `npm run lint` in one process, at about half their CPU.
  const typesAndLint = check("typecheck+lint", [process.execPath, require.resolve("./types-and-lint")]);
  const checks = Promise.all([typesAndLint, check("format:check")]);
  const tests = await mocha();
  const done = await checks;
  for (const c of done)
    if (c.code !== 0 || c.output.trim()) process.stdout.write(`\n${c.name} (exit ${c.code}):\n${c.output}`);
  const verdict = done.map((c) => `${c.name} ${c.code === 0 ? "ok" : "FAILED"}`).join(", ");
  const counts = tests.counts;
  const line = !counts
    ? `mocha printed no summary (exit ${tests.code})`
    : `${counts.passed} passed, ${counts.failed} failed${counts.pending ? `, ${counts.pending} pending` : ""}`;
  process.stdout.write(`\n${verdict}\n${line}\n`);
  process.exit(tests.code === 0 && done.every((c) => c.code === 0) ? 0 : 1);
}

if (require.main === module) main();

module.exports = { summary };
