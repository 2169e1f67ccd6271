/**
 * A Pinpoint campaign whose time has passed: import-pinpoint says so (its printed command would plan nothing), judged
 * against `--now` (default: the clock), so the repository's fixture (2026-12-01 09:00 at UTC-05) reads the same on
 * any day when the clock is given.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as importPinpoint } from "../../scripts/import-pinpoint";
import { ROOT, runMain } from "../helpers/cli";

const FIXTURES = path.join(ROOT, "tests", "fixtures", "pinpoint");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pinpoint-passed-"));

async function notesAt(now: string, file = path.join(FIXTURES, "campaign-ab.json")) {
  const r = await runMain(importPinpoint, [
    "--campaign-file",
    file,
    "--json",
    "--now",
    now,
    "--out",
    fs.mkdtempSync(path.join(tmp, "out-")),
  ]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout).campaign.notes as { setting: string; value: string; instead: string }[]).filter(
    (n) => n.setting === "Schedule.StartTime",
  );
}

describe("import-pinpoint: a campaign whose time has passed", () => {
  it("before its time: no such note (a control)", async () => {
    assert.deepEqual(await notesAt("2026-11-30T12:00:00Z"), []);
  });

  // By hand: 09:00 on 2026-12-01 is last reached at UTC-12 (Etc/GMT+12), at 2026-12-01T21:00Z.
  it("while some zone has yet to reach 09:00 (20:59Z): no such note; the launch's --missed handles the zones passed", async () => {
    assert.deepEqual(await notesAt("2026-12-01T20:59:00Z"), []);
  });

  it("once 09:00 has passed in every zone (21:01Z): one note, saying the command would plan nothing and what to give", async () => {
    const [passed, ...more] = await notesAt("2026-12-01T21:01:00Z");
    assert.deepEqual(more, []);
    assert.match(passed.value, /2026-12-01 09:00 has passed in every zone \(now 2026-12-01T21:01:00Z\)/);
    assert.match(passed.instead, /the command plans nothing/);
    assert.match(passed.instead, /--date a day to come/);
  });

  it("an instant (IsLocalTime false) has passed the moment it has", async () => {
    const c = JSON.parse(fs.readFileSync(path.join(FIXTURES, "campaign-ab.json"), "utf8"));
    c.CampaignResponse.Schedule.IsLocalTime = false;
    const file = path.join(tmp, "instant.json");
    fs.writeFileSync(file, JSON.stringify(c));
    // StartTime 2026-12-01T14:00:00.000Z.
    assert.deepEqual(await notesAt("2026-12-01T13:59:00Z", file), []);
    const [passed] = await notesAt("2026-12-01T14:01:00Z", file);
    assert.match(passed.value, /2026-12-01T14:00:00Z has passed \(now 2026-12-01T14:01:00Z\)/);
  });

  it("a bad --now is one line, exit 2", async () => {
    const r = await runMain(importPinpoint, [
      "--campaign-file",
      path.join(FIXTURES, "campaign-ab.json"),
      "--now",
      "soon",
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--now/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  });
});
