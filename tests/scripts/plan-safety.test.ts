/**
 * Inputs that must never give a plan that mails someone twice, at the wrong hour, or with mangled text (issue 9),
 * and output folders that never hold a plan that could be mistaken for this run's (issue 10).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PlanRow } from "../../infra/core/plan/plan-row";
import { FANOUT_HEADROOM, scheduler } from "../../infra/core/plan/quotas";
import { main } from "../../scripts/launch-campaign";
import { main as sizeWindowMain } from "../../scripts/size-window";
import { spawn } from "child_process";
import { ROOT, runMain, withFlags } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-safety-"));
let n = 0;
const write = (text: string | Buffer, name = `in-${++n}.csv`) => {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
};
const BASE = [
  "--templates",
  "none",
  "--campaign",
  "t",
  "--template",
  "tpl",
  "--date",
  "2026-12-01",
  "--hour",
  "9",
  "--now",
  "2026-11-29T00:00:00Z",
  "--dry-run",
];

/** A dry run in-process; checks that every row is accounted for whenever a summary is written. */
async function plan(file: string, ...more: string[]) {
  const out = path.join(tmp, `out-${++n}`);
  const r = await runMain(main, withFlags(["--recipients", file, ...BASE, "--out", out], more));
  const read = (f: string) =>
    fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : undefined;
  const summary = JSON.parse(read("summary.json") ?? "null");
  if (summary)
    assert.strictEqual(
      summary.rows,
      summary.recipientsPlanned + summary.rejected.total + (summary.holdout ?? 0),
      "rows = planned + rejected",
    );
  const rows = (read("plan.jsonl") ?? "")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as PlanRow);
  return { ...r, out, summary, rows, rejects: read("rejects.csv"), notes: read("notes.csv") };
}

describe("plan safety: one person under several ids (duplicate-email)", () => {
  const list = "id,email\na1,s@example.com\na2,S@EXAMPLE.COM\na3, s@example.com \na4,t@example.com\na5,s@Example.com\n";
  it("plans the first, rejects the others naming the first line", async () => {
    const r = await plan(write(list));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.rows.map((p) => p.recipient_id),
      ["a1", "a4"],
    );
    assert.deepStrictEqual(r.rejects!.trim().split("\n").slice(1), [
      "3,a2,duplicate email address (first on line 2); a person is sent once",
      "4,a3,duplicate email address (first on line 2); a person is sent once",
      "6,a5,duplicate email address (first on line 2); a person is sent once",
    ]);
    assert.deepStrictEqual(r.summary.rejected.byReason, { "duplicate-email": 3 });
  });
  it("--allow-duplicate-emails plans them all", async () => {
    const r = await plan(write(list), "--allow-duplicate-emails");
    assert.strictEqual(r.rows.length, 5);
  });
});

describe("plan safety: files that parse into nothing or into garbage", () => {
  it("CR-only line endings (old Excel for Mac) are read as lines, with line numbers", async () => {
    const r = await plan(write('id,email,note\ra1,a@example.com,"x\ry"\ra2,not-an-email,z\ra3,c@example.com,w\r'));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.rows.map((p) => [p.recipient_id, p.template_data.note]),
      [
        ["a1", "x\ry"],
        ["a3", "w"],
      ],
    );
    assert.match(r.rejects!, /^4,a2,"invalid email address ""not-an-email"""$/m);
  });
  it("invalid UTF-8 (a Latin-1 export) is refused with file:line and the byte offset", async () => {
    const bytes = Buffer.concat([
      Buffer.from("id,email,name\na1,a@example.com,Zo"),
      Buffer.from([0xeb]),
      Buffer.from("\n"),
    ]);
    const file = write(bytes);
    const r = await plan(file);
    assert.strictEqual(r.code, 2);
    assert.strictEqual(
      r.stderr,
      `error: ${file}:2: not UTF-8 (byte offset 33); for a Latin-1 export give --encoding latin1\n`,
    );
    assert.strictEqual(r.summary, null);
  });
  it("a multi-byte character split across read chunks is not an error", async () => {
    const name = "é".repeat(40_000); // 80,000 bytes: crosses the 64 KB read size in the middle of a character
    const r = await plan(write(`id,email,name\na1,a@example.com,x${name}\n`));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.rows[0].template_data.name, "x" + name);
  });
  it("--encoding latin1 reads such an export", async () => {
    const bytes = Buffer.concat([
      Buffer.from("id,email,name\na1,a@example.com,Zo"),
      Buffer.from([0xeb]),
      Buffer.from("\n"),
    ]);
    const r = await plan(write(bytes), "--encoding", "latin1");
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.rows[0].template_data.name, "Zoë");
  });
});

describe("plan safety: --now that depends on the machine", () => {
  for (const bad of ["2026-11-30T12:00:00", "1", "Dec 1", "2026-11-30", "2026-02-30T00:00:00Z"])
    it(`refuses --now ${bad}`, async () => {
      const r = await plan(write("id,email\na1,a@example.com\n"), "--now", bad);
      assert.strictEqual(r.code, 2);
      assert.match(r.stderr, new RegExp(`^error: --now ${bad}: expected an ISO 8601 instant with Z or an offset`));
    });
  it("accepts Z and offsets", async () => {
    const r = await plan(write("id,email\na1,a@example.com\n"), "--now", "2026-11-29T01:00:00+01:00");
    assert.strictEqual(r.summary.missed.cutoff.slice(0, 16), "2026-11-29T00:05");
  });
});

describe("plan safety: smaller ones", () => {
  it("a __proto__ column reaches the template data", async () => {
    const r = await plan(write("id,email,__proto__,name\na1,a@example.com,p,n\n"));
    assert.deepStrictEqual(JSON.stringify(r.rows[0].template_data), '{"__proto__":"p","name":"n","step":"1"}');
  });
  it("--date in the past: nothing would be sent, exit 1", async () => {
    const r = await plan(write("id,email\na1,a@example.com\n"), "--date", "2026-11-01");
    assert.strictEqual(r.code, 1);
    assert.match(r.stdout, /Nothing would be sent: no schedule in the plan/);
    assert.strictEqual(r.summary.rejected.byReason["send-time-passed"], 1);
  });
});

describe("plan safety: wrong hour, silently (zones)", () => {
  const list =
    "id,email,timezone\nny,a@example.com, America/New_York\nmars,b@example.com,Mars/Base\nnone,c@example.com,\nok,d@example.com,Asia/Tokyo\n";
  it("trims spaces around a zone like case, and notes every row changed or defaulted", async () => {
    const r = await plan(write(list));
    assert.strictEqual(r.code, 0, r.stderr);
    const ny = r.rows.find((p) => p.recipient_id === "ny")!;
    // 09:00 in New York on 2026-12-01 is 14:00Z (EST, UTC-5), not 09:00Z
    assert.deepStrictEqual([ny.timezone, ny.utc], ["America/New_York", "2026-12-01T14:00:00.000Z"]);
    assert.deepStrictEqual(r.notes!.trim().split("\n"), [
      "line,id,note,zone_source,zone_candidates",
      '2,ny,"timezone "" America/New_York"" read as America/New_York",given,',
      '3,mars,"timezone ""Mars/Base"" is not an IANA zone: sent in UTC, the default zone",default,',
      '4,none,"no timezone: sent in UTC, the default zone",default,',
    ]);
    assert.deepStrictEqual(r.summary.zones, {
      defaultTimezone: "UTC",
      defaulted: 2,
      canonicalised: 1,
      mapped: 0,
      bySource: { given: 2, mapped: 0, latlon: 0, postal: 0, phone: 0, country: 0, default: 2 },
      unknown: [{ value: "Mars/Base", rows: 1, readAs: null }],
    });
  });
  it("refuses a control column written in another case (it would be personalization, its values unread)", async () => {
    const cases: [string, RegExp][] = [
      ["id,email,Timezone\nny,a@example.com,America/New_York\n", /:1: column "Timezone" is not "timezone"/],
      [
        "id,email,timezone,Send_Hour\nny,a@example.com,America/New_York,7\n",
        /:1: column "Send_Hour" is not "send_hour"/,
      ],
      [
        "id,email,timezone,SEND_MINUTE\nny,a@example.com,America/New_York,30\n",
        /:1: column "SEND_MINUTE" is not "send_minute"/,
      ],
    ];
    for (const [text, message] of cases) {
      const r = await plan(write(text));
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.strictEqual(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
    // Beside the control column itself, another spelling is the user's own personalization.
    const both = await plan(write("id,email,timezone,Timezone\nny,a@example.com,America/New_York,Eastern\n"));
    assert.strictEqual(both.code, 0, both.stderr);
    assert.deepStrictEqual(
      [both.rows[0].utc, both.rows[0].template_data.Timezone],
      ["2026-12-01T14:00:00.000Z", "Eastern"],
    );
  });
  it("--strict-zones rejects instead of defaulting", async () => {
    const r = await plan(write(list), "--strict-zones");
    assert.deepStrictEqual(
      r.rows.map((p) => p.recipient_id),
      ["ny", "ok"],
    );
    assert.deepStrictEqual(r.rejects!.trim().split("\n").slice(1), [
      '3,mars,"timezone ""Mars/Base"" is not an IANA zone (strict zones: no default)"',
      "4,none,no timezone (strict zones: no default)",
    ]);
    assert.deepStrictEqual(r.summary.rejected.byReason, { "unknown-zone": 2 });
  });
  it("notes trimmed addresses and partly missed steps", async () => {
    const r = await plan(
      write("id,email,timezone\nk,  k@example.com ,Asia/Kolkata\nn,n@example.com,America/New_York\n"),
      "--step",
      "+1d",
      "--now",
      "2026-12-01T05:00:00Z",
    );
    assert.deepStrictEqual(r.notes!.trim().split("\n"), [
      "line,id,note,zone_source,zone_candidates",
      '2,k,"email ""  k@example.com "" trimmed",given,',
      "2,k,step 1 (due 2026-12-01T03:30:00.000Z) missed: skipped,given,",
    ]);
  });
});

describe("plan safety: two sends at the same instant", () => {
  for (const steps of [
    ["+3d", "+3d"],
    ["+3d:a", "+3d:b"],
    ["+12h", "+12h:x"],
  ])
    it(`refuses identical steps when reading the flags (${steps.join(" ")})`, async () => {
      const r = await plan(write("id,email\na1,a@example.com\n"), ...steps.flatMap((s) => ["--step", s]));
      assert.strictEqual(r.code, 2);
      assert.ok(r.stderr.startsWith(`error: --step ${steps[1]}: the same offset as step 2 (${steps[0]})`), r.stderr);
    });

  it("+24h and +1d are one offset (they differ only on a DST day): refused when reading the flags", async () => {
    const r = await plan(
      write("id,email,timezone\na1,a@example.com,Asia/Kolkata\n"),
      "--step",
      "+24h",
      "--step",
      "+1d",
    );
    assert.strictEqual(r.code, 2);
    assert.ok(r.stderr.startsWith("error: --step +1d: the same offset as step 2 (+24h)"), r.stderr);
  });

  it("a step moved onto another by quiet time is not planned, and says so", async () => {
    // Kolkata 09:00 (03:30Z); +12h = 21:00 is quiet (20:00-09:00) → 09:00 the next day; +23h = 08:00 the next day
    // is quiet too → 09:00, onto step 2: not planned.
    const r = await plan(
      write("id,email,timezone\na1,a@example.com,Asia/Kolkata\n"),
      ...["--step", "+12h", "--step", "+23h", "--quiet-hours", "20:00-09:00"],
    );
    assert.deepStrictEqual(
      r.rows.map((p) => [p.step, p.utc]),
      [
        [1, "2026-12-01T03:30:00.000Z"],
        [2, "2026-12-02T03:30:00.000Z"],
      ],
    );
    assert.deepStrictEqual(r.summary.collisions, [{ step: 3, with: 2, recipients: 1, reason: "too-close" }]);
    assert.match(r.stdout, /collisions: step 3 not planned for 1 recipient \(within 60 minutes of step 2\)/);
  });

  it("--missed next-day that would move step 1 onto step 2 (Kolkata, +1d) moves step 2 with it", async () => {
    const r = await plan(
      write("id,email,timezone\nk,k@example.com,Asia/Kolkata\nn,n@example.com,America/New_York\n"),
      "--step",
      "+1d",
      "--missed",
      "next-day",
      "--now",
      "2026-12-01T05:00:00Z",
    );
    const k = r.rows.filter((p) => p.recipient_id === "k");
    // Step 1 moves to the next day and takes step 2 with it (a day later again), so the two never meet.
    assert.deepStrictEqual(
      k.map((p) => [p.step, p.utc]),
      [
        [1, "2026-12-02T03:30:00.000Z"],
        [2, "2026-12-03T03:30:00.000Z"],
      ],
      "the first mail moved, and the second a day after it, not both at once",
    );
    assert.deepStrictEqual(r.summary.collisions, []);
    assert.match(r.notes ?? "", /2,k,step 2 moved to the next day with step 1: 2026-12-03T03:30:00.000Z/);
    const instants = r.rows.map((p) => `${p.recipient_id} ${p.utc}`);
    assert.strictEqual(new Set(instants).size, instants.length, "no recipient twice at one instant");
  });
});

describe("plan safety: smaller ones (2)", () => {
  it("--window-minutes below the computed minimum: a warning with the peak rate", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => `u${i},u${i}@example.com`).join("\n");
    const r = await plan(write(`id,email\n${rows}\n`), "--tps", "1", "--window-minutes", "1");
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      [r.summary.window.minutes, r.summary.window.minimumMinutes, r.summary.window.peakTps],
      [1, 4, 3.33],
    );
    assert.match(
      r.stdout,
      /window: 1 minute \(--window-minutes; below the 4 minutes the sends need: peak 3\.33\/s against 1\/s/,
    );
    assert.match(r.stderr, /warning: --window-minutes 1 is below the 4 minutes the sends need/);
  });
  it("ids differing only in case or surrounding spaces are planned, with a note and a count", async () => {
    const r = await plan(write("id,email\nA1,a@example.com\na1,b@example.com\n a1,c@example.com\nb,d@example.com\n"));
    assert.strictEqual(r.rows.length, 4);
    assert.deepStrictEqual(r.notes!.trim().split("\n").slice(1), [
      // (No timezone column: every zone is the default one, zone_source "default".)
      "3,a1,id differs from line 2's only in case or surrounding spaces: a separate recipient (schedule names assume case matters),default,",
      // Quoted: a value that starts or ends in a space keeps it in readers that trim unquoted fields.
      '4," a1",id differs from line 2\'s only in case or surrounding spaces: a separate recipient (schedule names assume case matters),default,',
    ]);
    assert.strictEqual(r.summary.idsDifferingOnlyInCase, 2);
  });
});

describe("plan safety: size-window and the launcher agree", () => {
  const sizeWindow = (...args: string[]) => runMain(sizeWindowMain, args);
  const ZONES = "tests/fixtures/zones.csv";
  const CAMPAIGN = "tests/fixtures/campaign.csv";
  const when = ["--date", "2026-12-01", "--hour", "9"];

  it("the same rows, the same checks, the same counts (the README's own fixture)", async () => {
    const sized = await sizeWindow("--recipients", CAMPAIGN, ...when, "--step", "+3d", "--json");
    assert.strictEqual(sized.code, 0, sized.stderr);
    const report = JSON.parse(sized.stdout);
    const launched = await plan(CAMPAIGN, "--step", "+3d");
    assert.deepStrictEqual(
      [report.rows, report.recipients, report.rejected, report.schedules],
      [
        launched.summary.rows,
        launched.summary.recipientsPlanned,
        launched.summary.rejected.byReason,
        launched.summary.schedules,
      ],
    );
    assert.deepStrictEqual([report.rows, report.recipients, report.schedules], [8, 4, 8]);
  });

  it("size-window needs id and email like the launcher, and leaves out duplicate ids and bad addresses", async () => {
    const noId = await sizeWindow("--recipients", write("email,timezone\na@example.com,UTC\n"), ...when);
    assert.strictEqual(noId.code, 2);
    assert.match(noId.stderr, /:1: the header needs columns "id"/);
    const r = await sizeWindow(
      "--recipients",
      write("id,email\na,a@example.com\na,b@example.com\nb,nope\nc,c@example.com\n"),
      ...when,
      "--json",
    );
    assert.deepStrictEqual(JSON.parse(r.stdout).schedules, 2);
  });

  it("one fan-out rate: both use the stack quota × the fan-out's headroom, --create-tps overrides", async () => {
    const report = JSON.parse((await sizeWindow("--recipients", ZONES, ...when, "--json")).stdout);
    const launched = await plan(ZONES);
    const expected = scheduler.createScheduleTps * FANOUT_HEADROOM;
    assert.deepStrictEqual([report.createTps, launched.summary.fanOut.createTps], [expected, expected]);
    const faster = JSON.parse(
      (await sizeWindow("--recipients", ZONES, ...when, "--create-tps", "100", "--json")).stdout,
    );
    assert.strictEqual(faster.createTps, 100);
  });

  it("a launch at size-window's printed 'launch by' loses nothing; a minute later loses the first sends", async () => {
    // Kiritimati (UTC+14) sends first: 2026-12-01 09:00 local is 2026-11-30T19:00Z.
    const sized = await sizeWindow("--recipients", ZONES, ...when, "--now", "2026-11-29T00:00:00Z");
    const launchBy = /launch by (\d{4}-\d\d-\d\d) (\d\d:\d\d) UTC/.exec(sized.stdout)!;
    const at = `${launchBy[1]}T${launchBy[2]}:00Z`;
    assert.ok(at < "2026-11-30T19:00:00Z");
    const inTime = await plan(ZONES, "--now", at);
    assert.deepStrictEqual([inTime.summary.missed.skipped, inTime.summary.schedules], [0, 10]);
    const late = await plan(ZONES, "--now", new Date(Date.parse(at) + 60_000).toISOString());
    assert.deepStrictEqual([late.summary.missed.skipped, late.summary.schedules], [1, 9]);
  });
});

describe("plan safety: the output folder (issue 10)", () => {
  const LIST =
    "id,email,timezone\n" +
    Array.from({ length: 3000 }, (_, i) => `u${i},u${i}@example.com,Asia/Tokyo`).join("\n") +
    "\n";
  const run = (out: string, ...more: string[]) =>
    runMain(main, withFlags(["--recipients", write(LIST), ...BASE, "--out", out], more));
  const leftovers = (out: string) =>
    fs.existsSync(out) ? fs.readdirSync(out).filter((f) => f.includes("partial") || f.startsWith(".")) : [];

  it("two concurrent runs into one folder: the second is refused naming who holds it; the first writes a whole plan", async () => {
    const out = path.join(tmp, "race");
    const [a, b] = await Promise.all([run(out), run(out)]);
    const refused = [a, b].filter((r) => r.code !== 0);
    assert.strictEqual(refused.length, 1, `${a.code} ${a.stderr} / ${b.code} ${b.stderr}`);
    assert.match(
      refused[0].stderr,
      new RegExp(
        `^error: ${out}: in use by another run \\(pid ${process.pid} on ${os.hostname()}, started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\)`,
      ),
    );
    assert.strictEqual(refused[0].stderr.split("\n").length, 2, "one line");
    const plan = fs.readFileSync(path.join(out, "plan.jsonl"), "utf8");
    assert.strictEqual(plan.split("\n").filter(Boolean).length, 3000);
    const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"));
    assert.strictEqual(require("crypto").createHash("sha256").update(plan).digest("hex"), summary.planSha256);
    assert.deepStrictEqual(leftovers(out), []);
    assert.strictEqual((await run(out)).code, 0, "the folder is free again afterwards");
  });

  it("across processes: a run started while another process plans into the folder is refused, naming that process", async function () {
    this.timeout(60_000);
    const out = path.join(tmp, "race-processes");
    const big = write(
      "id,email,timezone\n" +
        Array.from({ length: 20_000 }, (_, i) => `p${i},p${i}@example.com,Europe/Paris`).join("\n") +
        "\n",
    );
    const first = spawn(
      process.execPath,
      [
        require.resolve("ts-node/dist/bin"),
        "--transpile-only",
        "scripts/launch-campaign.ts",
        "--recipients",
        big,
        ...BASE,
        "--out",
        out,
      ],
      { cwd: ROOT },
    );
    let firstErr = "";
    first.stderr.on("data", (d) => (firstErr += d));
    const exited = new Promise<number | null>((r) => first.on("exit", r));
    const lock = path.join(out, ".sendtime.lock");
    while (!fs.existsSync(lock)) await new Promise((r) => setTimeout(r, 20));
    const second = await run(out);
    assert.strictEqual(second.code, 1);
    assert.match(
      second.stderr,
      new RegExp(`^error: ${out}: in use by another run \\(pid ${first.pid} on ${os.hostname()}, `),
    );
    assert.strictEqual(await exited, 0, firstErr);
    assert.strictEqual(
      fs.readFileSync(path.join(out, "plan.jsonl"), "utf8").split("\n").filter(Boolean).length,
      20_000,
      "the first run's plan, whole",
    );
  });

  it("a lock left by a process that is gone (same host) is taken over", async () => {
    const out = path.join(tmp, "stale");
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(
      path.join(out, ".sendtime.lock"),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: os.hostname(), started: "2026-01-01T00:00:00.000Z" }),
    );
    const r = await run(out);
    assert.strictEqual(r.code, 0, r.stderr);
  });

  it("an unwritable folder: one line, exit 1, no files", async () => {
    const file = write("not a folder", "plain-file");
    const r = await run(path.join(file, "out"));
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /^error: .*plain-file\/out: cannot write the output folder \(ENOTDIR\)\n$/);
  });

  it("--out '': one line, exit 1", async () => {
    const r = await run("");
    assert.deepStrictEqual(
      [r.code, r.stderr],
      [1, "error: --out '': cannot write the output folder (an empty path)\n"],
    );
  });

  it("a full disk mid-plan: one line, exit 1, partial files removed, and the previous plan gone", async () => {
    const out = path.join(tmp, "full");
    assert.strictEqual((await run(out)).code, 0);
    assert.ok(fs.existsSync(path.join(out, "plan.jsonl")));
    // The kernel's own ENOSPC: the plan's bytes go to /dev/full (patched on the fs module itself, which the
    // planner's `import * as fs` reads through).
    const realFs = require("fs");
    const original = realFs.createWriteStream;
    realFs.createWriteStream = (p: string, ...rest: unknown[]) =>
      String(p).includes("plan.jsonl") ? original("/dev/full", ...rest) : original(p, ...rest);
    let r;
    try {
      r = await run(out, "--step", "+1d");
    } finally {
      realFs.createWriteStream = original;
    }
    assert.strictEqual(r.code, 1, r.stderr);
    assert.match(r.stderr, /^error: .*full: cannot write plan\.jsonl \(ENOSPC\)\n$/);
    assert.deepStrictEqual(fs.readdirSync(out), [], "nothing left that could be taken for this run's plan");
  });
});
