/**
 * The errors a newcomer meets first, each one line saying what is wrong and what to do: a file that is not there,
 * a list saved with semicolons or tabs, no AWS credentials; and the one place that turns an error's kind into the
 * exit code.
 */
import { strict as assert } from "assert";
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main as sizeWindow } from "../../scripts/size-window";
import { main as launch } from "../../scripts/launch-campaign";
import { main as enrol } from "../../scripts/enrol";
import { main as importPinpoint } from "../../scripts/import-pinpoint";
import { main as campaignReport } from "../../scripts/campaign-report";
import { main as sendTest } from "../../scripts/send-test";
import { main as listCampaigns } from "../../scripts/list-campaigns";
import { main as preview } from "../../scripts/preview";
import { failure } from "../../scripts/lib/cli/run";
import { DeadlineExceeded, FindingsError, InputError, InternalError, UsageError } from "../../infra/core/errors";
import { ROOT, runMain } from "../helpers/cli";
import { startEndpoint } from "../helpers/aws-endpoint";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-errors-"));
const NOW = "2026-03-10T18:05:02Z";
const TIMING = ["--date", "2026-03-20", "--hour", "9", "--now", NOW];
const OUTPUTS = path.join(tmp, "outputs.json");
fs.writeFileSync(OUTPUTS, JSON.stringify({ region: "us-east-1", bucketName: "b" }));

describe("error messages a newcomer meets", function () {
  this.timeout(60_000);

  it("a file that is not there is `FILE: no such file` (exit 2), whichever command reads it, never Node's ENOENT", async () => {
    const missing = (name: string) => path.join(tmp, "absent", name);
    const cases: [string, (argv: string[], io: never) => Promise<number>, string[], string][] = [
      [
        "size-window --recipients",
        sizeWindow,
        ["--recipients", missing("recipients.csv"), ...TIMING],
        "recipients.csv",
      ],
      [
        "launch-campaign --recipients",
        launch,
        [
          "--campaign",
          "a",
          "--recipients",
          missing("list.csv"),
          "--template",
          "t",
          "--templates",
          "none",
          ...TIMING,
        ].concat(["--dry-run", "--out", path.join(tmp, "out")]),
        "list.csv",
      ],
      ["launch-campaign --config", launch, ["--config", missing("campaign.yaml")], "campaign.yaml"],
      [
        "enrol --journeys",
        enrol,
        ["--journey", "j", "--journeys", missing("journeys.yaml"), "--recipients", missing("x.csv")].concat([
          "--outputs",
          OUTPUTS,
          "--now",
          NOW,
          "--dry-run",
        ]),
        "journeys.yaml",
      ],
      [
        "import-pinpoint --campaign-file",
        importPinpoint,
        ["--campaign-file", missing("campaign.json")],
        "campaign.json",
      ],
      [
        "campaign-report --conversions",
        campaignReport,
        ["--campaign", "a", "--outputs", OUTPUTS, "--conversions", missing("conversions.csv")],
        "conversions.csv",
      ],
      ["list-campaigns --outputs", listCampaigns, ["--outputs", missing("stack.json")], "stack.json"],
      [
        "send-test --recipients",
        sendTest,
        ["--template", "spring-sale", "--recipients", missing("rows.csv"), "--row", "1"].concat([
          "--render",
          path.join(tmp, "mail.html"),
        ]),
        "rows.csv",
      ],
      ["preview --policy-config", preview, ["--policy-config", missing("policy.json")], "policy.json"],
    ];
    for (const [what, main, argv, name] of cases) {
      const r = await runMain(main as never, argv);
      assert.strictEqual(r.code, 2, `${what}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /ENOENT|no such file or directory/, what);
      assert.match(
        r.stderr,
        new RegExp(`^error: (--[a-z-]+ )?\\S*absent/${name.replace(".", "\\.")}: no such file$`, "m"),
        what,
      );
    }
  });

  it("a list separated by semicolons or tabs is named as such, with what sendtime reads (RFC 4180 commas)", async () => {
    const semi = path.join(tmp, "semicolons.csv");
    fs.writeFileSync(semi, "id;email;timezone\nu1;ann@example.com;Europe/Paris\n");
    const tabs = path.join(tmp, "tabs.csv");
    fs.writeFileSync(tabs, "id\temail\ttimezone\nu1\tann@example.com\tEurope/Paris\n");
    for (const [file, separator] of [
      [semi, '";"'],
      [tabs, "tabs"],
    ]) {
      const expected = new RegExp(
        `^error: ${file.replace(/[.\\]/g, "\\$&")}:1: the header is separated by ${separator}, not commas: sendtime reads comma-separated CSV \\(RFC 4180\\)`,
        "m",
      );
      const sized = await runMain(sizeWindow, ["--recipients", file, ...TIMING]);
      assert.strictEqual(sized.code, 2, sized.stderr);
      assert.match(sized.stderr, expected);
      const launched = await runMain(launch, [
        ...["--campaign", "a", "--recipients", file, "--template", "t", "--templates", "none", ...TIMING],
        ...["--dry-run", "--out", path.join(tmp, "sep")],
      ]);
      assert.strictEqual(launched.code, 2, launched.stderr);
      assert.match(launched.stderr, expected);
    }
    // One column holding a semicolon, with id and email beside it, is a CSV like any other.
    const fine = path.join(tmp, "fine.csv");
    fs.writeFileSync(fine, 'id,email,"note;more"\nu1,ann@example.com,x\n');
    assert.strictEqual((await runMain(sizeWindow, ["--recipients", fine, ...TIMING])).code, 0);
  });

  it("no AWS credentials: a real CLI run says none were found and how to give them (AWS_PROFILE, SSO, keys), exit 1", async () => {
    const endpoint = await startEndpoint(() => ({ json: { ScheduleGroups: [] } }));
    const home = fs.mkdtempSync(path.join(tmp, "home-"));
    try {
      // No AWS_* variable but the local endpoint and the region, and a HOME with no ~/.aws.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AWS_")));
      Object.assign(env, { HOME: home, AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_SCHEDULER: endpoint.url });
      Object.assign(env, { AWS_ENDPOINT_URL_S3: endpoint.url });
      const r = await runCli(["list-campaigns", "--outputs", OUTPUTS, "--timeout-seconds", "20"], env);
      assert.strictEqual(r.code, 1, r.stderr);
      assert.deepEqual(endpoint.requests, [], "nothing was sent");
      assert.doesNotMatch(r.stderr, /Could not load credentials from any providers/);
      const lines = r.stderr.trim().split("\n");
      assert.strictEqual(lines.length, 1, r.stderr);
      assert.match(
        lines[0],
        /^error: ListScheduleGroups .*: no AWS credentials found: set AWS_PROFILE to a profile of ~\/\.aws\/config \(for SSO, after aws sso login --profile NAME\), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY$/,
      );
      const named = await runCli(["list-campaigns", "--outputs", OUTPUTS], { ...env, AWS_PROFILE: "work" });
      assert.match(
        named.stderr,
        /: no AWS credentials found for AWS_PROFILE=work \(no such profile in ~\/\.aws\?\): set /,
      );
    } finally {
      await endpoint.close();
    }
  });

  it("the exit code comes from the error's kind, in one place: usage and input 2; findings, deadline, internal and any other 1", () => {
    const cases: [unknown, number][] = [
      [new UsageError("--hour 24: must be …"), 2],
      [new InputError("list.csv: no such file"), 2],
      [new FindingsError("no window fits"), 1],
      [new DeadlineExceeded("ListSchedules: no result within 30 s"), 1],
      [new InternalError("a plan write after it was closed"), 1],
      [new TypeError("x is undefined"), 1],
    ];
    for (const [e, code] of cases) assert.strictEqual(failure(e).code, code, String(e));
    assert.strictEqual(
      failure(new InternalError("a plan write after it was closed")).line,
      "error: internal: a plan write after it was closed (a bug in sendtime: please report it; SENDTIME_DEBUG=1 prints the stack)\n",
    );
    assert.strictEqual(failure(new InputError("a\nb")).line, "error: a\n");
  });

  it("every error class sendtime declares extends one of the kinds (infra/core/errors.ts)", () => {
    const kinds = ["InputError", "UsageError", "FindingsError", "DeadlineExceeded", "InternalError"];
    const declared: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(rel);
        else if (rel.endsWith(".ts") && rel !== path.join("infra", "core", "errors.ts"))
          for (const m of fs.readFileSync(path.join(ROOT, rel), "utf8").matchAll(/class (\w+) extends (\w+)/g))
            if (/Error$|Exceeded$/.test(m[2]) || m[2] === "Error") declared.push(`${rel}: ${m[1]} extends ${m[2]}`);
      }
    };
    ["infra", "scripts", "policy"].forEach(walk);
    const known = new Set(kinds);
    // A class extending another declared error class extends a kind through it.
    for (const line of declared) known.add(/: (\w+) extends/.exec(line)![1]);
    assert.deepEqual(
      declared.filter((line) => /extends Error$/.test(line) || !known.has(/extends (\w+)$/.exec(line)![1])),
      [],
    );
    assert.ok(declared.length >= 10, declared.join("\n"));
  });
});

/** `sendtime …` in its own process (the local endpoint must be able to answer meanwhile). */
function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, "bin", "sendtime.js"), ...args], { cwd: ROOT, env });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}
