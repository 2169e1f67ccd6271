/**
 * The launcher as it was when the every-timing-option target was set ("the 1M-row dry run with 2 steps and every
 * option on stays within 1.3× of today's"): commit BASELINE_COMMIT, the last before the work on the timing options.
 * Its files come out of this repository's own history (`git archive`) into the bench cache, with its own locked
 * dependencies (`npm ci`, from the npm registry), once; the bench then runs its dry run side by side with today's.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

export const BASELINE_COMMIT = "43bb9aff6aec01e521fd14199d75c0f30410a403";
const NPM_CI_MS = 10 * 60_000;

/**
 * The bench's send over `file`, the same for the baseline and today's dry runs (so that they are compared on one
 * campaign): its campaign, list, template, one-time rule with a second step, and `--now`.
 */
export function benchSendFlags(file: string): string[] {
  return [
    ...["--campaign", "bench", "--recipients", file, "--template", "welcome"],
    ...["--date", "2026-12-01", "--hour", "9", "--step", "+3d:followup", "--now", "2026-11-29T00:00:00Z"],
  ];
}

/** The baseline's flags for its plain dry run: the bench's dry run as that commit's own bench ran it. */
export function baselineDryRun(file: string, out: string): string[] {
  return [...benchSendFlags(file), "--dry-run", "--out", out, "--json"];
}

/**
 * The baseline's folder in `cache`, set up on first use; or why it cannot be (no git history with the commit, as in a
 * shallow clone or a tarball, or no npm registry), as one line.
 */
export function baselineCheckout(root: string, cache: string): { dir: string } | { unavailable: string } {
  const dir = path.join(cache, `baseline-${BASELINE_COMMIT.slice(0, 7)}`);
  const ready = path.join(dir, ".ready");
  if (fs.existsSync(ready)) return { dir };
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  process.stderr.write(
    `setting up the baseline (commit ${BASELINE_COMMIT.slice(0, 7)}) in ${path.relative(root, dir)} …\n`,
  );
  const archive = spawnSync("git", ["-C", root, "archive", "--format=tar", BASELINE_COMMIT], { maxBuffer: 1 << 30 });
  if (archive.status !== 0)
    return {
      unavailable: `git archive ${BASELINE_COMMIT.slice(0, 7)} failed: ${archive.error?.message ?? firstLine(archive.stderr)}`,
    };
  const untar = spawnSync("tar", ["-x", "-f", "-", "-C", dir], { input: archive.stdout });
  if (untar.status !== 0)
    return { unavailable: `unpacking the baseline failed: ${untar.error?.message ?? firstLine(untar.stderr)}` };
  // Bounded: without a registry npm can retry for many minutes. A failed install is started over on the next run.
  const install = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: dir,
    encoding: "utf8",
    timeout: NPM_CI_MS,
  });
  if (install.status !== 0)
    return { unavailable: `npm ci in the baseline failed: ${install.error?.message ?? firstLine(install.stderr)}` };
  fs.writeFileSync(ready, "");
  return { dir };
}

function firstLine(text: Buffer | string | null): string {
  return (
    String(text ?? "")
      .trim()
      .split("\n")[0] || "(no message)"
  );
}
