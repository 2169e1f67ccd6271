/**
 * Inputs that must never give a plan that mails someone twice, at the wrong hour, or with mangled text (issue 9),
 * and output folders that never hold a plan that could be mistaken for this run's (issue 10).
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PlanRow } from "../../infra/plan-row";
import { main } from "../../scripts/launch-campaign";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-safety-"));
let n = 0;
const write = (text: string | Buffer, name = `in-${++n}.csv`) => {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, text);
  return f;
};
const BASE = ["--campaign", "t", "--template", "tpl", "--date", "2026-12-01", "--hour", "9", "--now", "2026-11-29T00:00:00Z", "--dry-run"];

/** A dry run in-process; checks that every row is accounted for whenever a summary is written. */
async function plan(file: string, ...more: string[]) {
  const out = path.join(tmp, `out-${++n}`);
  const r = await runMain(main, ["--recipients", file, ...BASE, "--out", out, ...more]);
  const read = (f: string) => (fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : undefined);
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
    const bytes = Buffer.concat([Buffer.from("id,email,name\na1,a@example.com,Zo"), Buffer.from([0xeb]), Buffer.from("\n")]);
    const file = write(bytes);
    const r = await plan(file);
    assert.strictEqual(r.code, 2);
    assert.strictEqual(r.stderr, `error: ${file}:2: not UTF-8 (byte offset 33); for a Latin-1 export give --encoding latin1\n`);
    assert.strictEqual(r.summary, null);
  });
  it("a multi-byte character split across read chunks is not an error", async () => {
    const name = "é".repeat(40_000); // 80,000 bytes: crosses the 64 KB read size in the middle of a character
    const r = await plan(write(`id,email,name\na1,a@example.com,x${name}\n`));
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.rows[0].template_data.name, "x" + name);
  });
  it("--encoding latin1 reads such an export", async () => {
    const bytes = Buffer.concat([Buffer.from("id,email,name\na1,a@example.com,Zo"), Buffer.from([0xeb]), Buffer.from("\n")]);
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
