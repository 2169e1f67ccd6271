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

/** A user's project: an empty package that depends on the tarball (and on `extra` packages, as `name@version`). */
export function installAsDependency(tarball: string, dir: string, extra: string[] = []): string {
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "user-project", private: true }));
  npm(["install", ...INSTALL_FLAGS, tarball, ...extra], dir);
  return dir;
}
