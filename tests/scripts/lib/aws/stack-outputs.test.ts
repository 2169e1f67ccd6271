import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { readStackOutputs, requireOutputs } from "../../../../scripts/lib/aws/stack-outputs";
import { UsageError } from "../../../../infra/core/errors";

/** A stand-in `pulumi` on PATH that records its arguments and prints outputs, or fails like the CLI does. */
function withFakePulumi(script: string, run: (argsFile: string) => void) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pulumi-"));
  const argsFile = path.join(dir, "args");
  fs.writeFileSync(path.join(dir, "pulumi"), `#!/bin/sh\necho "$@" > "${argsFile}"\n${script}\n`, { mode: 0o755 });
  const saved = process.env.PATH;
  process.env.PATH = `${dir}${path.delimiter}${saved}`;
  try {
    run(argsFile);
  } finally {
    process.env.PATH = saved;
  }
}

describe("stack outputs", () => {
  it("--stack runs `pulumi stack output --json --stack NAME`; flags override single outputs", () =>
    withFakePulumi(
      `echo '{"bucketName":"recipients-1","stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:sm","region":"us-east-1"}'`,
      (argsFile) => {
        const o = readStackOutputs({ stack: "prod", overrides: { region: "eu-west-1" } });
        assert.strictEqual(fs.readFileSync(argsFile, "utf8").trim(), "stack output --json --stack prod");
        assert.deepStrictEqual(o, {
          bucketName: "recipients-1",
          stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sm",
          region: "eu-west-1",
        });
      },
    ));

  it("a failing pulumi is one line with its last error line", () =>
    withFakePulumi(`echo "error: no stack named 'nope' found" >&2; exit 255`, () => {
      assert.throws(
        () => readStackOutputs({ stack: "nope" }),
        (e: unknown) =>
          e instanceof UsageError &&
          e.message === "pulumi stack output --stack nope failed: error: no stack named 'nope' found",
      );
    }));

  it("a pulumi that never answers is one line, not a hang", () =>
    withFakePulumi(`exec sleep 30`, () => {
      const started = Date.now();
      assert.throws(
        () => readStackOutputs({ stack: "prod", pulumiTimeoutMs: 500 }),
        (e: unknown) =>
          e instanceof UsageError && e.message === "pulumi stack output --stack prod: no answer within 0.5 s",
      );
      assert.ok(Date.now() - started < 10_000);
    }));

  it("says which outputs are missing and how to give them", () => {
    assert.throws(
      () => requireOutputs({ region: "us-east-1" }, ["bucketName", "stateMachineArn"], { bucketName: "bucket" }),
      /missing stack outputs: bucketName \(--bucket\), stateMachineArn; give --stack NAME, --outputs FILE, or the flags/,
    );
  });

  it("refuses outputs the scripts cannot use, naming the output and what is allowed (issue 10, item 6)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-outputs-"));
    const cases: [Record<string, unknown>, string][] = [
      [{ createScheduleTps: 0 }, "output createScheduleTps is 0: expected the CreateSchedule quota, a number above 0"],
      [
        { createScheduleTps: -100 },
        "output createScheduleTps is -100: expected the CreateSchedule quota, a number above 0",
      ],
      [
        { createScheduleTps: "100" },
        'output createScheduleTps is "100": expected the CreateSchedule quota, a number above 0',
      ],
      [
        { defaultWindowMinutes: 0 },
        "output defaultWindowMinutes is 0: expected a whole number of minutes from 1 to 1440",
      ],
      [{ stateMachineArn: 42 }, "output stateMachineArn is 42: expected a string"],
    ];
    for (const [outputs, message] of cases) {
      const file = path.join(dir, "outputs.json");
      fs.writeFileSync(file, JSON.stringify(outputs));
      assert.throws(
        () => readStackOutputs({ outputsFile: file }),
        (e: unknown) => e instanceof UsageError && e.message === `${file}: ${message}`,
      );
    }
    fs.writeFileSync(
      path.join(dir, "ok.json"),
      JSON.stringify({ createScheduleTps: 2500, defaultWindowMinutes: 15, region: "us-east-1" }),
    );
    assert.strictEqual(readStackOutputs({ outputsFile: path.join(dir, "ok.json") }).createScheduleTps, 2500);
  });
});
