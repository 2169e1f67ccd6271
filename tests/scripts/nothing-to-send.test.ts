/**
 * A launch that would send nothing says why on the console, not only in rejects.csv; `now:` in a campaign file is for
 * dry runs and tests, and a real launch refuses it in one line.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as launch } from "../../scripts/launch-campaign";
import { runMain } from "../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-nothing-"));
const LIST = path.join(tmp, "list.csv");
fs.writeFileSync(
  LIST,
  "id,email,timezone\na1,ann@example.com,America/New_York\na2,bo@example.com,Europe/Paris\na3,bad,Europe/Paris\n",
);

const base = (out: string) => [
  ...["--campaign", "dec", "--recipients", LIST, "--template", "t", "--templates", "none"],
  ...["--date", "2026-12-01", "--hour", "9", "--out", path.join(tmp, out), "--dry-run"],
];

/** The console's last line. */
const last = (text: string) => text.trim().split("\n").pop()!;

describe("launch-campaign: nothing to send says why", () => {
  it("every row's time has passed (by hand: 09:00 New York on 2026-12-01 is 14:00Z, days before --now): the line names it and the way out", async () => {
    const r = await runMain(launch, [...base("passed"), "--now", "2026-12-04T12:00:00Z"]);
    assert.equal(r.code, 1);
    const line = last(r.stdout + r.stderr);
    assert.match(line, /^Nothing would be sent: /);
    assert.match(line, /every row's time has passed \(2 sends due before 2026-12-04T12:05:01\.000Z, --missed skip\)/);
    assert.match(line, /give a later --date, or --missed next-day/);
    // The other cause is named too: the invalid address, with where to read it.
    assert.match(line, /1 row rejected \(invalid-email 1; rejects\.csv\)/);
  });

  it("a plan with sends left prints no such line (a control: the same list a day before)", async () => {
    const r = await runMain(launch, [...base("ok"), "--now", "2026-11-30T12:00:00Z"]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /Nothing would be sent/);
  });

  it("a list whose every row is rejected says so, without blaming the clock", async () => {
    const bad = path.join(tmp, "bad.csv");
    fs.writeFileSync(bad, "id,email\nb1,nobody\nb2,\n");
    const args = [...base("bad"), "--now", "2026-11-30T12:00:00Z"];
    args[args.indexOf(LIST)] = bad;
    const r = await runMain(launch, args);
    assert.equal(r.code, 1);
    const line = last(r.stdout + r.stderr);
    assert.match(line, /^Nothing would be sent: .*2 rows rejected \(invalid-email 2; rejects\.csv\)/);
    assert.doesNotMatch(line, /time has passed/);
  });
});

describe("launch-campaign: now: in a campaign file", () => {
  const file = path.join(tmp, "campaign.yaml");
  fs.writeFileSync(
    file,
    `campaign: dec\nrecipients: list.csv\ntemplate: t\ntemplates: none\ndate: "2026-12-01"\nhour: 9\nnow: 2026-11-30T12:00:00Z\n`,
  );

  it("is taken by a dry run", async () => {
    const r = await runMain(launch, ["--config", file, "--dry-run", "--out", path.join(tmp, "file-dry")]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Dry run: nothing uploaded or started[.;]/);
  });

  it("is refused for a real launch, in one line saying why, before any AWS call", async () => {
    const outputs = path.join(tmp, "outputs.json");
    fs.writeFileSync(outputs, "{}");
    const r = await runMain(launch, ["--config", file, "--outputs", outputs, "--out", path.join(tmp, "file-real")]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`--config ${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: key "now" is for dry runs and tests`),
    );
    assert.ok(!fs.existsSync(path.join(tmp, "file-real")), "nothing planned");
  });
});
