/**
 * Packs a folder of the repository with `npm pack` (its `prepack` builds what it ships) and installs the tarball
 * outside the repository, where nothing of the repository can be resolved: what a user (or Pulumi Cloud, for a
 * published policy pack) gets. Installs come from the npm cache `npm ci` filled (`--prefer-offline`): the network
 * only for what is not there.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ROOT } from "./cli";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const INSTALL_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev"];

function npm(args: string[], cwd: string): string {
  return execFileSync(NPM, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
}

/** A fresh folder under the system's temporary folder, with no node_modules on the way up to it. */
export function emptyFolder(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  for (let up = dir; up !== path.dirname(up); up = path.dirname(up))
    if (fs.existsSync(path.join(path.dirname(up), "node_modules")))
      throw new Error(`${path.dirname(up)} has a node_modules: packages there would resolve from ${dir}`);
  return dir;
}

/** `npm pack` of a folder of the repository: the tarball's path. */
export function pack(folder: string, into: string): string {
  const out = npm(["pack", "--pack-destination", into], path.join(ROOT, folder));
  const file = out.trim().split("\n").pop()!;
  return path.join(into, file);
}

/** The files a tarball holds (paths inside `package/`). */
export function tarballFiles(tarball: string): string[] {
  return execFileSync("tar", ["tzf", tarball], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((f) => f.replace(/^package\//, ""))
    .sort();
}

/**
 * A published policy pack as the Pulumi CLI installs it: the tarball extracted into an empty folder and its
 * dependencies installed there (its npm-shrinkwrap.json is the lockfile).
 */
export function installExtracted(tarball: string, dir: string): string {
  execFileSync("tar", ["xzf", tarball, "--strip-components=1", "-C", dir]);
  npm(["install", ...INSTALL_FLAGS], dir);
  return dir;
}

/**
 * A project started from pulumi-template/ (what `pulumi new` copies) whose `sendtime` dependency is the tarball, and
 * its dependencies installed. Its lockfile starts as the repository's: npm keeps the versions locked there that the
 * project's package.json still needs, so the install is the tested versions, from the npm cache.
 */
export function installTemplate(tarball: string, dir: string): string {
  const template = path.join(ROOT, "pulumi-template");
  for (const file of fs.readdirSync(template)) fs.copyFileSync(path.join(template, file), path.join(dir, file));
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  pkg.name = "shop";
  pkg.dependencies.sendtime = `file:${tarball}`;
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  fs.copyFileSync(path.join(ROOT, "package-lock.json"), path.join(dir, "package-lock.json"));
  npm(["install", ...INSTALL_FLAGS.filter((f) => f !== "--omit=dev")], dir);
  return dir;
}
