/**
 * `npm test`: the type check, the format check and the lint (eslint.config.mjs: the promise rules) run beside mocha
 * instead of before it. The machine has 2 cores and mocha's run is single-threaded, so the checks' time (about 20 s
 * cold, and the lint's 40 s of CPU) mostly overlaps the suite's.
 * Mocha's output is streamed as it comes; the checks' output, which is empty when they pass, follows it; the last line
 * is `N passed, N failed` with the checks' verdict. Exit 0 only when both checks and every test pass.
 */
"use strict";

const { spawn } = require("child_process");

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Runs `npm run -s <script>` to the end, its output kept: resolves {name, code, output}. */
function check(script) {
  return new Promise((resolve) => {
    const child = spawn(npm, ["run", "-s", script], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (code) => resolve({ name: script, code: code ?? 1, output }));
  });
}

/** Runs mocha with the project's config, its output streamed and read for its summary. */
function mocha() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [require.resolve("mocha/bin/mocha.js"), "tests/**/*.test.ts"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let tail = "";
    child.stdout.on("data", (d) => {
      process.stdout.write(d);
      tail = (tail + d).slice(-4096);
    });
    child.on("close", (code) => {
      const count = (word) => Number((new RegExp(`(\\d+) ${word}`).exec(tail) ?? [0, 0])[1]);
      resolve({ code: code ?? 1, passed: count("passing"), failed: count("failing") });
    });
  });
}

async function main() {
  const checks = Promise.all([check("typecheck"), check("format:check"), check("lint")]);
  const tests = await mocha();
  const done = await checks;
  for (const c of done)
    if (c.code !== 0 || c.output.trim()) process.stdout.write(`\n${c.name} (exit ${c.code}):\n${c.output}`);
  const verdict = done.map((c) => `${c.name} ${c.code === 0 ? "ok" : "FAILED"}`).join(", ");
  process.stdout.write(`\n${verdict}\n${tests.passed} passed, ${tests.failed} failed\n`);
  process.exit(tests.code === 0 && done.every((c) => c.code === 0) ? 0 : 1);
}

main();
