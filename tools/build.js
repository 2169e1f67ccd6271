/**
 * `npm run build`: what the repository publishes, built from the same sources the tests run.
 *
 * - `policy`: the sendtime-guard pack as one CommonJS file, policy/dist/index.js (package.json `main` of policy/).
 *   esbuild bundles the pack's own files and the pure constants and key builders it reads from infra/core (naming,
 *   quotas, the ledger's keys, the consent constants), so the published pack needs nothing outside its folder;
 *   @pulumi/policy and @pulumi/pulumi stay outside the bundle, installed as the pack's dependencies (the policy
 *   runner and the analyzer's gRPC server are theirs). infra/core stays the one place those facts live.
 *
 * - `library`: sendtime/infra, the Sendtime component for a Pulumi program of your own, compiled by TypeScript
 *   (tsconfig.build.json: JavaScript and .d.ts in dist/infra, infra/ without its program index.ts), as package.json
 *   `exports` names it: a dependency is not compiled by the user's ts-node. The handlers are compiled with it: the
 *   component bundles them (esbuild, a dependency) when a program creates the functions, as it does in the repository.
 *
 * `node tools/build.js [policy] [library]` builds the named targets (all without a name) and prints one line each.
 * `node tools/build.js policy-lock` rewrites policy/npm-shrinkwrap.json (after a dependency change): the root
 * package-lock.json pruned to the pack's dependencies, offline, so the pack installs exactly the versions the
 * repository tests with (and from the npm cache `npm ci` filled).
 */
"use strict";

const { execFileSync } = require("child_process");
const esbuild = require("esbuild");
const fs = require("fs");
const os = require("os");
const path = require("path");

const ROOT = path.join(__dirname, "..");

/** The pack's bundle: Node 22 is the oldest Node @pulumi/pulumi 3.276 runs on (package.json engines). */
function buildPolicyPack() {
  const outfile = path.join(ROOT, "policy", "dist", "index.js");
  fs.rmSync(path.dirname(outfile), { recursive: true, force: true });
  const result = esbuild.buildSync({
    entryPoints: [path.join(ROOT, "policy", "index.ts")],
    bundle: true,
    platform: "node",
    target: "node22",
    format: "cjs",
    outfile,
    external: ["@pulumi/policy", "@pulumi/pulumi"],
    absWorkingDir: ROOT,
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
  });
  const inputs = Object.keys(result.metafile.inputs);
  const fromCore = inputs.filter((f) => f.startsWith("infra/"));
  const bytes = fs.statSync(outfile).size;
  return `policy/dist/index.js: ${inputs.length - fromCore.length} pack files + ${fromCore.length} from infra/core, ${bytes.toLocaleString("en-US")} bytes`;
}

function buildLibrary() {
  const outDir = path.join(ROOT, "dist", "infra");
  fs.rmSync(outDir, { recursive: true, force: true });
  const tsc = require.resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", path.join(ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  const files = fs.readdirSync(outDir, { recursive: true }).filter((f) => f.endsWith(".js"));
  return `dist/infra: ${files.length} modules with their .d.ts (exports "sendtime/infra": dist/infra/sendtime.js)`;
}

/** The pack's lockfile: npm keeps every locked version that still satisfies the pack's package.json, and drops the rest. */
function lockPolicyPack() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-guard-lock-"));
  try {
    fs.copyFileSync(path.join(ROOT, "package-lock.json"), path.join(dir, "package-lock.json"));
    fs.copyFileSync(path.join(ROOT, "policy", "package.json"), path.join(dir, "package.json"));
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const args = ["install", "--package-lock-only", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"];
    execFileSync(npm, args, { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
    const lock = fs.readFileSync(path.join(dir, "package-lock.json"), "utf8");
    fs.writeFileSync(path.join(ROOT, "policy", "npm-shrinkwrap.json"), lock);
    const count = Object.keys(JSON.parse(lock).packages).length - 1;
    return `policy/npm-shrinkwrap.json: ${count} packages, each at the root lockfile's version`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const TARGETS = { policy: buildPolicyPack, library: buildLibrary };
const TASKS = { ...TARGETS, "policy-lock": lockPolicyPack };

function main(names) {
  const unknown = names.filter((n) => !(n in TASKS));
  if (unknown.length) {
    console.error(`error: unknown build target ${unknown.join(", ")} (one of: ${Object.keys(TASKS).join(", ")})`);
    return 2;
  }
  for (const name of names.length ? names : Object.keys(TARGETS)) {
    const started = Date.now();
    const line = TASKS[name]();
    console.log(`${line} (${Date.now() - started} ms)`);
  }
  return 0;
}

module.exports = { buildPolicyPack, buildLibrary, lockPolicyPack };

if (require.main === module) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (e) {
    // esbuild has printed the errors themselves (logLevel warning).
    console.error(`error: build failed: ${e.message.split("\n")[0]}`);
    process.exitCode = 1;
  }
}
