import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../../scripts/size-window";
import { runMain, runScript } from "../helpers/cli";

const FIXTURE = "tests/fixtures/zones.csv";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-size-"));
const write = (name: string, text: string) => {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
};
const sizeWindow = (...args: string[]) => runMain(main, args);
const json = async (...args: string[]) => {
  const r = await sizeWindow(...args, "--json");
  assert.strictEqual(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
};

describe("size-window", () => {
  it("volume: 500,000 schedules at 5,000 TPS → windowMinutes 2", async () => {
    const r = await json("--schedules", "500000", "--tps", "5000");
    assert.strictEqual(r.windowMinutes, 2);
    assert.strictEqual(r.schedules, 500000);
    assert.strictEqual(r.effectiveTps, 5000);
  });

  it("volume without --tps uses min(invocation quota, SES rate)", async () => {
    assert.strictEqual((await json("--schedules", "600000")).windowMinutes, 10); // 1,000/s
    const r = await json("--schedules", "600000", "--ses-rate", "500");
    assert.deepStrictEqual(
      [r.effectiveTps, r.windowMinutes, r.effectiveTpsSource],
      [500, 20, "SES maximum send rate, --ses-rate"],
    );
  });

  it("recipients: one instant per zone and step, unknown zones defaulted and counted", async () => {
    const r = await json(
      "--recipients",
      FIXTURE,
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--default-timezone",
      "Europe/Paris",
      "--now",
      "2026-11-29T00:00:00Z",
    );
    assert.strictEqual(r.rows, 10);
    assert.strictEqual(r.schedules, 10);
    assert.strictEqual(r.defaulted, 2);
    assert.strictEqual(r.canonicalised, 1);
    assert.deepStrictEqual(
      r.instants.map((i: any) => [i.utc, i.count]),
      [
        ["2026-11-30T19:00:00.000Z", 1], // Kiritimati +14
        ["2026-11-30T22:00:00.000Z", 1], // Lord Howe +11 (summer)
        ["2026-12-01T03:15:00.000Z", 1], // Kathmandu +5:45
        ["2026-12-01T03:30:00.000Z", 1], // Kolkata +5:30
        ["2026-12-01T08:00:00.000Z", 3], // Paris, and the two defaulted to Paris
        ["2026-12-01T14:00:00.000Z", 2], // New York, US/Eastern
        ["2026-12-01T15:00:00.000Z", 1], // america/chicago
      ],
    );
    assert.deepStrictEqual(r.instants[5].zones, [
      { zone: "America/New_York", count: 1 },
      { zone: "US/Eastern", count: 1 },
    ]);
    assert.deepStrictEqual(r.peak, { utc: "2026-12-01T08:00:00.000Z", count: 3 });
    assert.strictEqual(r.windowMinutes, 1);
    assert.strictEqual(r.earliestSend, "2026-11-30T19:00:00.000Z");
    assert.strictEqual(r.fanOutEndsBeforeFirstSend, true);
  });

  it("drip steps double the schedules, +3d at the same local time", async () => {
    const r = await json("--recipients", FIXTURE, "--date", "2026-12-01", "--hour", "9", "--step", "+3d");
    assert.strictEqual(r.schedules, 20);
    assert.ok(r.instants.some((i: any) => i.utc === "2026-12-04T03:15:00.000Z"));
  });

  it("Kolkata and Kathmandu, 15 minutes apart: windows that do not overlap are sized apart", async () => {
    const rows = [
      "id,email,timezone",
      ...Array.from({ length: 18 }, (_, i) => `${i},u${i}@example.com,${i % 2 ? "Asia/Kolkata" : "Asia/Kathmandu"}`),
    ];
    const f = write("fifteen.csv", rows.join("\n") + "\n");
    // 9 sends per instant at 0.01/s need 15 minutes each; 15 minutes apart they never overlap
    assert.strictEqual(
      (await json("--recipients", f, "--date", "2026-12-01", "--hour", "9", "--tps", "0.01")).windowMinutes,
      15,
    );
    // 18 at one instant would need 30
    const same = write("same.csv", rows.map((l) => l.replace("Asia/Kolkata", "Asia/Kathmandu")).join("\n"));
    assert.strictEqual(
      (await json("--recipients", same, "--date", "2026-12-01", "--hour", "9", "--tps", "0.01")).windowMinutes,
      30,
    );
  });

  it("spring-forward gap and fall-back overlap instants (New York)", async () => {
    const f = write("ny.csv", "id,email,timezone\n1,a@example.com,America/New_York\n");
    assert.strictEqual(
      (await json("--recipients", f, "--date", "2026-03-08", "--hour", "2", "--minute", "30")).instants[0].utc,
      "2026-03-08T07:30:00.000Z",
    );
    assert.strictEqual(
      (await json("--recipients", f, "--date", "2026-11-01", "--hour", "1", "--minute", "30")).instants[0].utc,
      "2026-11-01T05:30:00.000Z",
    );
  });

  it("prints a readable report with a histogram", async () => {
    const r = await sizeWindow(
      "--recipients",
      FIXTURE,
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--now",
      "2026-11-29T00:00:00Z",
    );
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^Recipients: 10 rows \(2 without a known zone → UTC, 1 zone name re-cased or trimmed\) × 1 step = 10 schedules/,
    );
    assert.match(r.stdout, /2026-12-01 03:15 {12}1  █+ +Asia\/Kathmandu/);
    assert.match(r.stdout, /Flexible window: 1 minute/);
  });

  it("a short row is left out as the launcher rejects it (wrong-field-count), not an error", async () => {
    const r = await json(
      "--recipients",
      write("short-row.csv", "id,email,timezone\n1,a@example.com\n2,b@example.com,UTC\n"),
      "--date",
      "2026-12-01",
      "--hour",
      "9",
    );
    assert.deepStrictEqual([r.rows, r.recipients, r.rejected, r.schedules], [2, 1, { "wrong-field-count": 1 }, 1]);
  });

  it("header only: no schedules, the report still printed, exit 1 (nothing to send, as the launcher says)", async () => {
    const r = await sizeWindow(
      "--recipients",
      write("header.csv", "id,email,timezone\n"),
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--json",
    );
    assert.strictEqual(r.code, 1);
    const report = JSON.parse(r.stdout);
    assert.deepStrictEqual([report.schedules, report.instants, report.peak], [0, [], null]);
    assert.match(r.stderr, /^error: nothing to send: .*header\.csv has no row\n$/);
  });

  for (const [name, text, message] of [
    ["empty.csv", "", /empty\.csv: empty file/],
    [
      "open-quote.csv",
      'id,email,timezone\n1,a@example.com,"UTC\n2,b@example.com,UTC\n',
      /open-quote\.csv:2: malformed CSV: the file ends inside a quoted field: the quote opened on this line is never closed/,
    ],
    [
      "stray-quote.csv",
      'id,email,timezone\n1,a@example.com,UT"C\n',
      /stray-quote\.csv:2: malformed CSV: a quote inside an unquoted field/,
    ],
  ] as const) {
    it(`bad input (${name}): one line naming file and line, exit 2`, async () => {
      const r = await sizeWindow("--recipients", write(name, text), "--date", "2026-12-01", "--hour", "9");
      assert.strictEqual(r.code, 2);
      assert.match(r.stderr, message);
      assert.strictEqual(r.stderr.trim().split("\n").length, 1);
      assert.strictEqual(r.stdout, "");
    });
  }

  for (const [args, message] of [
    [["--recipients", FIXTURE, "--date", "2026-02-30", "--hour", "9"], /--date 2026-02-30: no such date/],
    [
      ["--recipients", FIXTURE, "--date", "2026-12-01", "--hour", "24"],
      /--hour 24: must be a whole number from 0 to 23/,
    ],
    [
      ["--recipients", FIXTURE, "--date", "2026-12-01", "--hour", "9", "--default-timezone", "Mars/Base"],
      /--default-timezone Mars\/Base: not an IANA time zone name/,
    ],
    [["--recipients", "no-such-file.csv", "--date", "2026-12-01", "--hour", "9"], /no-such-file\.csv: no such file/],
    [["--schedules", "10", "--tps", "5", "--ses-rate", "3"], /--tps replaces --invocation-tps and --ses-rate/],
    [["--schedules", "ten"], /--schedules ten: must be a whole number/],
    [[], /give --schedules N or --recipients FILE/],
  ] as const) {
    it(`bad flags (${args.join(" ") || "none"}): exit 2`, async () => {
      const r = await sizeWindow(...args);
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }

  it("a window over 1,440 minutes: exit 1 with what would make it fit", async () => {
    const r = await sizeWindow("--schedules", "100000000");
    assert.strictEqual(r.code, 1);
    assert.match(
      r.stderr,
      /no flexible window up to 1440 minutes keeps sends within 1000\/s: raise .* to at least 1158\/s, or split the campaign into 2 campaigns/,
    );
  });

  it("prints the report on stdout and exits 0", async () => {
    const ok = await sizeWindow("--schedules", "500000", "--tps", "5000");
    assert.strictEqual(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^Schedules: 500,000\n/);
  });

  it("writes all of a report longer than a pipe holds (64 KiB) before it exits", function () {
    this.timeout(20_000);
    // 3,000 distinct send_at minutes: one JSON instant each, about 480 KB through the pipe to this process.
    const rows = Array.from({ length: 3000 }, (_, i) => {
      const at = new Date(Date.UTC(2026, 11, 1) + i * 60_000).toISOString().slice(0, 16);
      return `u${i},u${i}@example.com,UTC,${at}`;
    });
    const file = path.join(tmp, "many-instants.csv");
    fs.writeFileSync(file, ["id,email,timezone,send_at", ...rows].join("\n") + "\n");
    const r = runScript("scripts/size-window.ts", [
      "--recipients",
      file,
      "--date",
      "2026-12-01",
      "--hour",
      "9",
      "--now",
      "2026-11-29T00:00:00Z",
      "--json",
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.ok(r.stdout.length > 65_536, `${r.stdout.length} bytes`);
    assert.strictEqual(JSON.parse(r.stdout).instants.length, 3000);
  });

  it("runs as a script the way users call it: one error line and the exit code on stderr, nothing on stdout", function () {
    this.timeout(20_000);
    const bad = runScript("scripts/size-window.ts", ["--schedules", "ten"]);
    assert.deepStrictEqual(
      [bad.code, bad.stdout, bad.stderr],
      [2, "", "error: --schedules ten: must be a whole number from 0 to 9007199254740991\n"],
    );
  });
});
