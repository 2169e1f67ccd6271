/**
 * Campaigns as files (--config FILE): a file plans byte for byte what its flags plan; flags on the command line win;
 * an unknown key or a wrong type is refused naming the key and the file; size-window reads the launcher's file;
 * import-pinpoint writes one that launches as its printed command does.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as launch } from "../../../../scripts/launch-campaign";
import { COMMAND as SIZE_WINDOW, main as sizeWindow } from "../../../../scripts/size-window";
import { readConfigFile } from "../../../../scripts/lib/cli/config-file";
import { LAUNCH_FLAGS } from "../../../../scripts/lib/cli/launch-flags";
import type { Flag } from "../../../../scripts/lib/cli/flags";
import { main as importPinpoint } from "../../../../scripts/import-pinpoint";
import { ROOT, runMain } from "../../../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-config-"));
const FILES = ["plan.jsonl", "rejects.csv", "notes.csv", "summary.json", "holdout.csv"];
const bytesOf = (dir: string) => Object.fromEntries(FILES.map((f) => [f, fs.readFileSync(path.join(dir, f))]));

/** The settings of one campaign, as flags. `dir` holds the list (list.csv) and the output folder (out). */
function flags(dir: string): string[] {
  return [
    ...["--campaign", "spring", "--recipients", path.join(dir, "list.csv"), "--template", "spring-{variant}"],
    ...["--date", "2026-03-20", "--hour", "9", "--minute", "30", "--default-timezone", "Europe/Paris"],
    ...["--step", "+3d:followup", "--step", "+12h"],
    ...["--variant", "A:45", "--variant", "B:45", "--holdout", "10"],
    ...["--quiet-hours", "21:00-08:00", "--quiet-days", "SUN", "--quiet", "delay"],
    ...["--missed", "next-day", "--now", "2026-03-10T12:00:00Z", "--out", path.join(dir, "out"), "--dry-run"],
    ...["--templates", "none"],
  ];
}
const YAML = `# a campaign kept in git
campaign: spring
recipients: list.csv
template: "spring-{variant}"
date: "2026-03-20"
hour: 9
minute: 30
defaultTimezone: Europe/Paris
steps: ["+3d:followup", "+12h"]
variants:
  - A:45
  - B:45
holdout: 10
quietHours: 21:00-08:00
quietDays: SUN
quiet: delay
missed: next-day
now: 2026-03-10T12:00:00Z
out: out
dryRun: true
templates: none
`;

function campaignDir(name: string, yaml = YAML): { dir: string; file: string } {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(ROOT, "tests/fixtures/campaign.csv"), path.join(dir, "list.csv"));
  const file = path.join(dir, "campaign.yaml");
  fs.writeFileSync(file, yaml);
  return { dir, file };
}

describe("campaign files (--config)", function () {
  this.timeout(60_000);

  it("a campaign file plans byte-identically to its flags (plan.jsonl, rejects.csv, notes.csv, summary.json, holdout.csv)", async () => {
    const { dir, file } = campaignDir("identical");
    const byFlags = await runMain(launch, flags(dir));
    assert.strictEqual(byFlags.code, 0, byFlags.stderr);
    const expected = bytesOf(path.join(dir, "out"));
    assert.ok(expected["plan.jsonl"].length > 0);
    const byFile = await runMain(launch, ["--config", file]);
    assert.strictEqual(byFile.code, 0, byFile.stderr);
    assert.strictEqual(byFile.stdout, byFlags.stdout);
    const got = bytesOf(path.join(dir, "out"));
    for (const f of FILES) assert.ok(got[f].equals(expected[f]), `${f} differs`);
    // The same file as JSON.
    const json = path.join(dir, "campaign.json");
    fs.writeFileSync(
      json,
      JSON.stringify({
        ...{
          campaign: "spring",
          recipients: "list.csv",
          template: "spring-{variant}",
          date: "2026-03-20",
          hour: 9,
          minute: 30,
        },
        ...{
          defaultTimezone: "Europe/Paris",
          steps: ["+3d:followup", "+12h"],
          variants: ["A:45", "B:45"],
          holdout: 10,
        },
        ...{
          quietHours: "21:00-08:00",
          quietDays: "SUN",
          quiet: "delay",
          missed: "next-day",
          now: "2026-03-10T12:00:00Z",
        },
        ...{ out: "out", dryRun: true, templates: "none" },
      }),
    );
    assert.strictEqual((await runMain(launch, ["--config", json])).code, 0);
    const fromJson = bytesOf(path.join(dir, "out"));
    for (const f of FILES) assert.ok(fromJson[f].equals(expected[f]), `${f} differs (JSON)`);
  });

  it("flags on the command line win over the file's keys; a repeated flag replaces the file's whole list", async () => {
    const { dir, file } = campaignDir("wins");
    const r = await runMain(launch, ["--config", file, "--hour", "10", "--step", "+1d", "--json"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const plan = fs
      .readFileSync(path.join(dir, "out", "plan.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    // a1 in America/New_York: Friday 2026-03-20 at 10:30 local (EDT, UTC-4; Python's zoneinfo) = 14:30Z, step 2 on
    // Saturday at the same local time = 2026-03-21T14:30Z (neither quiet: SUN, 21:00-08:00).
    assert.deepStrictEqual(
      plan.filter((row) => row.recipient_id === "a1").map((row) => [row.step, row.send_at, row.utc]),
      [
        [1, "2026-03-20T10:30:00", "2026-03-20T14:30:00.000Z"],
        [2, "2026-03-21T10:30:00", "2026-03-21T14:30:00.000Z"],
      ],
    );
    assert.strictEqual(JSON.parse(r.stdout).steps.length, 2, "the file's two later steps replaced by the one given");
  });

  it("an unknown key is refused (exit 2), naming the key and the file and the nearest known key", async () => {
    const { file } = campaignDir("unknown", YAML.replace("quietHours:", "quiteHours:"));
    const r = await runMain(launch, ["--config", file]);
    assert.strictEqual(r.code, 2);
    assert.strictEqual(
      r.stderr,
      `error: --config ${file}: unknown key "quiteHours" (did you mean "quietHours"?); the keys are the flags in camelCase (see --help)\n`,
    );
    const far = campaignDir("far", `${YAML}sendWhenever: true\n`).file;
    assert.match((await runMain(launch, ["--config", far])).stderr, /unknown key "sendWhenever"; the keys are/);
    // The singular of a list key is a misspelling too.
    const step = campaignDir("singular", YAML.replace("steps:", "step:")).file;
    assert.match((await runMain(launch, ["--config", step])).stderr, /unknown key "step" \(did you mean "steps"\?\)/);
  });

  it("a value of the wrong type names the key", async () => {
    const cases: [string, string, RegExp][] = [
      ["hour: 9", "hour: [9]", /key "hour": expected a string or a number \(H\), got a list/],
      ["dryRun: true", 'dryRun: "yes"', /key "dryRun": expected true or false, got "yes"/],
      [
        'steps: ["+3d:followup", "+12h"]',
        'steps: "+3d"',
        /key "steps": expected a list, e.g\. steps: \[.*\], got "\+3d"/,
      ],
      [
        "holdout: 10",
        "holdout: {percent: 10}",
        /key "holdout": expected a string or a number \(PERCENT\), got a mapping/,
      ],
      ["  - B:45", "  - {B: 45}", /key "variants": item 2 must be a string/],
    ];
    for (const [from, to, message] of cases) {
      const { file } = campaignDir(`type-${cases.findIndex((c) => c[0] === from)}`, YAML.replace(from, to));
      const r = await runMain(launch, ["--config", file]);
      assert.strictEqual(r.code, 2, to);
      assert.match(r.stderr, message);
      assert.ok(r.stderr.includes(file), "names the file");
    }
    const list = campaignDir("not-a-mapping", "- campaign: spring\n").file;
    assert.match((await runMain(launch, ["--config", list])).stderr, /expected a mapping of keys/);
    const missing = await runMain(launch, ["--config", path.join(tmp, "nope.yaml")]);
    assert.strictEqual(missing.code, 2);
    assert.match(missing.stderr, /--config .*nope\.yaml: no such file$/m);
  });

  it("size-window reads the launcher's file: its launch-only keys (template, dryRun, out, missed) are ignored, an unknown key is not", async () => {
    const { dir, file } = campaignDir("sizing");
    const byFile = await runMain(sizeWindow, ["--config", file, "--json"]);
    assert.strictEqual(byFile.code, 0, byFile.stderr);
    const sizingFlags = flags(dir).filter((_, i, a) => {
      const flag = a[a[i].startsWith("--") ? i : i - 1];
      return !["--template", "--missed", "--out", "--dry-run"].includes(flag);
    });
    const byFlags = await runMain(sizeWindow, [...sizingFlags, "--json"]);
    assert.strictEqual(byFlags.code, 0, byFlags.stderr);
    assert.strictEqual(byFile.stdout, byFlags.stdout);
    const bad = campaignDir("sizing-bad", `${YAML}schedulez: 5\n`).file;
    const r = await runMain(sizeWindow, ["--config", bad]);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /unknown key "schedulez" \(did you mean "schedules"\?\)/);
  });

  it("import-pinpoint writes DIR/campaign.yaml; a dry run from it plans what the printed command plans, byte for byte", async () => {
    const out = path.join(tmp, "pinpoint");
    const FIXTURES = path.join(ROOT, "tests/fixtures/pinpoint");
    const imported = await runMain(importPinpoint, [
      ...["--endpoints", path.join(FIXTURES, "export"), "--campaign-file", path.join(FIXTURES, "campaign-ab.json")],
      ...["--out", out, "--json"],
    ]);
    assert.strictEqual(imported.code, 0, imported.stderr);
    const campaign = JSON.parse(imported.stdout).campaign;
    assert.strictEqual(campaign.file, path.join(out, "campaign.yaml"));
    const now = ["--now", "2026-11-30T12:00:00Z", "--dry-run"];
    const byCommand = await runMain(launch, [...campaign.command, ...now, "--out", path.join(out, "launch")]);
    assert.strictEqual(byCommand.code, 0, byCommand.stderr);
    const expected = bytesOf(path.join(out, "launch"));
    const byFile = await runMain(launch, ["--config", campaign.file, ...now, "--out", path.join(out, "launch")]);
    assert.strictEqual(byFile.code, 0, byFile.stderr);
    const got = bytesOf(path.join(out, "launch"));
    for (const f of FILES) assert.ok(got[f].equals(expected[f]), `${f} differs`);
    // The file holds the list beside it, by a path relative to itself.
    assert.match(fs.readFileSync(campaign.file, "utf8"), /^recipients: recipients\.csv$/m);
    // Run again: the same file, kept; an edited one is not overwritten.
    assert.strictEqual(
      (
        await runMain(importPinpoint, [
          "--campaign-file",
          path.join(FIXTURES, "campaign-ab.json"),
          "--recipients",
          path.join(out, "recipients.csv"),
          "--out",
          out,
        ])
      ).code,
      0,
    );
    fs.appendFileSync(campaign.file, "quietDays: SUN\n");
    const again = await runMain(importPinpoint, [
      "--campaign-file",
      path.join(FIXTURES, "campaign-ab.json"),
      "--out",
      out,
    ]);
    assert.strictEqual(again.code, 2);
    assert.match(again.stderr, /campaign\.yaml exists with other settings \(edited\?\): not overwritten/);
  });
});

describe("a campaign file means what its flags mean (issue 32)", function () {
  this.timeout(60_000);

  const allFiles = (dir: string) =>
    Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
  /** The launch by flags, then by the file: exit code, stdout, stderr and every output file must be equal. */
  async function sameAsFlags(name: string, yaml: string, argv: (dir: string) => string[], fileArgv: string[] = []) {
    const { dir, file } = campaignDir(name, yaml);
    const byFlags = await runMain(launch, argv(dir));
    const expected = fs.existsSync(path.join(dir, "out", "plan.jsonl")) ? allFiles(path.join(dir, "out")) : undefined;
    fs.rmSync(path.join(dir, "out"), { recursive: true, force: true });
    const byFile = await runMain(launch, ["--config", file, ...fileArgv]);
    assert.deepStrictEqual(
      { code: byFile.code, stdout: byFile.stdout, stderr: byFile.stderr },
      { code: byFlags.code, stdout: byFlags.stdout, stderr: byFlags.stderr },
    );
    if (expected) assert.deepStrictEqual(allFiles(path.join(dir, "out")), expected);
    else assert.ok(!fs.existsSync(path.join(dir, "out", "plan.jsonl")), "the file's run planned, the flags' did not");
    return byFlags;
  }
  const base = (dir: string) => [
    ...["--recipients", path.join(dir, "list.csv"), "--date", "2026-03-20", "--hour", "9"],
    ...["--now", "2026-03-10T12:00:00Z", "--out", path.join(dir, "out"), "--dry-run", "--templates", "none", "--json"],
  ];
  const BASE_YAML = `recipients: list.csv\ndate: 2026-03-20\nhour: 9\nnow: 2026-03-10T12:00:00Z\nout: out\ndryRun: true\ntemplates: none\njson: true\n`;

  it("reads numbers as the text written: campaign 0012 and template 0042 plan as --campaign 0012 --template 0042", async () => {
    // YAML's core schema read 0012 as the number 12: another schedule group and another A/B split.
    const r = await sameAsFlags(
      "leading-zeros",
      `campaign: 0012\ntemplate: 0042\nvariants: [A:50, B:50]\n${BASE_YAML}`,
      (dir) => ["--campaign", "0012", "--template", "0042", "--variant", "A:50", "--variant", "B:50", ...base(dir)],
    );
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(JSON.parse(r.stdout).campaignId, "0012");
  });

  it("refuses hour: 9.0, minute: 0x1E and holdout: 1e1 with the flags' own messages (exit 2)", async () => {
    for (const [key, value, flag] of [
      ["hour", "9.0", "--hour"],
      ["minute", "0x1E", "--minute"],
      ["holdout", "1e1", "--holdout"],
      ["windowMinutes", "1e1", "--window-minutes"],
    ]) {
      const yaml = `campaign: spring\ntemplate: t\n${key === "hour" ? BASE_YAML.replace(/^hour: 9\n/m, "") : BASE_YAML}${key}: ${value}\n`;
      const r = await sameAsFlags(`refused-${key}`, yaml, (dir) => [
        ...["--campaign", "spring", "--template", "t", flag, value],
        ...base(dir).filter((a, i, all) => !(key === "hour" && (a === "--hour" || all[i - 1] === "--hour"))),
      ]);
      assert.strictEqual(r.code, 2, `${key}: ${value}`);
      assert.match(r.stderr, new RegExp(`^error: ${flag} ${value.replace(".", "\\.")}: `));
    }
  });

  it("keeps a 20-digit launchId's digits, and reads true and false as the command line's booleans", () => {
    const { file } = campaignDir("digits", `launchId: 12345678901234567890\ndryRun: true\nbulk: false\n`);
    const values = readConfigFile(file, LAUNCH_FLAGS);
    assert.deepStrictEqual(values, { "launch-id": "12345678901234567890", "dry-run": true, bulk: false });
  });

  it("a send-time rule on the command line replaces the file's: --date --hour over the file's at:", async () => {
    const yaml = `campaign: spring\ntemplate: t\nat: 2026-03-20T08:00:00Z\n${BASE_YAML.replace(/^date: .*\n^hour: 9\n/m, "")}`;
    const r = await sameAsFlags(
      "rule-over-at",
      yaml,
      (dir) => ["--campaign", "spring", "--template", "t", ...base(dir)],
      ["--date", "2026-03-20", "--hour", "9"],
    );
    assert.strictEqual(r.code, 0, r.stderr);
    // And the other way round: --at over the file's date, hour and minute; --tps over the file's sesRate.
    const other = await sameAsFlags(
      "at-over-rule",
      `campaign: spring\ntemplate: t\nminute: 30\nsesRate: 14\n${BASE_YAML}`,
      (dir) => [
        ...["--campaign", "spring", "--template", "t", "--at", "2026-03-20T08:00:00Z", "--tps", "5"],
        ...base(dir).filter((a, i, all) => ![a, all[i - 1]].some((x) => x === "--date" || x === "--hour")),
      ],
      ["--at", "2026-03-20T08:00:00Z", "--tps", "5"],
    );
    assert.strictEqual(other.code, 0, other.stderr);
  });

  it("reads outputs: relative to the file's folder, like every path in it: its stack's schedule quota holds", async () => {
    // The file's folder holds the stack's outputs (a quota of 3 schedules); the working folder holds another.
    const { dir, file } = campaignDir("outputs", `campaign: spring\ntemplate: t\noutputs: outputs.json\n${BASE_YAML}`);
    fs.writeFileSync(path.join(dir, "outputs.json"), JSON.stringify({ maxSchedules: 3 }));
    const r = await runMain(launch, ["--config", file]);
    const byFlags = await runMain(launch, [
      ...["--campaign", "spring", "--template", "t", "--outputs", path.join(dir, "outputs.json"), ...base(dir)],
    ]);
    assert.strictEqual(byFlags.code, 1, byFlags.stderr);
    assert.match(byFlags.stdout + byFlags.stderr, /schedule/);
    assert.deepStrictEqual([r.code, r.stdout, r.stderr], [byFlags.code, byFlags.stdout, byFlags.stderr]);
  });

  it("every flag that names a file or folder is read relative to the campaign file", () => {
    for (const table of [LAUNCH_FLAGS, SIZE_WINDOW.flags])
      for (const [name, flag] of Object.entries(table as Record<string, Flag>))
        if (name !== "config" && /FILE|DIR/.test(flag.value ?? "")) assert.ok(flag.path, `--${name} (${flag.value})`);
  });
});
