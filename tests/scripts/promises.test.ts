/**
 * Issue 22's examples for the planning paths (launcher, size-window, journey definitions): each reproduces one broken
 * promise. Expected instants are worked out by hand (UTC rows: local time = UTC; Europe/London is UTC+0 in March).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseJourneys } from "../../infra/core/journeys/journeys-definition";
import { parsePlanRow } from "../../infra/core/plan/plan-row";
import { main as launchMain } from "../../scripts/launch-campaign";
import { main as sizeMain } from "../../scripts/size-window";
import { main as enrol } from "../../scripts/enrol";
import { runMain } from "../helpers/cli";
import { parse as parseCsv } from "csv-parse/sync";
import { JourneyDefinitionError } from "../../infra/core/journeys/journeys-definition";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-promises-"));
let runs = 0;
const csv = (name: string, text: string) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, text);
  return p;
};
const ONE_UTC = csv("one-utc.csv", "id,email,timezone\nu1,u1@example.com,UTC\n");

async function launch(args: string[], recipients = ONE_UTC) {
  const out = path.join(tmp, `run-${++runs}`);
  const r = await runMain(launchMain, [
    "--templates",
    "none",
    "--campaign",
    "p",
    "--recipients",
    recipients,
    "--template",
    "t",
    ...args,
    "--dry-run",
    "--json",
    "--out",
    out,
  ]);
  const read = (f: string) => (fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : "");
  return {
    ...r,
    plan: read("plan.jsonl").split("\n").filter(Boolean).map(parsePlanRow),
    notes: read("notes.csv"),
    summary: r.code === 0 ? JSON.parse(r.stdout) : undefined,
  };
}

const JOURNEY = (steps: object[]) => [{ name: "j", trigger: { source: "app", detailType: "Signup" }, steps }];

describe("issue 22: one set of promises (planning paths)", function () {
  this.timeout(30_000);

  describe("(1) never two at once: equal offsets are refused where the definition is read", () => {
    it("launcher: +1d and +24h are one offset (they differ only on a DST day)", async () => {
      const r = await launch([
        "--date",
        "2026-12-01",
        "--hour",
        "9",
        "--step",
        "+1d:a",
        "--step",
        "+24h:b",
        "--now",
        "2026-11-01T00:00:00Z",
      ]);
      assert.strictEqual(r.code, 2, r.stdout);
      assert.match(r.stderr, /--step \+24h:b: the same offset as step 2 \(\+1d:a\)/);
    });

    for (const [what, steps, message] of [
      [
        "+0h twice",
        [{ after: "+0h" }, { after: "+0h" }],
        /steps\[1\] \(\+0h\) has the same offset as steps\[0\] \(\+0h\)/,
      ],
      [
        "+24h and +1d",
        [{ after: "+1d" }, { after: "+24h" }],
        /steps\[1\] \(\+24h\) has the same offset as steps\[0\] \(\+1d\)/,
      ],
      [
        "the same after and at",
        [{ after: "+0h" }, { after: "+2d", at: "09:00" }, { after: "+2d", at: "09:00" }],
        /steps\[2\] \(\+2d at 09:00\) has the same offset as steps\[1\] \(\+2d at 09:00\)/,
      ],
    ] as const)
      it(`journeys: ${what}`, () => {
        const list = JOURNEY(steps.map((s, k) => ({ ...s, template: `t${k}` })));
        assert.throws(
          () => parseJourneys(list, "sendtime:journeys"),
          (e: Error) => e instanceof JourneyDefinitionError && message.test(e.message),
        );
      });

    it("journeys: +1d at 09:00 and +24h are different offsets (the at time decides)", () => {
      const list = JOURNEY([
        { after: "+24h", template: "a" },
        { after: "+1d", at: "09:00", template: "b" },
      ]);
      assert.strictEqual(parseJourneys(list, "x")[0].steps.length, 2);
    });

    it("enrol exits 2 on such a journeys file, naming both steps", async () => {
      const file = csv(
        "equal.json",
        JSON.stringify(
          JOURNEY([
            { after: "+0h", template: "a" },
            { after: "+0h", template: "b" },
          ]),
        ),
      );
      const event = csv(
        "event.json",
        JSON.stringify({ source: "app", "detail-type": "Signup", time: "2026-03-10T18:05:00Z", detail: {} }),
      );
      const outputs = csv("outputs.json", JSON.stringify({}));
      const r = await runMain(
        (argv, io) => enrol(argv, io),
        ["--journey", "j", "--event", event, "--journeys", file, "--outputs", outputs, "--dry-run"],
      );
      assert.strictEqual(r.code, 2, r.stderr);
      assert.match(r.stderr, /steps\[1\] \(\+0h\) has the same offset as steps\[0\] \(\+0h\)/);
    });

    it("lateGraceMinutes is a whole number of minutes from 0 to 1440", () => {
      for (const bad of [-1, 1.5, "60", 1441])
        assert.throws(
          () => parseJourneys([{ ...JOURNEY([{ after: "+0h", template: "a" }])[0], lateGraceMinutes: bad }], "x"),
          /lateGraceMinutes .* a whole number of minutes from 0 to 1440 \(default 60\)/,
        );
      assert.strictEqual(
        parseJourneys([{ ...JOURNEY([{ after: "+0h", template: "a" }])[0], lateGraceMinutes: 0 }], "x")[0]
          .lateGraceMinutes,
        0,
      );
    });
  });

  describe("(2) quiet time covers the window", () => {
    const flags = [
      "--date",
      "2026-12-01",
      "--hour",
      "20",
      "--minute",
      "59",
      "--quiet-hours",
      "21:00-08:00",
      "--now",
      "2026-11-01T00:00:00Z",
    ];

    it("launcher: 20:59 with a 120-minute window (deliverable until 22:59) is delayed to 08:00 the next day", async () => {
      const r = await launch([...flags, "--window-minutes", "120"]);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(
        r.plan.map((p) => p.utc),
        ["2026-12-02T08:00:00.000Z"],
      );
      assert.strictEqual(r.summary.quiet.delayed, 1);
      assert.strictEqual(r.summary.window.quietCheckedMinutes, 120);
    });

    it("launcher: a quiet end inside a DST gap is the gap's end (London 00:45 with 22:30-01:50 → 01:00Z, 02:00 BST)", async () => {
      // python3 zoneinfo: 2026-03-29 00:45 GMT = 00:45Z; at 01:00Z the clock jumps to 02:00 BST, past 01:50.
      const list = csv(
        "london-gap.csv",
        "id,email,timezone,send_at\nl1,l1@example.com,Europe/London,2026-03-29T00:45\n",
      );
      const r = await launch(
        [
          "--date",
          "2026-03-29",
          "--hour",
          "9",
          "--quiet-hours",
          "22:30-01:50",
          "--window-minutes",
          "1",
          "--now",
          "2026-03-01T00:00:00Z",
        ],
        list,
      );
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(
        r.plan.map((p) => [p.utc, p.send_at, p.timezone]),
        [["2026-03-29T01:00:00.000Z", "2026-03-29T02:00:00", "Europe/London"]],
      );
    });

    it("launcher: with a 1-minute window 20:59 stays (its only minute is free)", async () => {
      const r = await launch([...flags, "--window-minutes", "1"]);
      assert.deepStrictEqual(
        r.plan.map((p) => p.utc),
        ["2026-12-01T20:59:00.000Z"],
      );
    });

    it("launcher: a window longer than quiet time leaves free is refused (exit 2)", async () => {
      const r = await launch([...flags, "--window-minutes", "781"]);
      assert.strictEqual(r.code, 2);
      assert.match(
        r.stderr,
        /--window-minutes 781: longer than the longest free time quiet time leaves \(780 minutes\)/,
      );
    });

    it("size-window counts the same as the launcher, over the window bound both size within", async () => {
      // 20:58 and 20:59 at 0.01/s: the bound (⌈lines ÷ 0.6⌉, at least 5 minutes for 3 lines) reaches 21:00 from both.
      const list = csv("two.csv", "id,email,timezone,send_minute\na,a@example.com,UTC,58\nb,b@example.com,UTC,59\n");
      const sized = await runMain(sizeMain, [
        "--templates",
        "none",
        "--recipients",
        list,
        ...flags,
        "--tps",
        "0.01",
        "--json",
      ]);
      assert.strictEqual(sized.code, 0, sized.stderr);
      const report = JSON.parse(sized.stdout);
      assert.ok(report.quietCheckedMinutes >= 5 && report.windowMinutes <= report.quietCheckedMinutes, sized.stdout);
      assert.deepStrictEqual(report.quiet, { delayed: 2, skipped: 0 });
      const out = path.join(tmp, `run-${++runs}`);
      const launched = await runMain(launchMain, [
        "--templates",
        "none",
        "--campaign",
        "p",
        "--recipients",
        list,
        "--template",
        "t",
        ...flags,
        "--tps",
        "0.01",
        "--dry-run",
        "--json",
        "--out",
        out,
      ]);
      const summary = JSON.parse(launched.stdout);
      assert.deepStrictEqual(
        [summary.window.quietCheckedMinutes, summary.quiet.delayed, summary.window.minutes],
        [report.quietCheckedMinutes, 2, report.windowMinutes],
      );
    });
  });

  describe("(3) in order", () => {
    it("--missed next-day moves step 1 to D+1 09:00 and takes the +12h reminder with it (21:00 D+1, not 21:00 D)", async () => {
      const r = await launch([
        "--date",
        "2026-12-01",
        "--hour",
        "9",
        "--step",
        "+12h:reminder",
        "--missed",
        "next-day",
        "--now",
        "2026-12-01T09:30:00Z",
      ]);
      assert.strictEqual(r.code, 0, r.stderr);
      assert.deepStrictEqual(
        r.plan.map((p) => [p.step, p.utc]),
        [
          [1, "2026-12-02T09:00:00.000Z"],
          [2, "2026-12-02T21:00:00.000Z"],
        ],
      );
      assert.match(r.notes, /step 2 moved to the next day with step 1: 2026-12-02T21:00:00.000Z/);
    });
  });
});

describe("issue 32: every move of a send has its line in notes.csv", function () {
  this.timeout(30_000);
  const NY = csv("ny.csv", "id,email,timezone\nny,ny@example.com,America/New_York\n");
  const LH = csv("lh.csv", "id,email,timezone\nlh,lh@example.com,Australia/Lord_Howe\n");
  const notesOf = (text: string) =>
    (parseCsv(text, { columns: true }) as { line: string; id: string; note: string }[]).map(
      (n) => `${n.line},${n.id},${n.note}`,
    );

  it("a send moved across a DST gap: 02:30 asked on 2026-03-08 in New York is sent at 03:30 EDT, and noted", async () => {
    // 02:00 EST jumps to 03:00 EDT (07:00Z): 02:30 does not exist; moved forward by the gap it is 03:30 EDT, 07:30Z.
    const r = await launch(
      ["--date", "2026-03-08", "--hour", "2", "--minute", "30", "--now", "2026-03-01T00:00:00Z"],
      NY,
    );
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(
      r.plan.map((p) => p.utc),
      ["2026-03-08T07:30:00.000Z"],
    );
    assert.deepStrictEqual(notesOf(r.notes), [
      "2,ny,step 1 at 2026-03-08 02:30 local does not exist in America/New_York (the clock skips it): moved forward to 03:30 local, 2026-03-08T07:30:00.000Z",
    ]);
  });

  it("a later step, or a send moved to the next day, that lands in the gap has its line too (Lord Howe's 30 minutes)", async () => {
    // Lord Howe moves from 02:00 (+10:30) to 02:30 (+11) on 2026-10-04: 02:15 is sent at 02:45, 15:45Z on 10-03.
    const step = await launch(
      ["--date", "2026-10-03", "--hour", "2", "--minute", "15", "--step", "+1d", "--now", "2026-09-20T00:00:00Z"],
      LH,
    );
    assert.strictEqual(step.code, 0, step.stderr);
    assert.deepStrictEqual(notesOf(step.notes), [
      "2,lh,step 2 at 2026-10-04 02:15 local does not exist in Australia/Lord_Howe (the clock skips it): moved forward to 02:45 local, 2026-10-03T15:45:00.000Z",
    ]);
    // 02:15 on 10-03 (+10:30) is 15:45Z on 10-02: missed at 16:00Z, moved to the next day, into the gap.
    const next = await launch(
      [
        "--date",
        "2026-10-03",
        "--hour",
        "2",
        "--minute",
        "15",
        "--missed",
        "next-day",
        "--now",
        "2026-10-02T16:00:00Z",
      ],
      LH,
    );
    assert.strictEqual(next.code, 0, next.stderr);
    assert.deepStrictEqual(notesOf(next.notes), [
      "2,lh,step 1 missed: moved to the next day, 2026-10-03T15:45:00.000Z",
      "2,lh,step 1 at 2026-10-04 02:15 local does not exist in Australia/Lord_Howe (the clock skips it): moved forward to 02:45 local, 2026-10-03T15:45:00.000Z",
    ]);
  });
});
