/**
 * One exit-code rule across commands (a rejected row is written with its reason and does not change the exit code;
 * 1 is for the whole run), no flag accepted that a command ignores, --timeout-seconds wherever AWS is called, and
 * rejections with their reasons wherever --json is printed.
 */
import { strict as assert } from "assert";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { main as launch } from "../../../../scripts/launch-campaign";
import { main as sizeWindow } from "../../../../scripts/size-window";
import { main as enrolMain } from "../../../../scripts/enrol";
import { main as importPinpoint } from "../../../../scripts/import-pinpoint";
import { main as cancel } from "../../../../scripts/cancel-campaign";
import { main as reschedule } from "../../../../scripts/reschedule";
import { main as report } from "../../../../scripts/campaign-report";
import { EXIT_CODES } from "../../../../scripts/lib/cli/exit-codes";
import { spawn } from "child_process";
import { ROOT, runMain } from "../../../helpers/cli";
import { renderWith } from "../../../helpers/stack";
import { startLedger } from "../../../helpers/enrolment-ledger";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-exit-"));
/** 8 rows, 4 of them rejected (duplicate id, missing id, invalid email, wrong field count). */
const LIST = path.join(ROOT, "tests/fixtures/campaign.csv");
const NOW = "2026-03-10T18:05:02Z";
const TIMING = ["--date", "2026-03-20", "--hour", "9", "--now", NOW, "--templates", "none"];
/** A script in its own process, without blocking this one (the test's local endpoint must answer, or hang, meanwhile). */
function runScriptAsync(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [require.resolve("ts-node/dist/bin"), "--transpile-only", path.join(ROOT, script), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
    },
  );
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}
const enrol = (argv: string[], io: Parameters<typeof enrolMain>[1]) => enrolMain(argv, io, () => Date.parse(NOW));

describe("one exit-code rule for rejected rows, and flags that mean something", function () {
  this.timeout(60_000);
  let outputs: string;
  before(async () => {
    outputs = path.join(tmp, "outputs.json");
    fs.writeFileSync(outputs, JSON.stringify((await renderWith()).outputs));
  });

  it("the same list with 4 bad rows: launch-campaign, size-window and enrol all exit 0, each naming the 4 with reasons", async () => {
    const launched = await runMain(launch, [
      ...["--campaign", "autumn", "--recipients", LIST, "--template", "t", ...TIMING],
      ...["--dry-run", "--json", "--out", path.join(tmp, "four")],
    ]);
    assert.strictEqual(launched.code, 0, launched.stderr);
    assert.strictEqual(JSON.parse(launched.stdout).rejected.total, 4);
    assert.strictEqual(
      fs
        .readFileSync(path.join(tmp, "four", "rejects.csv"), "utf8")
        .trim()
        .split("\n").length,
      1 + 4,
    );

    const sized = await runMain(sizeWindow, ["--recipients", LIST, ...TIMING, "--json"]);
    assert.strictEqual(sized.code, 0, sized.stderr);
    const reasons = JSON.parse(sized.stdout).rejected;
    assert.strictEqual(
      Object.values(reasons as Record<string, number>).reduce((a, b) => a + b, 0),
      4,
    );

    const enrolled = await runMain(enrol, [
      "--journey",
      "onboarding",
      "--recipients",
      LIST,
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
    ]);
    assert.strictEqual(enrolled.code, 0, enrolled.stderr);
    assert.match(enrolled.stdout, /4 enrolled .* 4 rejected/);
  });

  it("enrol --dry-run --json keeps its array of requests and names every rejection with its reason on stderr", async () => {
    const r = await runMain(enrol, [
      ...["--journey", "onboarding", "--recipients", LIST, "--outputs", outputs, "--now", NOW],
      ...["--dry-run", "--json"],
    ]);
    assert.strictEqual(r.code, 0, r.stderr);
    const requests = JSON.parse(r.stdout);
    assert.ok(Array.isArray(requests) && requests.length === 12 && requests.every((q: { Name?: string }) => q.Name));
    const rejected = r.stderr.split("\n").filter((l) => l.startsWith("rejected "));
    assert.strictEqual(rejected.length, 4, r.stderr);
    for (const reason of ["duplicate-id", "missing-id", "invalid-email", "wrong-field-count"])
      assert.ok(
        rejected.some((l) => l.includes(reason)),
        reason,
      );

    // One event without an address: `[]` on stdout is no longer all it says.
    const event = path.join(tmp, "no-address.json");
    fs.writeFileSync(
      event,
      JSON.stringify({
        source: "com.example.app",
        "detail-type": "UserSignedUp",
        time: "2026-03-10T18:05:00Z",
        detail: { recipient: { id: "u-1" } },
      }),
    );
    const one = await runMain(enrol, [
      "--journey",
      "onboarding",
      "--event",
      event,
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
      "--json",
    ]);
    assert.strictEqual(one.stdout, "[]\n");
    assert.match(one.stderr, /^rejected .*no-address\.json u-1 missing-email: detail\.recipient\.email is missing$/m);
    assert.strictEqual(one.code, 1, "every subscriber rejected: nothing to enrol");
  });

  it("every row rejected is a finding of the whole run: exit 1 from launch-campaign, size-window, enrol and import-pinpoint", async () => {
    const bad = path.join(tmp, "all-bad.csv");
    fs.writeFileSync(bad, "id,email,timezone\nx1,not-an-email,UTC\n,nobody@example.com,UTC\n");
    const launched = await runMain(launch, [
      ...["--campaign", "autumn", "--recipients", bad, "--template", "t", ...TIMING],
      ...["--dry-run", "--out", path.join(tmp, "none")],
    ]);
    assert.strictEqual(launched.code, 1, launched.stdout);
    const sized = await runMain(sizeWindow, ["--recipients", bad, ...TIMING]);
    assert.strictEqual(sized.code, 1, sized.stdout);
    assert.match(
      sized.stderr,
      /nothing to send: every row of .*all-bad\.csv was rejected \(invalid-email 1, missing-id 1\)/,
    );
    const enrolled = await runMain(enrol, [
      "--journey",
      "onboarding",
      "--recipients",
      bad,
      "--outputs",
      outputs,
      "--now",
      NOW,
      "--dry-run",
    ]);
    assert.strictEqual(enrolled.code, 1, enrolled.stdout);
    assert.match(enrolled.stderr, /nothing to enrol: every subscriber was rejected/);

    const exportDir = path.join(tmp, "export");
    fs.mkdirSync(exportDir);
    fs.writeFileSync(
      path.join(exportDir, "part-1.json"),
      JSON.stringify({
        Id: "e1",
        // A push endpoint: never a recipient (an SMS endpoint now can be one).
        ChannelType: "APNS",
        Address: "device-token",
        EndpointStatus: "ACTIVE",
        OptOut: "NONE",
      }) + "\n",
    );
    const imported = await runMain(importPinpoint, ["--endpoints", exportDir, "--out", path.join(tmp, "imported")]);
    assert.strictEqual(imported.code, 1, imported.stderr);
    assert.match(imported.stderr, /no endpoint could be imported: 1 skipped \(not-email 1\), listed in .*skipped\.csv/);
  });

  it("no flag accepted that a command ignores: enrol refuses --bucket, --dlq-url and --state-machine-arn (exit 2)", async () => {
    const base = ["--journey", "onboarding", "--recipients", LIST, "--outputs", outputs, "--now", NOW, "--dry-run"];
    for (const flag of ["--bucket", "--dlq-url", "--state-machine-arn"]) {
      const r = await runMain(enrol, [...base, flag, "x"]);
      assert.strictEqual(r.code, 2, flag);
      assert.match(
        r.stderr,
        new RegExp(`^error: unknown flag ${flag}( \\(did you mean --[a-z-]+\\?\\))? \\(see --help\\)\\n$`),
      );
    }
    const cases: [typeof launch, string[], string][] = [
      [launch, ["--campaign", "autumn"], "--dlq-url"],
      [cancel, ["--campaign", "autumn"], "--bucket"],
      [cancel, ["--campaign", "autumn"], "--dlq-url"],
      [reschedule, ["--campaign", "autumn"], "--bucket"],
      [report, ["--campaign", "autumn"], "--state-machine-arn"],
    ];
    for (const [main, args, flag] of cases) {
      const r = await runMain(main, [...args, flag, "x"]);
      assert.strictEqual(r.code, 2, `${flag}: ${r.stderr}`);
      assert.match(r.stderr, /unknown flag/);
    }
  });

  it("enrol --timeout-seconds bounds the whole run: a Scheduler that never answers ends it in time, exit 1", async () => {
    const server = http.createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    // The ledger answers (each enrolment is claimed there first); Scheduler does not.
    const ledger = await startLedger(JSON.parse(fs.readFileSync(outputs, "utf8")).ledgerTableName);
    const env = {
      AWS_ENDPOINT_URL_DYNAMODB: ledger.url,
      AWS_ENDPOINT_URL_SCHEDULER: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
      AWS_REGION: "us-east-1",
    };
    try {
      // In its own process: no other test's SDK mock can answer for the endpoint.
      const started = Date.now();
      const r = runScriptAsync(
        "scripts/enrol.ts",
        [
          ...["--journey", "onboarding", "--recipients", LIST, "--outputs", outputs, "--now", "2099-03-10T18:10:00Z"],
          ...["--timeout-seconds", "0.5"],
        ],
        env,
      );
      const done = await r;
      assert.strictEqual(done.code, 1, done.stderr);
      assert.match(done.stderr, /no answer within 0\.\d+ s|time limit of 0\.5 s \(--timeout-seconds\)/);
      assert.ok(Date.now() - started < 8_000, `${Date.now() - started} ms`);
      const bad = await runMain(enrol, [
        "--journey",
        "onboarding",
        "--event",
        LIST,
        "--outputs",
        outputs,
        "--timeout-seconds",
        "0",
      ]);
      assert.strictEqual(bad.code, 2);
      assert.match(bad.stderr, /--timeout-seconds 0: must be a number of seconds from 0.1 to 86400/);
    } finally {
      server.closeAllConnections();
      server.close();
      await ledger.close();
    }
  });

  it("every command's exit codes are in one table, and its help shows its row", () => {
    for (const [script, codes] of Object.entries(EXIT_CODES)) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const command = require(path.join(ROOT, "scripts", `${script}.ts`)).COMMAND;
      assert.deepStrictEqual(command.exitCodes, codes, script);
    }
  });
});
