/**
 * Progress on stderr for long reads: with --progress (or a terminal) the planning, sizing, import and enrol loops print
 * rows, rate and time left on stderr, and nothing else changes: stdout and every file are the same byte for byte as
 * without, --json's stdout too; without --progress and without a terminal, nothing is printed. A clock that advances
 * 6 s at each reading stands in for a long run, so that a 20,000-row list passes the first report (2 s).
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as launch } from "../../../../scripts/launch-campaign";
import { main as sizeWindow } from "../../../../scripts/size-window";
import { main as importPinpoint } from "../../../../scripts/import-pinpoint";
import { main as enrol } from "../../../../scripts/enrol";
import { progressClock, progressLine, progressReporter } from "../../../../scripts/lib/cli/progress";
import type { Io } from "../../../../scripts/lib/cli/run";
import { renderWith } from "../../../helpers/stack";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-progress-"));
const ROWS = 20_000;
const ZONES = ["America/New_York", "Europe/Berlin", "Asia/Kathmandu", "Australia/Sydney"];
const LIST = path.join(tmp, "list.csv");
fs.writeFileSync(
  LIST,
  ["id,email,timezone", ...Array.from({ length: ROWS }, (_, i) => `r${i},r${i}@example.com,${ZONES[i % 4]}`)].join(
    "\n",
  ) + "\n",
);

/** A progress line as printed: `planning: 12,288 rows read (61%), 1,365/s, about 6 s left`. */
const LINE = /^(planning|sizing|importing|enrolling): [\d,]+ [a-z ]+( \(\d+%\))?, [\d,]+\/s(, about [\w ]+ left)?$/;

let fakeNow = 0;
const realNow = progressClock.now;
function fakeClock() {
  fakeNow = 1_000_000;
  progressClock.now = () => (fakeNow += 6_000);
}
afterEach(() => (progressClock.now = realNow));

async function run(main: (argv: string[], io: Io) => Promise<number>, args: string[], terminal = false) {
  let stdout = "",
    stderr = "";
  const io: Io = { out: (t) => (stdout += t), err: (t) => (stderr += t), errIsTerminal: terminal };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

/** Every file under `dir`, by its path relative to it. */
function filesOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const p = path.join(dir, name);
    if (fs.statSync(p).isFile()) files[name] = fs.readFileSync(p, "latin1");
  }
  return files;
}

describe("progress on stderr", () => {
  describe("the reporter", () => {
    it("words a line with the share and the time left (412,288 of 1,000,000 at 125,300/s: 41%, 587,712 left = 4.7 s → 5 s)", () => {
      assert.equal(
        progressLine("planning", 412_288, "rows read", 125_300, 1_000_000),
        "planning: 412,288 rows read (41%), 125,300/s, about 5 s left",
      );
      assert.equal(
        progressLine("importing", 8_192, "endpoints read", 4_096.4),
        "importing: 8,192 endpoints read, 4,096/s",
      );
      // A bound the count has passed (a list whose lines are not its rows) is not shown as a share.
      assert.equal(progressLine("planning", 10, "rows read", 5, 8), "planning: 10 rows read, 5/s");
    });

    it("outside a terminal: nothing in the first 2 s, then one line every 5 s at most, each ending in a newline", () => {
      let err = "";
      let now = 0;
      progressClock.now = () => now;
      const r = progressReporter({ out: () => assert.fail("stdout"), err: (t) => (err += t) }, true, "planning");
      for (const [t, done] of [
        [0, 4096],
        [1_999, 8192],
        [2_000, 12_288],
        [4_000, 16_384],
        [6_999, 20_480],
        [7_000, 24_576],
      ]) {
        now = t;
        r.report(done, "rows read", 100_000);
      }
      r.end();
      // Rates from the first report (4,096 rows at 0 s): 8,192 in 2 s = 4,096/s; 20,480 in 7 s = 2,925.7/s.
      assert.equal(
        err,
        "planning: 12,288 rows read (12%), 4,096/s, about 22 s left\nplanning: 24,576 rows read (24%), 2,926/s, about 26 s left\n",
      );
    });

    it("on a terminal: one line rewritten in place at most 4 times a second, cleared before another line and at the end", () => {
      let err = "";
      let now = 0;
      progressClock.now = () => now;
      const r = progressReporter(
        { out: () => assert.fail("stdout"), err: (t) => (err += t), errIsTerminal: true },
        false,
        "sizing",
      );
      now = 0;
      r.report(4096, "rows read");
      now = 2_000;
      r.report(8192, "rows read");
      now = 2_100;
      r.report(12_288, "rows read");
      r.say("warning: something");
      now = 2_250;
      r.report(16_384, "rows read");
      r.end();
      assert.equal(
        err,
        "\rsizing: 8,192 rows read, 2,048/s\x1b[K" +
          "\r\x1b[Kwarning: something\n" +
          "\rsizing: 16,384 rows read, 5,461/s\x1b[K" +
          "\r\x1b[K",
      );
    });

    it("is off without --progress when stderr is not a terminal", () => {
      progressClock.now = () => (fakeNow += 6_000);
      const r = progressReporter(
        { out: () => assert.fail("stdout"), err: () => assert.fail("stderr") },
        false,
        "planning",
      );
      for (let i = 1; i < 10; i++) r.report(i * 4096, "rows read", ROWS);
      r.end();
    });
  });

  describe("launch-campaign --dry-run", () => {
    const args = (out: string, ...more: string[]) => [
      ...["--campaign", "spring", "--recipients", LIST, "--template", "spring-sale", "--templates", "none"],
      ...["--date", "2026-12-01", "--hour", "9", "--step", "+3d:spring-followup", "--now", "2026-11-30T12:00:00Z"],
      ...["--out", path.join(tmp, out), "--dry-run", ...more],
    ];

    it("with --progress prints progress on stderr; stdout and every file are those of a run without", async () => {
      // One folder for both runs (the summary names its files): each run's files are read before the next.
      const quiet = await run(launch, args("launch"));
      const quietFiles = filesOf(path.join(tmp, "launch"));
      fakeClock();
      const loud = await run(launch, args("launch", "--progress"));
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.equal(loud.code, 0, loud.stderr);
      const lines = loud.stderr.split("\n").filter((l) => l.startsWith("planning:"));
      // 20,000 rows report at 4,096, 8,192, 12,288 and 16,384; the first is within 2 s of itself.
      assert.equal(lines.length, 3, loud.stderr);
      for (const l of lines) assert.match(l, LINE);
      assert.match(lines[0], /^planning: 8,192 rows read \(40%\),/); // of the 20,001 lines after the header (the last empty)
      assert.equal(loud.stderr.replace(/^planning:.*\n/gm, ""), quiet.stderr);
      assert.equal(loud.stdout, quiet.stdout);
      assert.deepEqual(filesOf(path.join(tmp, "launch")), quietFiles);
      assert.ok(Object.keys(quietFiles).includes("plan.jsonl"));
    });

    it("--json's stdout is the same with --progress; without --progress and no terminal, stderr has no progress", async () => {
      fakeClock();
      const quiet = await run(launch, args("json", "--json"));
      fakeClock();
      const loud = await run(launch, args("json", "--json", "--progress"));
      assert.equal(loud.stdout, quiet.stdout);
      JSON.parse(loud.stdout);
      assert.doesNotMatch(quiet.stderr, /planning:/);
      assert.match(loud.stderr, /^planning: /m);
    });

    it("a terminal shows it without --progress, as a line rewritten in place and cleared at the end", async () => {
      fakeClock();
      const r = await run(launch, args("tty"), true);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^\rplanning: 8,192 rows read \(40%\), [\d,]+\/s, about [\w ]+ left\x1b\[K/);
      assert.ok(r.stderr.endsWith("\r\x1b[K"), JSON.stringify(r.stderr.slice(-40)));
      assert.doesNotMatch(r.stdout, /planning|\r/);
    });
  });

  describe("size-window --recipients", () => {
    const args = [
      "--recipients",
      LIST,
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--now",
      "2026-11-29T00:00:00Z",
      "--templates",
      "none",
    ];

    it("with --progress prints progress on stderr and the same report on stdout (text and --json)", async () => {
      for (const json of [[], ["--json"]]) {
        const quiet = await run(sizeWindow, [...args, ...json]);
        fakeClock();
        const loud = await run(sizeWindow, [...args, ...json, "--progress"]);
        assert.equal(quiet.code, 0, quiet.stderr);
        assert.equal(loud.stdout, quiet.stdout);
        assert.equal(quiet.stderr, "");
        const lines = loud.stderr.trimEnd().split("\n");
        assert.equal(lines.length, 3, loud.stderr);
        for (const l of lines) assert.match(l, LINE);
        assert.match(lines[0], /^sizing: 8,192 rows read \(40%\)/);
      }
    });
  });

  describe("import-pinpoint", () => {
    const exportFile = path.join(tmp, "endpoints.jsonl");
    const endpoint = (i: number) =>
      JSON.stringify({
        ChannelType: "EMAIL",
        EndpointStatus: "ACTIVE",
        OptOut: "NONE",
        Id: `e${i}`,
        Address: `e${i}@example.com`,
        Demographic: { Timezone: ZONES[i % 4] },
        EffectiveDate: "2026-01-01T00:00:00.000Z",
        User: { UserId: `u${i}` },
      });
    fs.writeFileSync(exportFile, Array.from({ length: ROWS }, (_, i) => endpoint(i)).join("\n") + "\n");

    it("with --progress prints endpoints read, then written (of those read), and the same stdout and files", async () => {
      const out = path.join(tmp, "pinpoint");
      const quiet = await run(importPinpoint, ["--endpoints", exportFile, "--out", out]);
      const quietFiles = filesOf(out);
      fakeClock();
      const loud = await run(importPinpoint, ["--endpoints", exportFile, "--out", out, "--progress"]);
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.equal(quiet.stderr, "");
      assert.equal(loud.stdout, quiet.stdout);
      assert.match(quiet.stdout, /20,000|20000/);
      const lines = loud.stderr.trimEnd().split("\n");
      for (const l of lines) assert.match(l, LINE);
      assert.deepEqual(
        lines.map((l) => l.replace(/, [\d,]+\/s.*$/, "")),
        [
          "importing: 8,192 endpoints read",
          "importing: 12,288 endpoints read",
          "importing: 16,384 endpoints read",
          "importing: 8,192 endpoints written (40%)",
          "importing: 12,288 endpoints written (61%)",
          "importing: 16,384 endpoints written (81%)",
        ],
      );
      assert.deepEqual(filesOf(out), quietFiles);
      assert.ok(quietFiles["recipients.csv"].split("\n").length > ROWS, "the endpoints became recipients");
    });
  });

  describe("enrol --recipients", function () {
    this.timeout(60_000);
    let outputs: string;
    before(async () => {
      const stack = await renderWith();
      outputs = path.join(tmp, "outputs.json");
      fs.writeFileSync(outputs, JSON.stringify(stack.outputs));
    });

    it("with --progress prints rows read and subscribers handled (of the backlog); stdout is the same, --json's too", async () => {
      const args = [
        "--journey",
        "onboarding",
        "--recipients",
        LIST,
        "--outputs",
        outputs,
        "--now",
        "2026-03-10T18:05:02Z",
      ];
      for (const extra of [["--dry-run"], ["--dry-run", "--json"]]) {
        const quiet = await run(enrol, [...args, ...extra, "--templates", "none"]);
        fakeClock();
        const loud = await run(enrol, [...args, ...extra, "--templates", "none", "--progress"]);
        assert.equal(quiet.code, 0, quiet.stderr.slice(0, 500));
        assert.equal(loud.stdout, quiet.stdout);
        const progress = loud.stderr.split("\n").filter((l) => l.startsWith("enrolling:"));
        assert.equal(loud.stderr.replace(/^enrolling:.*\n/gm, ""), quiet.stderr);
        assert.doesNotMatch(quiet.stderr, /enrolling:/);
        for (const l of progress) assert.match(l, LINE);
        assert.match(progress[0], /^enrolling: 8,192 rows read, /);
        // --dry-run --json prints the requests without handling each subscriber.
        if (extra.length === 1)
          assert.ok(
            progress.some((l) => /^enrolling: [\d,]+ subscribers handled \(\d+%\)/.test(l)),
            loud.stderr.slice(-400),
          );
      }
    });
  });
});
