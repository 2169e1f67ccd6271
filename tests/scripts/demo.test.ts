/**
 * `sendtime demo`: the whole path offline into one folder. Run once in this process (the fixed default clock) and once
 * as a process from another folder (a July clock); each file is checked against what it must hold, computed here:
 * local hours and New York's 9 AM by luxon, the recipient's name from the list, the subject from the template's file.
 */
import { strict as assert } from "assert";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { DateTime } from "luxon";
import { main as demo } from "../../scripts/demo";
import { ROOT, runMain } from "../helpers/cli";

interface Line {
  recipient_id: string;
  step: number;
  variant: string | null;
  send_at: string;
  utc: string;
  timezone: string;
  template: string;
}

const planOf = (dir: string): Line[] =>
  fs
    .readFileSync(path.join(dir, "plan", "plan.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

/** recipients.csv as records by column name (the sample has no quoted field: checked). */
function listOf(dir: string): Record<string, string>[] {
  const [header, ...rows] = fs.readFileSync(path.join(dir, "recipients.csv"), "utf8").trim().split("\n");
  assert.ok(!/"/.test(rows.join("")));
  const names = header.split(",");
  return rows.map((r) => Object.fromEntries(r.split(",").map((v, i) => [names[i], v])));
}

describe("sendtime demo", function () {
  this.timeout(60_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-demo-"));
  const dir = path.join(tmp, "out");
  let run: { code: number; stdout: string; stderr: string };
  before(async () => {
    run = await runMain(demo, ["--out", dir]);
  });

  it("exits 0 and says which files to open, each there", () => {
    assert.strictEqual(run.code, 0, run.stderr);
    const open = run.stdout.slice(run.stdout.indexOf("\nOpen:\n")).trim().split("\n").slice(1);
    assert.deepStrictEqual(
      open.map((l) => l.trim()),
      ["report.html", "email.html", "plan/hours.txt", "stack.txt"].map((f) => path.join(dir, f)),
    );
    for (const f of open) assert.ok(fs.statSync(f.trim()).size > 0, f);
  });

  it("1. the dev stack with the policy pack's verdict: its lines printed, the whole preview in stack.txt", () => {
    const stack = fs.readFileSync(path.join(dir, "stack.txt"), "utf8");
    const first = /^Stack dev: (\d+) resources \(offline preview, mocked account 123456789012\)$/m.exec(stack);
    assert.ok(first, stack.slice(0, 200));
    assert.ok(stack.includes("\nPolicies: policy (config policy/config/dev.json): no violations\n"));
    assert.ok(run.stdout.startsWith(`${first[0]}\nPolicies: policy (config policy/config/dev.json): no violations\n`));
  });

  it("2. the sample list planned: every row, two steps, and the hours histogram sums to the plan's sends by local hour", () => {
    const list = listOf(dir);
    assert.strictEqual(list.length, 3000);
    assert.ok(new Set(list.map((r) => r.timezone).filter(Boolean)).size >= 20, "many zones");
    const summary = JSON.parse(fs.readFileSync(path.join(dir, "plan", "summary.json"), "utf8"));
    assert.strictEqual(summary.recipientsPlanned, list.length);
    assert.match(run.stdout, /^Campaign demo: 3,000 rows → 3,000 recipients planned, 6,000 schedules; 0 rejected$/m);
    const plan = planOf(dir);
    assert.strictEqual(plan.length, 2 * list.length);

    const byHour = new Map<string, number>();
    for (const l of plan) {
      const local = DateTime.fromISO(l.utc, { zone: "utc" }).setZone(l.timezone);
      const hour = `${String(local.hour).padStart(2, "0")}:00`;
      byHour.set(hour, (byHour.get(hour) ?? 0) + 1);
    }
    const hours = fs.readFileSync(path.join(dir, "plan", "hours.txt"), "utf8");
    const rows = [...hours.matchAll(/^ {2}(\d\d:00) +([\d,]+) /gm)].map((m) => [m[1], Number(m[2].replace(/,/g, ""))]);
    assert.deepStrictEqual(new Map(rows as [string, number][]), byHour);
    assert.strictEqual(
      rows.reduce((n, [, c]) => n + (c as number), 0),
      plan.length,
    );
    assert.ok(run.stdout.includes(hours));
  });

  it("3. one recipient's step-1 mail, rendered: their name in email.html, the template's subject in email.txt", () => {
    const line = planOf(dir).find((l) => l.step === 1)!;
    const name = listOf(dir).find((r) => r.id === line.recipient_id)!.first_name;
    const html = fs.readFileSync(path.join(dir, "email.html"), "utf8");
    assert.ok(html.includes(`<p>Hi ${name},</p>`), html);
    assert.ok(!html.includes("{{"));
    const subject = fs.readFileSync(path.join(ROOT, "templates", line.template, "subject.txt"), "utf8").trim();
    assert.ok(fs.readFileSync(path.join(dir, "email.txt"), "utf8").startsWith(`Subject: ${subject}\n\nHi ${name},\n`));
  });

  it("4. the report, text and page: every planned send scheduled and due, and the A/B verdict", () => {
    const plan = planOf(dir);
    const text = fs.readFileSync(path.join(dir, "report.txt"), "utf8");
    for (const v of ["A", "B"]) {
      const n = plan.filter((l) => l.variant === v).length.toLocaleString("en-US");
      assert.match(text, new RegExp(`^  all   ${v} +${n} +${n} `, "m"));
    }
    const verdict = /^ {2}verdict: (B beats A on opens \([^)]*\))$/m.exec(text);
    assert.ok(verdict, text);
    assert.ok(fs.readFileSync(path.join(dir, "report.html"), "utf8").includes(verdict[1]));
    assert.ok(run.stdout.includes(`\n  verdict: ${verdict[1]}\n`));
  });

  it("as a process from another folder (node bin/sendtime.js demo): the same stack, and in July an EST row at 9 AM New York time", () => {
    const elsewhere = path.join(tmp, "elsewhere");
    fs.mkdirSync(elsewhere);
    const r = spawnSync(
      process.execPath,
      [path.join(ROOT, "bin", "sendtime.js"), "demo", "--out", "july", "--now", "2026-07-01T12:00:00Z"],
      { cwd: elsewhere, encoding: "utf8" },
    );
    assert.strictEqual(r.status, 0, r.stderr);
    const july = path.join(elsewhere, "july");
    assert.strictEqual(
      fs.readFileSync(path.join(july, "stack.txt"), "utf8"),
      fs.readFileSync(path.join(dir, "stack.txt"), "utf8"),
    );
    const est = listOf(july).filter((row) => row.timezone === "EST");
    assert.ok(est.length > 0);
    const plan = planOf(july);
    for (const row of est) {
      const sends = plan.filter((l) => l.recipient_id === row.id);
      assert.strictEqual(sends.length, 2, row.id);
      for (const [i, l] of sends.entries()) {
        // The first send two days after --now, the second three days later; 9 AM EDT, 13:00 UTC (not EST's 14:00).
        const expected = DateTime.fromObject(
          { year: 2026, month: 7, day: 3 + 3 * i, hour: 9 },
          { zone: "America/New_York" },
        );
        assert.strictEqual(l.utc, expected.toUTC().toISO(), row.id);
        assert.strictEqual(l.utc.slice(11, 16), "13:00");
      }
    }
  });

  it("bad flags: one line, exit 2", async () => {
    assert.deepStrictEqual(await runMain(demo, ["--now", "tomorrow"]), {
      code: 2,
      stdout: "",
      stderr:
        "error: --now tomorrow: expected an ISO 8601 instant with Z or an offset, such as 2026-12-01T08:00:00Z or 2026-12-01T09:00:00+01:00\n",
    });
    const file = path.join(tmp, "a-file");
    fs.writeFileSync(file, "");
    const r = await runMain(demo, ["--out", file]);
    assert.strictEqual(r.code, 2);
    assert.match(r.stderr, /^error: --out .*a-file: cannot write \((EEXIST|ENOTDIR)\)\n$/);
  });
});
