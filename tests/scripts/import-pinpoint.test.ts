import * as assert from "assert";
import { spawn } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as http from "http";
import * as os from "os";
import * as path from "path";
import { gzipSync } from "zlib";
import { parse } from "csv-parse/sync";
import { IANAZone } from "luxon";
import { parseArgs } from "util";
import { main } from "../../scripts/import-pinpoint";
import { main as launch } from "../../scripts/launch-campaign";
import {
  audienceFromFlags,
  baseRuleFromFlags,
  quietTimeFromFlags,
  TIMING_FLAGS,
} from "../../scripts/lib/cli/timing-flags";
import { columnNames, endpointOutcome, SKIP_REASONS } from "../../scripts/lib/pinpoint/endpoints";
import { withEnv } from "../helpers/aws-endpoint";
import { ROOT, runMain } from "../helpers/cli";
import { InputError } from "../../infra/core/errors";

const FIXTURES = "tests/fixtures/pinpoint";
const EXPORT = `${FIXTURES}/export`;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-pinpoint-"));
let runs = 0;

async function run(args: string[]) {
  const out = path.join(tmp, `run-${++runs}`);
  let stdout = "",
    stderr = "";
  const code = await main([...args, "--out", out], { out: (t) => (stdout += t), err: (t) => (stderr += t) });
  const read = (f: string) =>
    fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8") : undefined;
  const csv = (f: string) =>
    read(f) === undefined ? undefined : (parse(read(f)!, { columns: true }) as Record<string, string>[]);
  return {
    code,
    stdout,
    stderr,
    out,
    recipients: csv("recipients.csv"),
    recipientsText: read("recipients.csv"),
    skipped: csv("skipped.csv"),
  };
}

async function rejects(args: string[], pattern: RegExp) {
  await assert.rejects(
    () => run(args),
    (e: unknown) => e instanceof InputError && pattern.test(e.message),
  );
}

describe("import-pinpoint: endpoints → recipient CSV", () => {
  it("writes one row per active, opted-in EMAIL endpoint and skips every other endpoint with its reason", async () => {
    const r = await run(["--endpoints", EXPORT]);
    assert.strictEqual(r.code, 0, r.stderr);
    // Expected by reading the fixture lines one by one (see tests/fixtures/pinpoint/export).
    assert.deepStrictEqual(
      r.recipients!.map((x) => [x.id, x.email, x.timezone]),
      [
        ["u1", "ana@example.com", "America/New_York"],
        ["u2", "bo@example.com", "Europe/Paris"], // its SMS endpoint came first and did not keep it out
        ["u3", "chloe.new@example.com", "Asia/Kolkata"], // the opted-out endpoint of u3 does not count as its row
        ["ep-008", "guest@example.com", ""], // no user: the endpoint Id; no Demographic.Timezone
        ["u7", "femi@example.com", "Mars/Olympus_Mons"],
        ["u9", "grace@example.com", "america/chicago"],
      ],
    );
    assert.deepStrictEqual(
      r.skipped!.map((x) => [path.basename(x.file), x.line, x.endpoint_id, x.user_id, x.reason]),
      [
        // ep-002, u2's SMS endpoint, gives u2's row its phone: imported, not skipped.
        ["endpoints-1.jsonl", "4", "ep-004", "u1", "duplicate-user"],
        ["endpoints-1.jsonl", "5", "ep-005", "u3", "opted-out"],
        ["endpoints-1.jsonl", "7", "ep-007", "u4", "inactive"],
        ["endpoints-2.jsonl", "3", "ep-010", "u8", "invalid-address"],
        ["endpoints-2.jsonl", "4", "ep-011", "u1", "not-email"],
      ],
    );
    assert.match(r.skipped![0].detail, /^user u1 already has row 1 \(/);
    assert.match(r.stdout, /12 read from 2 files → 6 recipients, 5 skipped/);
    assert.match(r.stdout, /ids: 5 from User\.UserId, 1 from the endpoint Id/);
    assert.match(r.stdout, /zones: 1 without Demographic\.Timezone, 1 not an IANA zone name/);
  });

  it("turns attributes into columns: multi-valued joined, clashes renamed, RFC 4180 quoting", async () => {
    const r = await run(["--endpoints", EXPORT]);
    const header = r.recipientsText!.split("\n")[0];
    // The place columns (import-pinpoint-places.test.ts) come before the attributes.
    assert.strictEqual(
      header,
      "id,email,timezone,latitude,longitude,postal_code,country,phone,attr_plan,interests,FirstName,user_plan,attr_email,Note,source",
    );
    const [u1, u2] = r.recipients!;
    // Every fixture endpoint is in Seattle, its Country written "USA"; u2 has an SMS endpoint (line 2), u1 none.
    assert.deepStrictEqual(
      [u1, u2].map((x) => [x.latitude, x.longitude, x.postal_code, x.country, x.phone]),
      [
        ["47.6", "-122.3", "98121", "US", ""],
        ["47.6", "-122.3", "98121", "US", "+12065550100"],
      ],
    );
    assert.strictEqual(u1.interests, "Science;Music;Travel");
    assert.strictEqual(u1.attr_plan, "pro"); // endpoint attribute "plan"
    assert.strictEqual(u1.user_plan, "gold"); // user attribute "plan"
    assert.strictEqual(u2.attr_email, "bo.old@example.com"); // an attribute called "email" never replaces the address
    assert.strictEqual(u2.Note, 'said "hi", then left\nsecond line');
    assert.ok(r.recipientsText!.includes('"said ""hi"", then left\nsecond line"'));
    assert.strictEqual(r.recipients![5].interests, ""); // an empty list
  });

  it("--value-separator joins multi-valued attributes with another separator", async () => {
    const r = await run(["--endpoints", EXPORT, "--value-separator", " | "]);
    assert.strictEqual(r.recipients![0].interests, "Science | Music | Travel");
  });

  it("names columns after the attribute unless a control column or another attribute has the name", () => {
    const names = columnNames([
      { source: "endpoint", name: "Step" },
      { source: "user", name: "send_at" },
      { source: "endpoint", name: "plan" },
      { source: "user", name: "Plan" },
      { source: "endpoint", name: "attr_plan" },
      { source: "user", name: " city " },
      { source: "endpoint", name: "TIMEZONE" },
    ]);
    assert.deepStrictEqual(names, [
      "attr_Step",
      "user_send_at",
      "attr_plan_2",
      "user_Plan",
      "attr_plan",
      "city",
      "attr_TIMEZONE",
    ]);
  });

  it("reads gzip files by their first bytes, whatever their name, and gives the same rows", async () => {
    const dir = path.join(tmp, "gz");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "part-0.jsonl"), gzipSync(fs.readFileSync(`${EXPORT}/endpoints-1.jsonl`)));
    fs.copyFileSync(`${EXPORT}/endpoints-2.jsonl`, path.join(dir, "part-1.gz.txt"));
    const plain = await run(["--endpoints", EXPORT]);
    const gz = await run(["--endpoints", dir]);
    assert.strictEqual(gz.recipientsText, plain.recipientsText);
    assert.deepStrictEqual(
      gz.skipped!.map((x) => x.reason),
      plain.skipped!.map((x) => x.reason),
    );
  });

  it("stops on a truncated gzip file or a line that is not JSON, naming the file and line, and leaves no output", async () => {
    const gz = gzipSync(fs.readFileSync(`${EXPORT}/endpoints-1.jsonl`));
    const cut = path.join(tmp, "cut.gz");
    fs.writeFileSync(cut, gz.subarray(0, gz.length - 20));
    await rejects(["--endpoints", cut], /cut\.gz: read failed after line \d+: not a complete gzip file/);
    const bad = path.join(tmp, "bad.jsonl");
    fs.writeFileSync(bad, fs.readFileSync(`${EXPORT}/endpoints-1.jsonl`, "utf8") + '{"ChannelType": "EMAIL", \n');
    const out = path.join(tmp, "bad-out");
    await assert.rejects(
      () => main(["--endpoints", bad, "--out", out], { out: () => undefined, err: () => undefined }),
      /bad\.jsonl:8: not JSON/,
    );
    assert.deepStrictEqual(fs.readdirSync(out), []);
    await rejects(["--endpoints", path.join(tmp, "missing")], /missing: no such file$/);
  });

  it("every skip reason has a case: endpoint by endpoint", () => {
    const email = { ChannelType: "EMAIL", Address: "a@example.com", Id: "e1" };
    const reasons = [
      endpointOutcome({ ...email, ChannelType: "PUSH" }),
      endpointOutcome({ ...email, EndpointStatus: "INACTIVE" }),
      endpointOutcome({ ...email, OptOut: "ALL" }),
      endpointOutcome({ ...email, Address: "a@@example.com" }),
      endpointOutcome({ ChannelType: "EMAIL", Address: "a@example.com", User: { UserId: " " } }),
      endpointOutcome({ ...email, User: { UserId: JSON.parse('"u\\ud800"') } }),
    ].map((o) => ("skip" in o ? o.skip : "kept"));
    assert.deepStrictEqual(reasons, [
      "not-email",
      "inactive",
      "opted-out",
      "invalid-address",
      "missing-id",
      "invalid-text",
    ]);
    assert.deepStrictEqual(endpointOutcome({ ...email, User: { UserId: 2 ** 53 } }), {
      skip: "imprecise-number",
      detail: "User.UserId is a number past 2^53: its digits are lost when read (export it as a string)",
    });
    // Those need the whole export: above and in import-pinpoint-consent.test.ts.
    assert.deepStrictEqual(SKIP_REASONS.slice(-4), [
      "superseded",
      "opted-out-elsewhere",
      "duplicate-user",
      "duplicate-id",
    ]);
  });

  it("a lone surrogate (valid JSON, not valid Unicode) in an id or a value is skipped as invalid-text, never written as U+FFFD", () => {
    const email = { ChannelType: "EMAIL", Address: "a@example.com", Id: "e1" };
    const lone = (s: string) => JSON.parse(`"${s}"`) as string; // what the export's JSON text "\ud800" parses to
    const cases = [
      [{ ...email, User: { UserId: lone("u\\ud800") } }, "User.UserId is not valid Unicode (a lone surrogate)"],
      [{ ...email, Id: lone("e\\udc00") }, "Id is not valid Unicode (a lone surrogate)"],
      [
        { ...email, Attributes: { plan: [lone("pro\\ud83d")] } },
        "Attributes.plan is not valid Unicode (a lone surrogate)",
      ],
      [
        { ...email, User: { UserId: "u1", UserAttributes: { [lone("n\\ud800")]: ["x"] } } },
        "User.UserAttributes name is not valid Unicode (a lone surrogate)",
      ],
    ] as const;
    for (const [endpoint, detail] of cases)
      assert.deepStrictEqual(endpointOutcome(endpoint), { skip: "invalid-text", detail });
    // A surrogate pair (an emoji) is valid and kept.
    const kept = endpointOutcome({ ...email, User: { UserId: lone("u\\ud83d\\ude00") } });
    assert.ok("recipient" in kept && kept.recipient.id === "u\u{1F600}");
  });

  it("skips a second endpoint whose Id equals an id already written (duplicate-id)", async () => {
    const file = path.join(tmp, "dup-id.jsonl");
    const line = (o: object) =>
      JSON.stringify({ ChannelType: "EMAIL", EndpointStatus: "ACTIVE", OptOut: "NONE", ...o });
    // The user id x1 of one endpoint, then an endpoint without a user whose Id is x1 (the same Id twice is one endpoint
    // read twice: superseded, see import-pinpoint-consent.test.ts).
    const first = line({ Id: "x0", Address: "a@example.com", User: { UserId: "x1" } });
    fs.writeFileSync(file, [first, line({ Id: "x1", Address: "b@example.com" })].join("\n"));
    const r = await run(["--endpoints", file]);
    assert.deepStrictEqual(
      r.skipped!.map((x) => [x.line, x.reason]),
      [["2", "duplicate-id"]],
    );
    assert.match(r.skipped![0].detail, /^id x1 already has row 1$/);
  });
});

describe("import-pinpoint: campaign settings → launch-campaign command", () => {
  const commandOf = (stdout: string) => JSON.parse(stdout).campaign;

  it("maps a one-time local-time campaign with two treatments, a holdout, quiet time and a rate", async () => {
    const r = await run(["--campaign-file", `${FIXTURES}/campaign-ab.json`, "--json", "--recipients", "r.csv"]);
    assert.strictEqual(r.code, 0);
    const c = commandOf(r.stdout);
    // By hand: 14:00Z at UTC-05 is 09:00; Etc/GMT+5 is UTC-05 (POSIX sign); quiet 21:00–07:59 inclusive is
    // 21:00–08:00 exclusive; the campaign's own treatment gets 100 − 10 − 30 − 20 = 40.
    assert.deepStrictEqual(c.command, [
      ...["--campaign", "spring-sale-2026", "--recipients", "r.csv", "--template", "spring-sale"],
      ...["--date", "2026-12-01", "--hour", "9", "--minute", "0", "--default-timezone", "Etc/GMT+5"],
      ...["--quiet-hours", "21:00-08:00", "--quiet", "skip"],
      ...[
        "--variant",
        "Control:40:spring-sale",
        "--variant",
        "Subject-B:30:spring-sale-b",
        "--variant",
        "C:20:spring-sale-2026-C",
      ],
      ...["--holdout", "10", "--tps", "200"],
    ]);
    const settings = c.notes.map((n: { setting: string }) => n.setting);
    for (const s of [
      "SegmentId",
      "Limits.Daily",
      "Limits.Total",
      "Limits.MaximumDuration",
      "Schedule.QuietTime",
      "Schedule.IsLocalTime",
    ])
      assert.ok(settings.includes(s), `a note for ${s}`);
    assert.ok(settings.includes("AdditionalTreatments[1].MessageConfiguration.EmailMessage"));
    assert.ok(settings.includes("MessageConfiguration.EmailMessage.FromAddress") === false); // FromAddress of a treatment
  });

  it("gives distinct treatments distinct SES templates when names must be shortened or rewritten", async () => {
    const ab = JSON.parse(fs.readFileSync(`${FIXTURES}/campaign-ab.json`, "utf8"));
    const c = ab.CampaignResponse;
    // Pinpoint template names reach 128 characters; SES's stop at 64: these three share their first 64.
    const long = "newsletter-december-2026-returning-customers-europe-region-variant-";
    c.TemplateConfiguration.EmailTemplate.Name = `${long}control`;
    c.AdditionalTreatments[0].TemplateConfiguration.EmailTemplate.Name = `${long}b`;
    // Two treatments with content of their own, named after a 50-character campaign id and the treatment name.
    c.Name = "Holiday promotion for returning customers in Europe";
    c.AdditionalTreatments[1].TreatmentName = "Subject Alpha";
    c.AdditionalTreatments.push({
      ...c.AdditionalTreatments[1],
      Id: "3",
      TreatmentName: "Subject Beta",
      SizePercent: 10,
    });
    c.AdditionalTreatments[0].SizePercent = 20;
    const file = path.join(tmp, "long-names.json");
    fs.writeFileSync(file, JSON.stringify(ab));
    const r = await run(["--campaign-file", file, "--json", "--recipients", "r.csv"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const command: string[] = commandOf(r.stdout).command;
    const templates = command.flatMap((a, i) => (command[i - 1] === "--variant" ? [a.split(":")[2]] : []));
    // A name SES would not take becomes its SES characters, cut to leave room for "-" and the first 8 hex digits of
    // its sha256: distinct sources, distinct names.
    const expected = (source: string) =>
      `${source.replace(/[^A-Za-z0-9_-]+/g, "-").slice(0, 55)}-${createHash("sha256").update(source).digest("hex").slice(0, 8)}`;
    const id = "holiday-promotion-for-returning-customers-in-europe";
    assert.deepStrictEqual(templates, [
      expected(`${long}control`),
      expected(`${long}b`),
      expected(`${id}-Subject-Alpha`), // 65 characters
      `${id}-Subject-Beta`, // 64: an SES name as it is
    ]);
    assert.strictEqual(new Set(templates).size, 4);
    for (const t of templates) assert.match(t, /^[A-Za-z0-9_-]{1,64}$/);
    // A campaign id may hold ".", which SES names may not: content of the campaign's own gets a name SES takes.
    delete c.TemplateConfiguration;
    c.MessageConfiguration = { EmailMessage: { Title: "Hi", HtmlBody: "<p>Hi</p>" } };
    c.Name = "Spring Sale 2.0";
    fs.writeFileSync(file, JSON.stringify(ab));
    const dotted = commandOf((await run(["--campaign-file", file, "--json", "--recipients", "r.csv"])).stdout).command;
    assert.strictEqual(dotted[dotted.indexOf("--template") + 1], expected("spring-sale-2.0"));
  });

  it("gives treatments whose names differ only in case distinct variant names (the launcher refuses A with a)", async () => {
    const ab = JSON.parse(fs.readFileSync(`${FIXTURES}/campaign-ab.json`, "utf8"));
    const c = ab.CampaignResponse;
    c.TreatmentName = "Sale";
    c.AdditionalTreatments[0].TreatmentName = "SALE";
    const file = path.join(tmp, "case-names.json");
    fs.writeFileSync(file, JSON.stringify(ab));
    const r = await run(["--campaign-file", file, "--json", "--recipients", "r.csv"]);
    assert.strictEqual(r.code, 0, r.stderr);
    const command: string[] = commandOf(r.stdout).command;
    const names = command.flatMap((a, i) => (command[i - 1] === "--variant" ? [a.split(":")[0]] : []));
    assert.deepStrictEqual(names.slice(0, 2), ["Sale", "SALE-2"]);
  });

  it("generates flags the launcher's own parsers accept with the same meaning", async () => {
    const r = await run(["--campaign-file", `${FIXTURES}/campaign-ab.json`, "--json", "--recipients", "r.csv"]);
    const options = {
      ...TIMING_FLAGS,
      ...Object.fromEntries(
        ["campaign", "recipients", "template", "date", "hour", "minute", "default-timezone", "tps"].map((k) => [
          k,
          { type: "string" as const },
        ]),
      ),
    };
    const { values } = parseArgs({ args: commandOf(r.stdout).command, options, strict: true });
    assert.deepStrictEqual(baseRuleFromFlags(values), {
      kind: "date",
      date: { year: 2026, month: 12, day: 1 },
      hour: 9,
      minute: 0,
    });
    assert.deepStrictEqual(quietTimeFromFlags(values), {
      hours: { start: 21 * 60, end: 8 * 60 },
      days: [],
      policy: "skip",
    });
    assert.deepStrictEqual(audienceFromFlags(values), {
      variants: [
        { name: "Control", basisPoints: 4000, template: "spring-sale" },
        { name: "Subject-B", basisPoints: 3000, template: "spring-sale-b" },
        { name: "C", basisPoints: 2000, template: "spring-sale-2026-C" },
      ],
      holdoutBasisPoints: 1000,
    });
  });

  it("the generated command plans the imported CSV in the real launcher (dry run)", async () => {
    const imported = await run(["--endpoints", EXPORT, "--campaign-file", `${FIXTURES}/campaign-ab.json`, "--json"]);
    const out = path.join(tmp, "launched");
    const command = JSON.parse(imported.stdout).campaign.command;
    const code = await launch([...command, "--dry-run", "--now", "2026-11-30T12:00:00Z", "--out", out], {
      out: () => undefined,
      err: () => undefined,
    });
    assert.strictEqual(code, 0);
    const plan = fs
      .readFileSync(path.join(out, "plan.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const heldOut = parse(fs.readFileSync(path.join(out, "holdout.csv"), "utf8"), { columns: true }) as unknown[];
    // The contract's assignment, computed here: sha256(campaign:id), first 8 bytes big-endian, mod 10000, against
    // consecutive basis-point ranges in the order given (40/30/20), the holdout last.
    const bucketOf = (id: string) =>
      Number(createHash("sha256").update(`spring-sale-2026:${id}`).digest().readBigUInt64BE(0) % 10000n);
    const expected = (id: string) => {
      const b = bucketOf(id);
      return b < 4000 ? "Control" : b < 7000 ? "Subject-B" : b < 9000 ? "C" : "holdout";
    };
    const ids = ["u1", "u2", "u3", "ep-008", "u7", "u9"];
    assert.deepStrictEqual(
      Object.fromEntries(plan.map((r) => [r.recipient_id, r.variant])),
      Object.fromEntries(ids.filter((id) => expected(id) !== "holdout").map((id) => [id, expected(id)])),
    );
    assert.strictEqual(heldOut.length, ids.filter((id) => expected(id) === "holdout").length);
    // By hand: 09:00 on 2026-12-01 in New York (EST, UTC-5) is 14:00Z; in Kolkata (UTC+5:30) 03:30Z; Paris 08:00Z.
    const utc: Record<string, string> = {
      u1: "2026-12-01T14:00:00.000Z",
      u2: "2026-12-01T08:00:00.000Z",
      u3: "2026-12-01T03:30:00.000Z",
    };
    for (const r of plan) if (utc[r.recipient_id]) assert.strictEqual(r.utc, utc[r.recipient_id], r.recipient_id);
  });

  it("prints the command as one shell line and each unmapped setting as a line", async () => {
    const r = await run(["--campaign-file", `${FIXTURES}/campaign-ab.json`]);
    assert.match(
      r.stdout,
      /npm run -s launch-campaign -- --campaign spring-sale-2026 --recipients \S+recipients\.csv --template spring-sale/,
    );
    assert.match(r.stdout, /- Limits\.Daily: 2 → no per-recipient daily cap/);
    assert.match(r.stdout, /- SegmentId: 8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a version 3 → .*create-export-job/);
  });

  it("says an event-triggered campaign becomes a journey, and exits 1 with no command", async () => {
    const r = await run(["--campaign-file", `${FIXTURES}/campaign-event.json`, "--json"]);
    assert.strictEqual(r.code, 1);
    const c = commandOf(r.stdout);
    assert.strictEqual(c.command, null);
    const freq = c.notes.find((n: { setting: string }) => n.setting === "Schedule.Frequency");
    assert.match(freq.instead, /use a journey.*"cart\.abandoned"/);
    for (const setting of ["Limits.Daily", "Limits.Session", "SegmentId"])
      assert.ok(
        c.notes.some((n: { setting: string }) => n.setting === setting),
        `a note for ${setting}`,
      );
  });

  it("maps a weekly campaign at a half-hour offset to --every weekly:DAY --until the last send date", async () => {
    const r = await run(["--campaign-file", `${FIXTURES}/campaign-weekly.json`, "--json", "--recipients", "r.csv"]);
    // By hand: 08:30Z at UTC+05:30 is 14:00 on Thursday 2026-12-03; EndTime 2027-03-01 08:30Z is 14:00 local,
    // not after the 14:00 send, so the last send date is 2027-02-28.
    assert.deepStrictEqual(commandOf(r.stdout).command.slice(6), [
      ...[
        "--every",
        "weekly:THU",
        "--until",
        "2027-02-28",
        "--hour",
        "14",
        "--minute",
        "0",
        "--default-timezone",
        "Asia/Kolkata",
      ],
    ]);
  });

  it("maps IsLocalTime false to --at the one instant, and says how to send at local time instead", async () => {
    const file = path.join(tmp, "instant.json");
    const c = JSON.parse(fs.readFileSync(`${FIXTURES}/campaign-weekly.json`, "utf8"));
    Object.assign(c.CampaignResponse.Schedule, {
      Frequency: "ONCE",
      IsLocalTime: false,
      StartTime: "2026-12-03T08:30:00.000Z",
    });
    fs.writeFileSync(file, JSON.stringify(c));
    const r = await run(["--campaign-file", file, "--json", "--recipients", "r.csv"]);
    const m = commandOf(r.stdout);
    assert.deepStrictEqual(m.command.slice(6), ["--at", "2026-12-03T08:30:00Z"]);
    assert.match(
      m.notes.find((n: { setting: string }) => n.setting === "Schedule.IsLocalTime").instead,
      /--date 2026-12-03 --hour 14 --minute 0/,
    );
  });

  it("uses zones that keep Pinpoint's fixed offsets all year (checked against luxon's tz data)", async () => {
    for (const [tz, minutes] of [
      ["UTC-05", -300],
      ["UTC+13", 780],
      ["UTC+03:30", 210],
      ["UTC+04:30", 270],
      ["UTC+05:30", 330],
      ["UTC+05:45", 345],
      ["UTC+06:30", 390],
      ["UTC+08:45", 525],
      ["UTC+09:30", 570],
      ["UTC-09:30", -570],
    ] as [string, number][]) {
      const file = path.join(tmp, `tz-${tz}.json`);
      const c = JSON.parse(fs.readFileSync(`${FIXTURES}/campaign-weekly.json`, "utf8"));
      c.CampaignResponse.Schedule.Timezone = tz;
      fs.writeFileSync(file, JSON.stringify(c));
      const zone = commandOf((await run(["--campaign-file", file, "--json"])).stdout).launch.sendTime.defaultTimezone;
      const zoneObj = IANAZone.create(zone);
      for (const when of [Date.UTC(2027, 0, 15), Date.UTC(2027, 6, 15)])
        assert.strictEqual(zoneObj.offset(when), minutes, `${tz} → ${zone}`);
    }
  });

  it("maps the other schedules: DAILY, MONTHLY on day 31, HOURLY, IMMEDIATE, an offset only a DST zone has", async () => {
    const mapped = async (schedule: object) => {
      const file = path.join(tmp, `schedule-${++runs}.json`);
      const c = JSON.parse(fs.readFileSync(`${FIXTURES}/campaign-weekly.json`, "utf8"));
      Object.assign(c.CampaignResponse.Schedule, schedule);
      fs.writeFileSync(file, JSON.stringify(c));
      const r = await run(["--campaign-file", file, "--json", "--recipients", "r.csv"]);
      const m = commandOf(r.stdout);
      return {
        code: r.code,
        command: m.command?.slice(6),
        notes: m.notes as { setting: string; value: string; instead: string }[],
      };
    };
    // By hand: 2026-12-31T02:00Z at UTC-05 is 21:00 on 2026-12-30; EndTime 2027-01-10T03:00Z is 22:00 on 01-09,
    // after 21:00, so 2027-01-09 has a send.
    const daily = await mapped({
      Frequency: "DAILY",
      StartTime: "2026-12-31T02:00:00Z",
      EndTime: "2027-01-10T03:00:00Z",
      Timezone: "UTC-05",
    });
    assert.deepStrictEqual(daily.command, [
      "--every",
      "daily",
      "--until",
      "2027-01-09",
      "--hour",
      "21",
      "--minute",
      "0",
      "--default-timezone",
      "Etc/GMT+5",
    ]);
    // 2027-01-31T09:15Z at UTC is 09:15 on the 31st: months without a 31st get nothing, and the note says so.
    const monthly = await mapped({
      Frequency: "MONTHLY",
      StartTime: "2027-01-31T09:15:00Z",
      EndTime: "2027-06-01T00:00:00Z",
      Timezone: "UTC",
    });
    assert.deepStrictEqual(monthly.command.slice(0, 4), ["--every", "monthly:31", "--until", "2027-05-31"]);
    assert.ok(monthly.notes.some((n) => n.value === "day 31 of the month"));
    // An EndTime more than 5 years on gives an --until the launcher refuses: the note says so.
    const long = await mapped({
      Frequency: "DAILY",
      StartTime: "2027-01-31T09:15:00Z",
      EndTime: "2035-01-01T00:00:00Z",
      Timezone: "UTC",
    });
    assert.deepStrictEqual(long.command.slice(0, 4), ["--every", "daily", "--until", "2034-12-31"]);
    assert.match(
      long.notes.find((n) => n.setting === "Schedule.EndTime")!.instead,
      /more than 5 years after the start/,
    );
    // An EndTime before the first send leaves nothing to send: refused, not a command that sends nothing.
    await assert.rejects(
      mapped({
        Frequency: "DAILY",
        StartTime: "2027-02-01T09:15:00Z",
        EndTime: "2026-01-01T00:00:00Z",
        Timezone: "UTC",
      }),
      /Schedule.EndTime "2026-01-01T00:00:00Z" is before the first send \(2027-02-01 09:15\)/,
    );
    const hourly = await mapped({ Frequency: "HOURLY" });
    assert.strictEqual(hourly.code, 1);
    assert.strictEqual(hourly.command, undefined);
    assert.match(hourly.notes.find((n) => n.setting === "Schedule.Frequency")!.instead, /at most daily/);
    const immediate = await mapped({ Frequency: "ONCE", StartTime: "IMMEDIATE" });
    assert.deepStrictEqual(immediate.command, ["--at", "<INSTANT>"]);
    const lordHowe = await mapped({ Timezone: "UTC+10:30" });
    assert.strictEqual(lordHowe.command.at(-1), "Australia/Lord_Howe");
    assert.match(
      lordHowe.notes.find((n) => n.setting === "Schedule.Timezone")!.instead,
      /no IANA zone stays at UTC\+10:30 all year/,
    );
  });

  it("rejects a campaign file it cannot read as Pinpoint's, naming the key", async () => {
    const write = (name: string, edit: (c: any) => void) => {
      const c = JSON.parse(fs.readFileSync(`${FIXTURES}/campaign-ab.json`, "utf8"));
      edit(c.CampaignResponse);
      const file = path.join(tmp, name);
      fs.writeFileSync(file, JSON.stringify(c));
      return file;
    };
    await rejects(
      ["--campaign-file", write("tz.json", (c) => (c.Schedule.Timezone = "EST"))],
      /Schedule\.Timezone "EST": expected UTC/,
    );
    await rejects(["--campaign-file", write("pct.json", (c) => (c.HoldoutPercent = 60))], /add up to 110, above 100/);
    await rejects(
      ["--campaign-file", write("qt.json", (c) => (c.Schedule.QuietTime.End = "7:59"))],
      /QuietTime\.End "7:59": expected HH:MM/,
    );
    await rejects(
      ["--campaign-file", write("st.json", (c) => (c.Schedule.StartTime = "2026-12-01 14:00"))],
      /StartTime "2026-12-01 14:00"/,
    );
    const notJson = path.join(tmp, "x.json");
    fs.writeFileSync(notJson, "{");
    await rejects(["--campaign-file", notJson], /x\.json: not JSON/);
  });
});

/** A minimal S3 on loopback: ListObjectsV2 (paged, 2 keys a page) and GetObject; some keys hang or stall. */
function startS3(objects: Record<string, Buffer>) {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url!, "http://x");
    const [, bucket, ...rest] = url.pathname.split("/");
    const key = decodeURIComponent(rest.join("/"));
    if (bucket === "hangs") return; // never answers
    if (url.searchParams.get("list-type") === "2") {
      const prefix = url.searchParams.get("prefix") ?? "";
      const keys = Object.keys(objects)
        .filter((k) => k.startsWith(prefix))
        .sort();
      const from = Number(url.searchParams.get("continuation-token") ?? 0);
      const page = keys.slice(from, from + 2);
      const more = from + 2 < keys.length;
      res.setHeader("content-type", "application/xml");
      return res.end(
        `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name>` +
          `<Prefix>${prefix}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>${more}</IsTruncated>` +
          (more ? `<NextContinuationToken>${from + 2}</NextContinuationToken>` : "") +
          page.map((k) => `<Contents><Key>${k}</Key><Size>${objects[k].length}</Size></Contents>`).join("") +
          `</ListBucketResult>`,
      );
    }
    if (key.endsWith("stalls.jsonl")) {
      res.writeHead(200, { "content-length": "100000" });
      return res.write(objects[key]); // then nothing more
    }
    if (!(key in objects)) {
      res.writeHead(404, { "content-type": "application/xml" });
      return res.end(`<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`);
    }
    res.end(objects[key]);
  });
  return new Promise<{ endpoint: string; requests: string[]; close: () => void }>((r) =>
    server.listen(0, "127.0.0.1", () =>
      r({
        endpoint: `http://127.0.0.1:${(server.address() as any).port}`,
        requests,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}

/** Runs the CLI in its own process, as a user does. */
function runCli(args: string[], env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    [require.resolve("ts-node/dist/bin"), "--transpile-only", "scripts/import-pinpoint.ts", ...args],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
    },
  );
  let stdout = "",
    stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((r) =>
    child.on("exit", (code) => r({ code, stdout, stderr })),
  );
}

describe("import-pinpoint: s3:// prefixes over the real S3 wire format (AWS_ENDPOINT_URL_S3)", function () {
  this.timeout(30_000);
  let s3: Awaited<ReturnType<typeof startS3>>;
  let env: Record<string, string>;
  before(async () => {
    const one = fs.readFileSync(`${EXPORT}/endpoints-1.jsonl`);
    const two = fs.readFileSync(`${EXPORT}/endpoints-2.jsonl`);
    s3 = await startS3({
      "exports/job-1/": Buffer.alloc(0), // a folder marker
      "exports/job-1/0.gz": gzipSync(one.subarray(0, one.indexOf("\n", 2000) + 1)),
      "exports/job-1/1.gz": gzipSync(one.subarray(one.indexOf("\n", 2000) + 1)),
      "exports/job-1/2": two,
      "other/x.gz": gzipSync("not this"),
      "stalled/stalls.jsonl": one.subarray(0, 100),
    });
    env = {
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
      AWS_REGION: "us-east-1",
      AWS_ENDPOINT_URL_S3: s3.endpoint,
    };
  });
  after(() => s3.close());

  it("lists every page under the prefix and streams each object, gzip or not, in key order", async () => {
    const local = await run(["--endpoints", EXPORT]);
    const out = path.join(tmp, "from-s3");
    const r = await runCli(["--endpoints", "s3://pinpoint-exports/exports/", "--out", out], env);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(fs.readFileSync(path.join(out, "recipients.csv"), "utf8"), local.recipientsText);
    const skipped = parse(fs.readFileSync(path.join(out, "skipped.csv"), "utf8"), { columns: true }) as Record<
      string,
      string
    >[];
    const key = (k: string) => `s3://pinpoint-exports/exports/job-1/${k}`;
    assert.deepStrictEqual(
      skipped.map((x) => x.file),
      // 0.gz's skipped line was u2's SMS endpoint: it now gives u2's row its phone.
      [key("1.gz"), key("1.gz"), key("1.gz"), key("2"), key("2")],
    );
    assert.ok(
      s3.requests.some((q) => /[?&]continuation-token=2/.test(q)),
      "second page asked for",
    );
    assert.ok(!s3.requests.some((q) => q.includes("other")), "nothing outside the prefix read");
  });

  // --timeout-seconds bounds the whole command (issue 35; it was each S3 call's bound, which stays inside it at 60 s):
  // a call with no answer and a stalled body run into it, the time limit's line and exit 1 as in every command.
  it("an empty prefix is one line and exit 2; a call with no answer and a stalled body end at the command's time limit (exit 1), in bounded time", async () => {
    // In this process (the test above runs the command as a user does): the same main, its error line and exit code.
    const started = Date.now();
    const [empty, hangs, stalls] = await withEnv(env, () =>
      Promise.all([
        runMain(main, ["--endpoints", "s3://pinpoint-exports/nothing/", "--out", path.join(tmp, "nothing")]),
        runMain(main, ["--endpoints", "s3://hangs/x/", "--timeout-seconds", "0.3", "--out", path.join(tmp, "hangs")]),
        runMain(main, [
          "--endpoints",
          "s3://pinpoint-exports/stalled/",
          "--timeout-seconds",
          "0.3",
          "--out",
          path.join(tmp, "stalled"),
        ]),
      ]),
    );
    assert.deepStrictEqual([empty.code, hangs.code, stalls.code], [2, 1, 1]);
    assert.strictEqual(empty.stderr, "error: s3://pinpoint-exports/nothing/: no objects under this prefix\n");
    const limit = "error: import-pinpoint: no result within the command's time limit of 0.3 s (--timeout-seconds)\n";
    assert.strictEqual(hangs.stderr, limit);
    assert.strictEqual(stalls.stderr, limit);
    assert.ok(Date.now() - started < 20_000);
  });
});

describe("import-pinpoint: never overwrites its own input (hostile review)", () => {
  /** A fresh folder holding a copy of the fixture export's files under `names`. */
  function exportDir(names: string[]) {
    const dir = fs.mkdtempSync(path.join(tmp, "own-input-"));
    const sources = fs.readdirSync(EXPORT).sort();
    names.forEach((name, i) => fs.copyFileSync(path.join(EXPORT, sources[i % sources.length]), path.join(dir, name)));
    return dir;
  }
  const refused = async (args: string[], pattern: RegExp, kept: string[]) => {
    const before = kept.map((f) => fs.readFileSync(f));
    const r = await runMain(main, args);
    assert.strictEqual(r.code, 2, r.stderr);
    assert.strictEqual(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, pattern);
    kept.forEach((f, i) => assert.ok(fs.readFileSync(f).equals(before[i]), `${f} was changed`));
  };

  it("an export file named recipients.csv in --out is refused, and left as it was", async () => {
    const dir = exportDir(["recipients.csv"]);
    const file = path.join(dir, "recipients.csv");
    await refused(
      ["--endpoints", file, "--out", dir],
      /recipients\.csv is an endpoint export file \(--endpoints .*recipients\.csv\).*give another --out/,
      [file],
    );
  });

  it("an export folder holding skipped.csv, with --out that folder, is refused", async () => {
    const dir = exportDir(["endpoints-1.jsonl", "skipped.csv"]);
    await refused(["--endpoints", dir, "--out", dir], /skipped\.csv is an endpoint export file/, [
      path.join(dir, "endpoints-1.jsonl"),
      path.join(dir, "skipped.csv"),
    ]);
  });

  it("the same file under another name (a hard link, a symbolic link) is refused", async () => {
    const dir = exportDir(["export.jsonl"]);
    const file = path.join(dir, "export.jsonl");
    const out = fs.mkdtempSync(path.join(tmp, "own-out-"));
    fs.linkSync(file, path.join(out, "recipients.csv"));
    await refused(
      ["--endpoints", file, "--out", out],
      /recipients\.csv is an endpoint export file \(--endpoints .*\) \(the same file under another name: a link\)/,
      [file],
    );
    const out2 = fs.mkdtempSync(path.join(tmp, "own-out-"));
    const link = path.join(tmp, `link-${runs++}.jsonl`);
    fs.symlinkSync(path.join(out2, "skipped.csv"), link);
    fs.copyFileSync(file, path.join(out2, "skipped.csv"));
    await refused(
      ["--endpoints", link, "--out", out2],
      /skipped\.csv is an endpoint export file .*through a symbolic link/,
      [path.join(out2, "skipped.csv")],
    );
  });

  it("an export beside (not under) the outputs' names in --out is read as before", async () => {
    const dir = exportDir(["endpoints-1.jsonl", "endpoints-2.jsonl"]);
    const r = await runMain(main, ["--endpoints", path.join(dir, "endpoints-1.jsonl"), "--out", dir]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(dir, "recipients.csv")));
  });
});
