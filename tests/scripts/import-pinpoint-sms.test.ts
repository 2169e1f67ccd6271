/**
 * import-pinpoint and SMS endpoints (issue 37): every SMS case of an export (tests/fixtures/pinpoint/sms-export) is
 * imported (a row of its own, or the number of its user's EMAIL row) or skipped with its reason, and the opted-out
 * numbers are listed for the stack's opt-out list. The expected numbers are written out by hand in E.164.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "csv-parse/sync";
import { main } from "../../scripts/import-pinpoint";
import { ROOT } from "../helpers/cli";

const FIXTURE = path.join(ROOT, "tests", "fixtures", "pinpoint", "sms-export");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pinpoint-sms-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const csv = (file: string) => parse(fs.readFileSync(file, "utf8"), { columns: true }) as Record<string, string>[];

describe("import-pinpoint: SMS endpoints", () => {
  const out = path.join(tmp, "out");
  let code = -1;
  let stdout = "";
  before(async () => {
    code = await main(["--endpoints", FIXTURE, "--out", out, "--json"], { out: (t) => (stdout += t), err: () => {} });
  });

  it("imports each usable SMS endpoint: a row of its own, or its user's EMAIL row's phone", () => {
    assert.strictEqual(code, 0);
    const rows = csv(path.join(out, "recipients.csv")).map((r) => [r.id, r.email, r.timezone, r.country, r.phone]);
    assert.deepStrictEqual(
      rows,
      [
        // cy's EMAIL row takes cy's number.
        ["cy", "cy@example.com", "", "GB", "+447911123456"],
        // Users with no EMAIL endpoint: rows of their own, email empty, after the EMAIL rows, in export order.
        ["ana", "", "America/Los_Angeles", "US", "+12065550101"],
        // A national number read with the endpoint's Location.Country (USA → US): (206) 555-0102 is +1 206 555 0102.
        ["bo", "", "", "US", "+12065550102"],
        // No User.UserId: the endpoint Id is the row's id.
        ["s-noid", "", "", "", "+12065550108"],
        // The latest line of s-old counts.
        ["jo", "", "", "", "+12065550111"],
      ].filter((r) => r.length),
    );
  });

  it("skips every other SMS line with its reason", () => {
    const skipped = csv(path.join(out, "skipped.csv")).map((r) => [r.line, r.endpoint_id, r.reason]);
    assert.deepStrictEqual(skipped, [
      ["5", "s-stop", "opted-out"],
      ["6", "s-inactive", "inactive"],
      ["7", "s-noaddress", "missing-address"],
      ["8", "s-invalid", "invalid-number"],
      ["9", "s-nocountry", "invalid-number"],
      ["10", "s-second", "duplicate-user"],
      // +12065550104 is opted out first on line 5, written +1 206-555-0104: the same number.
      ["11", "s-elsewhere", "opted-out-elsewhere"],
      ["13", "", "missing-id"],
      ["14", "s-old", "superseded"],
      ["16", "s-stop2", "opted-out"],
      ["17", "s-stop3", "opted-out"],
    ]);
    const detail = (id: string) => csv(path.join(out, "skipped.csv")).find((r) => r.endpoint_id === id)!.detail;
    assert.match(detail("s-nocountry"), /has no \+ and country code .* the row has no country/);
    assert.match(detail("s-second"), /^user ana's number is .*endpoints\.jsonl:1's/);
    assert.match(detail("s-elsewhere"), /endpoints\.jsonl:5 opts \+12065550104 out$/);
  });

  it("lists each opted-out number once, in E.164, with the first line opting it out", () => {
    const optOuts = csv(path.join(out, "sms-opt-outs.csv")).map((r) => [r.phone, path.basename(r.file), r.line]);
    assert.deepStrictEqual(optOuts, [
      ["+12065550104", "endpoints.jsonl", "5"],
      ["+12065550112", "endpoints.jsonl", "16"],
    ]);
    const json = JSON.parse(stdout) as { endpoints: { sms: unknown; recipients: number } };
    assert.deepStrictEqual(json.endpoints.sms, { endpoints: 16, intoEmailRows: 1, ownRows: 4, optOuts: 2 });
    assert.strictEqual(json.endpoints.recipients, 5);
  });
});
