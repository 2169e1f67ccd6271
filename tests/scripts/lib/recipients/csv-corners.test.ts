/**
 * The recipient list's corners, as a user meets them through the launcher: line endings read wrongly, an input file
 * inside --out, look-alike control headers, a UTF-8 file read as Latin-1, values a spreadsheet would run as formulas,
 * and the missed-time cutoff of a list whose lines end in CR alone. Each was silent (exit 0) before.
 */
import * as assert from "assert";
import { createHash } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "csv-parse/sync";
import { main as launch } from "../../../../scripts/launch-campaign";
import { main as importPinpoint } from "../../../../scripts/import-pinpoint";
import { countLines, openRecipientCsv } from "../../../../scripts/lib/recipients/recipients";
import { recipientColumns } from "../../../../scripts/lib/recipients/recipient-columns";
import { runMain, withFlags } from "../../../helpers/cli";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-csv-corners-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let files = 0;

/** A new folder under tmp. */
function folder(): string {
  const dir = path.join(tmp, `case-${++files}`);
  fs.mkdirSync(dir);
  return dir;
}

/** Writes `content` to a new file named `name` (in a new folder unless `dir` is given); returns its path. */
function write(content: string | Buffer, name = "list.csv", dir = folder()): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

const BASE = [
  "--templates",
  "none",
  "--campaign",
  "corners",
  "--template",
  "t",
  "--date",
  "2026-12-01",
  "--hour",
  "12",
  "--now",
  "2026-12-01T10:00:00Z",
  "--dry-run",
];

/** A dry run of the launcher in-process on `list`; `out` defaults to a new folder. */
async function dryRun(list: string, more: string[] = [], out = path.join(folder(), "out")) {
  const r = await runMain(launch, withFlags([...BASE, "--recipients", list, "--out", out], more));
  const read = (name: string) =>
    fs.existsSync(path.join(out, name)) ? fs.readFileSync(path.join(out, name), "utf8") : undefined;
  // (Not JSON when summary.json is the list itself: the case of an input inside --out.)
  const summary = r.code === 2 ? undefined : read("summary.json");
  return { ...r, out, read, summary: summary === undefined ? undefined : JSON.parse(summary) };
}

/** A refusal: exit 2, one line on stderr matching `pattern`, nothing on stdout. */
function assertRefused(r: { code: number; stdout: string; stderr: string }, pattern: RegExp) {
  assert.strictEqual(r.code, 2, r.stderr + r.stdout);
  assert.strictEqual(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, pattern);
  assert.strictEqual(r.stdout, "");
}

async function records(file: string, encoding: "utf8" | "latin1" = "utf8") {
  const csv = await openRecipientCsv(file, encoding);
  const out = [csv.header];
  for await (const rec of csv.records) out.push(rec.fields);
  return out;
}

describe("CSV corners: line endings the reader cannot read exactly are refused", () => {
  it("a file whose lines end in CR CR LF is refused on line 1 (it was read in CR mode: an LF at the start of every id)", async () => {
    const list = write("id,email\r\r\nu1,a@example.com\r\r\nu2,b@example.com\r\r\n");
    await assert.rejects(records(list), (e: Error) => {
      assert.match(e.message, /^.*list\.csv:1: .*CR CR LF/);
      assert.match(e.message, /LF, CRLF or CR alone/);
      return true;
    });
    const r = await dryRun(list);
    assertRefused(r, /list\.csv:1: .*CR CR LF/);
    assert.strictEqual(r.read("plan.jsonl"), undefined);
  });

  it("a CRLF file with one line ending in CR CR LF is refused on that line (it gave a stray CR in the last field)", async () => {
    const list = write(
      "id,email,city\r\nu1,a@example.com,Oslo\r\nu2,b@example.com,Rome\r\r\nu3,c@example.com,Lima\r\n",
    );
    await assert.rejects(records(list), /list\.csv:3: .*CR CR LF/);
  });

  it("a CR-only file with an LF outside quotes is refused naming the line; an LF inside quotes is read exactly", async () => {
    const bad = write("id,email,note\ru1,a@example.com,x\ru2,b@example.com,two\nlines\ru3,c@example.com,y\r");
    await assert.rejects(records(bad), /list\.csv:3: .*line feed \(LF\) outside quotes.*CR alone/);
    const good = write('id,email,note\ru1,a@example.com,"two\nlines"\ru2,b@example.com,y\r');
    assert.deepStrictEqual(await records(good), [
      ["id", "email", "note"],
      ["u1", "a@example.com", "two\nlines"],
      ["u2", "b@example.com", "y"],
    ]);
  });

  it("a CRLF file with a lone CR inside an unquoted field is refused naming the line; a quoted CR is read exactly", async () => {
    // "2\r" was read as the id (a hashed schedule name): the mirror of an LF outside quotes in a CR file.
    const bad = write("id,email\r\n1,a@example.com\r\n2\r,b@example.com\r\n3,c@example.com\r\n");
    await assert.rejects(records(bad), /list\.csv:3: .*carriage return \(CR\) outside quotes.*LF or CRLF/);
    const r = await dryRun(bad);
    assertRefused(r, /list\.csv:3: .*carriage return \(CR\) outside quotes/);
    assert.strictEqual(r.read("plan.jsonl"), undefined);
    // LF-only, and a CR at the very end of the file (no line break after it): refused too.
    await assert.rejects(
      records(write("id,email\n1,a@example.com\n2,b@exa\rmple.com\n")),
      /list\.csv:3: .*carriage return/,
    );
    await assert.rejects(
      records(write("id,email\r\n1,a@example.com\r\n2,b@example.com\r")),
      /list\.csv:3: .*carriage return/,
    );
    // The line is counted past quoted line breaks.
    await assert.rejects(
      records(write('id,email,note\r\n1,a@example.com,"x\r\ny"\r\n2\r,b@example.com,z\r\n')),
      /list\.csv:4: .*carriage return/,
    );
    const good = write('id,email,note\r\n1,a@example.com,"a\rb"\r\n');
    assert.deepStrictEqual(await records(good), [
      ["id", "email", "note"],
      ["1", "a@example.com", "a\rb"],
    ]);
  });

  it("a CR-only file that later has CR CR LF lines is refused on the first of them", async () => {
    const list = write("id,email\ru1,a@example.com\ru2,b@example.com\r\r\nu3,c@example.com\r\r\n");
    // Lines counted by CR: u2's CR CR LF leaves a blank line 4 and an LF starting line 5.
    await assert.rejects(records(list), /list\.csv:5: .*line feed \(LF\) outside quotes/);
  });
});

describe("CSV corners: --encoding latin1 on a file that is UTF-8", () => {
  it("valid multi-byte UTF-8 read as Latin-1 is refused naming its first non-ASCII line (it turned Zoë into ZoÃ«)", async () => {
    const list = write("id,email,name\nu1,a@example.com,Ana\nu2,b@example.com,Zoë\nu3,c@example.com,Åsa\n");
    await assert.rejects(records(list, "latin1"), (e: Error) => {
      assert.match(e.message, /list\.csv:3: .*UTF-8/);
      assert.match(e.message, /leave out --encoding latin1/);
      return true;
    });
    const r = await dryRun(list, ["--encoding", "latin1"]);
    assertRefused(r, /list\.csv:3: .*looks like UTF-8/);
    assert.deepStrictEqual(
      fs.readdirSync(r.out),
      [],
      "no plan, rejects or summary: the run's partial files are removed",
    );
  });

  it("the line is right after 100,000 ASCII rows, with the UTF-8 character split across two chunks of a stream", async () => {
    const { Readable } = await import("stream");
    const text = Buffer.from(
      "id,email,name\n" +
        Array.from({ length: 100_000 }, (_, i) => `u${i},u${i}@example.com,x\n`).join("") +
        "v,v@example.com,Zoë\n",
    );
    const split = text.indexOf(Buffer.from("ë")) + 1; // between the two bytes of ë
    const csv = await openRecipientCsv(
      "list.csv",
      "latin1",
      Readable.from([text.subarray(0, split), text.subarray(split)]),
    );
    await assert.rejects(async () => {
      for await (const rec of csv.records) void rec;
    }, /^Error: list\.csv:100002: --encoding latin1, but the file looks like UTF-8/);
  });

  it("a real Latin-1 file, and a pure ASCII one, are read as Latin-1", async () => {
    const latin1 = write(Buffer.from("id,email,name\nu1,a@example.com,Zo\xeb\n", "latin1"));
    assert.deepStrictEqual((await records(latin1, "latin1"))[1], ["u1", "a@example.com", "Zoë"]);
    const ascii = write("id,email,name\nu1,a@example.com,Zoe\n");
    assert.deepStrictEqual((await records(ascii, "latin1"))[1], ["u1", "a@example.com", "Zoe"]);
  });

  it("a Latin-1 file whose bytes are UTF-8 in one place only is still Latin-1 (not every high byte is UTF-8)", async () => {
    // "Ã«" (C3 AB) is valid UTF-8 on its own; "ë" alone (EB) later is not: the file as a whole is not UTF-8.
    const bytes = Buffer.concat([
      Buffer.from("id,email,name\nu1,a@example.com,"),
      Buffer.from([0xc3, 0xab]),
      Buffer.from("\nu2,b@example.com,Zo\xeb\n", "latin1"),
    ]);
    const got = await records(write(bytes), "latin1");
    assert.deepStrictEqual(got.slice(1), [
      ["u1", "a@example.com", "Ã«"],
      ["u2", "b@example.com", "Zoë"],
    ]);
  });
});

describe("CSV corners: look-alike control headers are refused with the control column they look like", () => {
  const refusedAs = (header: string[], control: string) =>
    assert.throws(
      () => recipientColumns("list.csv", header),
      (e: Error) => e.message.includes(`"${control}"`) && /^list\.csv:1: column /.test(e.message),
      `${JSON.stringify(header)} → ${control}`,
    );

  for (const name of [
    "time_zone",
    "tz",
    "zone",
    "Time-Zone",
    "TIME ZONE",
    "TZ",
    "time\u200Bzone",
    "timezone\u200B",
    "time\u00A0zone",
    "\u2060timezone",
  ])
    it(`${JSON.stringify(name)} is refused as a look-alike of "timezone" (it became personalization: everyone at UTC)`, () =>
      refusedAs(["id", "email", name, "city"], "timezone"));

  it("look-alikes of send_at, send_hour, send_minute, id and email are refused the same way", () => {
    refusedAs(["id", "email", "sendAt"], "send_at");
    refusedAs(["id", "email", "send-hour"], "send_hour");
    refusedAs(["id", "email", "Send Minute"], "send_minute");
    refusedAs(["e-mail", "id"], "email");
    refusedAs(["ID\u200B", "email"], "id");
  });

  it("a name with an invisible character is shown with its code point, so the user can find it", () => {
    assert.throws(
      () => recipientColumns("list.csv", ["id", "email", "time\u200Bzone"]),
      /time<U\+200B>zone.*U\+200B ZERO WIDTH SPACE/,
    );
  });

  // Homoglyphs (hostile review): letters of other scripts that look like Latin ones, written as code points here so
  // that the test shows what it holds.
  for (const [name, control, holds] of [
    ["t\u0456mezone", "timezone", 'U+0456 (looks like "i")'], // Cyrillic і
    ["\u0422imezone", "timezone", 'U+0422 (looks like "T")'], // Cyrillic Т
    ["tim\u0435z\u043Ene", "timezone", 'U+0435 (looks like "e"), U+043E (looks like "o")'], // Cyrillic е, о
    ["t\u0396", "timezone", 'U+0396 (looks like "Z")'], // Greek Ζ in "tZ"
    ["\u0456d", "id", 'U+0456 (looks like "i")'],
    ["\u0435mail", "email", 'U+0435 (looks like "e")'],
    ["em\u03B1il", "email", 'U+03B1 (looks like "a")'], // Greek α
    ["send_\u0430t", "send_at", 'U+0430 (looks like "a")'], // Cyrillic а
    ["send_h\u03BFur", "send_hour", 'U+03BF (looks like "o")'], // Greek ο
    ["send_m\u0131nute", "send_minute", 'U+0131 (looks like "i")'], // dotless ı
    ["\u0585\u0430\u0455\u0441", "", ""], // Armenian օ, Cyrillic а ѕ с: "oasc" is no control name
  ] as const)
    it(`${JSON.stringify(name)} ${control ? `is refused as a homoglyph of "${control}", naming ${holds}` : "(letters of other scripts, no control name) stays personalization"}`, () => {
      const header = control === "id" ? [name, "email"] : control === "email" ? ["id", name] : ["id", "email", name];
      if (!control) return assert.deepStrictEqual(recipientColumns("list.csv", header).data, [2]);
      assert.throws(
        () => recipientColumns("list.csv", header),
        (e: Error) =>
          e.message.startsWith(
            `list.csv:1: column "${name}" (it holds ${holds}) looks like the control column "${control}" but is not it`,
          ),
      );
    });

  it("the launcher refuses a list headed with a Cyrillic і in timezone: exit 2, one line, no plan", async () => {
    const list = write("id,email,t\u0456mezone\nu1,a@example.com,Asia/Tokyo\n");
    const r = await dryRun(list);
    assertRefused(
      r,
      /list\.csv:1: column "t\u0456mezone" \(it holds U\+0456 \(looks like "i"\)\) looks like the control column "timezone"/,
    );
    assert.strictEqual(r.read("plan.jsonl"), undefined);
  });

  it("a look-alike beside the control column itself is personalization, as before", () => {
    const c = recipientColumns("list.csv", ["id", "email", "timezone", "zone", "tz"]);
    assert.strictEqual(c.timezone, 2);
    assert.deepStrictEqual(c.data, [3, 4]);
  });

  it("read from a file: 'TimeZone ' (spaces trimmed) and a zone column with a BOM or NBSP at its ends are refused", async () => {
    for (const name of ["TimeZone ", "\uFEFFtimezone", "timezone\u00A0", "\u00A0timezone"]) {
      const list = write(`id,email,${name}\nu1,a@example.com,Europe/Oslo\n`);
      const csv = await openRecipientCsv(list);
      assert.throws(
        () => recipientColumns(list, csv.header),
        (e: Error) => /list\.csv:1: column .*"timezone"/.test(e.message),
        JSON.stringify(name),
      );
    }
  });

  it("any header name with an invisible character at its ends or inside is refused (a template could not name it)", () => {
    assert.throws(
      () => recipientColumns("list.csv", ["id", "email", "first_name\u00A0"]),
      /column "first_name<U\+00A0>".*NO-BREAK SPACE/,
    );
    assert.throws(
      () => recipientColumns("list.csv", ["id", "email", "\uFEFFcity"]),
      /column "<U\+FEFF>city".*BYTE ORDER MARK/,
    );
    // A space inside a name stays allowed, as before, and so does a zero-width non-joiner (spelling in Persian).
    assert.deepStrictEqual(
      recipientColumns("list.csv", ["id", "email", "first name", "نام\u200Cخانوادگی"]).data,
      [2, 3],
    );
  });

  it("the launcher refuses a list headed tz: exit 2, one line, no plan", async () => {
    const list = write("id,email,tz\nu1,a@example.com,Asia/Tokyo\n");
    const r = await dryRun(list);
    assertRefused(r, /list\.csv:1: column "tz" .*"timezone"/);
    assert.strictEqual(r.read("plan.jsonl"), undefined);
  });
});

describe("CSV corners: an input file inside --out is never deleted or overwritten", () => {
  const LIST = "id,email\nu1,a@example.com\nu2,b@example.com\n";

  for (const name of [
    "rejects.csv",
    "plan.jsonl",
    "notes.csv",
    "holdout.csv",
    "summary.json",
    ".sendtime.lock",
    "plan.jsonl.123-0a1b2c3d.partial",
    "Rejects.csv", // on the file systems of macOS and Windows it is rejects.csv
  ])
    it(`a list named ${name} inside --out is refused before anything is touched (it was deleted before it was read)`, async () => {
      const out = path.join(folder(), "out");
      fs.mkdirSync(out);
      const list = write(LIST, name, out);
      const r = await dryRun(list, [], out);
      assertRefused(r, new RegExp(`${name.replace(/\./g, "\\.")}.*is the recipient list.*--out`));
      assert.strictEqual(fs.readFileSync(list, "utf8"), LIST);
      assert.deepStrictEqual(fs.readdirSync(out), [name], "nothing created, nothing removed");
    });

  it("through a symbolic link: the list given links to out/rejects.csv, or --out links to the list's folder", async () => {
    const dir = folder();
    const out = path.join(dir, "out");
    fs.mkdirSync(out);
    const real = write(LIST, "rejects.csv", out);
    const link = path.join(dir, "list.csv");
    fs.symlinkSync(real, link);
    assertRefused(await dryRun(link, [], out), /is the recipient list/);
    const outLink = path.join(dir, "out-link");
    fs.symlinkSync(out, outLink);
    assertRefused(await dryRun(real, [], outLink), /is the recipient list/);
    assert.strictEqual(fs.readFileSync(real, "utf8"), LIST);
  });

  it("through a hard link: out/plan.jsonl is the list itself under another name", async () => {
    const dir = folder();
    const list = write(LIST, "list.csv", dir);
    const out = path.join(dir, "out");
    fs.mkdirSync(out);
    fs.linkSync(list, path.join(out, "plan.jsonl"));
    assertRefused(await dryRun(list, [], out), /plan\.jsonl.*is the recipient list/);
    assert.strictEqual(fs.readFileSync(list, "utf8"), LIST);
  });

  it("a list inside --out under another name (recipients.csv) is read and planned, and kept", async () => {
    const out = path.join(folder(), "out");
    fs.mkdirSync(out);
    const list = write(LIST, "recipients.csv", out);
    const r = await dryRun(list, ["--default-timezone", "UTC"], out);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.strictEqual(r.summary.schedules, 2);
    assert.strictEqual(fs.readFileSync(list, "utf8"), LIST);
  });
});

describe("CSV corners: values a spreadsheet would run as formulas are guarded in the reports, exact in the plan", () => {
  it("rejects.csv, notes.csv and holdout.csv write =, +, -, @, tab and CR first characters after a ' (OWASP)", async () => {
    const list = write(
      [
        "id,email,timezone",
        '"=HYPERLINK(""http://x"")",not-an-address,UTC', // rejected: the id is in rejects.csv
        '"@SUM(A1)", a@example.com ,UTC', // planned with a note: the address trimmed
        "+1,b@example.com,Mars/Base", // planned with a note: zone defaulted
        '"\tq",c@example.com,UTC',
        '"\rr",d@example.com,UTC',
        "-2,e@example.com,UTC",
        "plain,f@example.com,UTC",
        "",
      ].join("\n"),
    );
    const guarded = (id: string) => (/^[=+\-@\t\r]/.test(id) ? `'${id}` : id);
    const ids = (text: string | undefined) =>
      (parse(text ?? "", { columns: true }) as Record<string, string>[]).map((x) => x.id);
    const r = await dryRun(list, ["--default-timezone", "UTC"]);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.deepStrictEqual(ids(r.read("rejects.csv")), ['\'=HYPERLINK("http://x")']);
    const noted = ids(r.read("notes.csv"));
    assert.ok(noted.includes("'@SUM(A1)") && noted.includes("'+1"), noted.join(" | "));
    const all = ["@SUM(A1)", "+1", "\tq", "\rr", "-2", "plain"];
    for (const id of noted) assert.ok(all.map(guarded).includes(id), `notes.csv id ${JSON.stringify(id)}`);
    // The plan keeps every id exactly.
    const planned = r
      .read("plan.jsonl")!
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).recipient_id);
    assert.deepStrictEqual(planned, all);

    const held = await dryRun(list, ["--default-timezone", "UTC", "--holdout", "99.99"]);
    assert.notStrictEqual(held.code, 2, held.stderr);
    // Held out: bucket (sha256("corners:" + id), first 8 bytes, mod 10,000) in the holdout's range [1, 10000).
    const bucket = (id: string) =>
      Number(BigInt("0x" + createHash("sha256").update(`corners:${id}`).digest("hex").slice(0, 16)) % 10_000n);
    assert.deepStrictEqual(ids(held.read("holdout.csv")), all.filter((id) => bucket(id) >= 1).map(guarded));
  });

  it("import-pinpoint's skipped.csv guards its ids; recipients.csv keeps them exact", async () => {
    const dir = folder();
    const endpoint = (id: string, user: string, address: string) =>
      JSON.stringify({
        ChannelType: "EMAIL",
        EndpointStatus: "ACTIVE",
        OptOut: "NONE",
        Id: id,
        Address: address,
        User: { UserId: user },
      });
    fs.writeFileSync(
      path.join(dir, "endpoints.jsonl"),
      [endpoint("=cmd|' /C calc'!A0", "@u1", "not-an-address"), endpoint("ep-2", "=1+1", "ok@example.com")].join("\n") +
        "\n",
    );
    const out = path.join(dir, "out");
    const r = await runMain(importPinpoint, ["--endpoints", path.join(dir, "endpoints.jsonl"), "--out", out]);
    assert.strictEqual(r.code, 0, r.stderr);
    const skipped = parse(fs.readFileSync(path.join(out, "skipped.csv"), "utf8"), { columns: true }) as Record<
      string,
      string
    >[];
    assert.deepStrictEqual(
      skipped.map((x) => [x.endpoint_id, x.user_id]),
      [["'=cmd|' /C calc'!A0", "'@u1"]],
    );
    const recipients = parse(fs.readFileSync(path.join(out, "recipients.csv"), "utf8"), { columns: true }) as Record<
      string,
      string
    >[];
    assert.deepStrictEqual(
      recipients.map((x) => x.id),
      ["=1+1"],
    );
  });
});

describe("CSV corners: the missed-time cutoff counts every line ending", () => {
  it("countLines counts LF, CRLF and CR alone as one line each, also across its 1 MiB reads", async () => {
    // Expected: the number of line breaks of any kind, counted by a regular expression, plus one.
    const cases = [
      "a\nb\nc\n",
      "a\r\nb\r\nc\r\n",
      "a\rb\rc\r",
      "a\rb\nc\r\nd",
      "\r\r\n\n\r",
      "x".repeat((1 << 20) - 1) + "\r\n" + "y\r", // a CRLF split across two reads
      "x".repeat((1 << 20) - 1) + "\r" + "\r" + "z", // a CR ending one read, a CR starting the next
    ];
    for (const text of cases) {
      const expected = (text.match(/\r\n|\r|\n/g) ?? []).length + 1;
      assert.strictEqual(await countLines(write(text)), expected, JSON.stringify(text.slice(-12)));
    }
  });

  it("a CR-only list's cutoff is the LF list's: 2,000 sends due in 20 minutes with a 33-minute fan-out are all missed", async () => {
    const rows = Array.from({ length: 2_000 }, (_, i) => `u${i},u${i}@example.com`);
    const lf = write(["id,email", ...rows, ""].join("\n"));
    const cr = write(["id,email", ...rows, ""].join("\r"));
    const flags = ["--hour", "10", "--minute", "20", "--default-timezone", "UTC", "--create-tps", "1"];
    for (const list of [lf, cr]) {
      const r = await dryRun(list, flags);
      assert.strictEqual(r.code, 1, r.stderr); // nothing would be sent
      // By hand: 2,002 lines (2,001 line breaks + 1) at 1 CreateSchedule/s = 2,002 s, plus the 5-minute margin,
      // after 10:00:00 → 10:38:22; every send (10:20) is before it and skipped.
      assert.strictEqual(r.summary.missed.cutoff, "2026-12-01T10:38:22.000Z", list === cr ? "CR-only" : "LF");
      assert.strictEqual(r.summary.missed.skipped, 2_000);
      assert.strictEqual(r.summary.schedules, 0);
    }
  });
});

describe("CSV corners: --encoding as other tools spell it", () => {
  it("takes utf-8, UTF8 and Latin-1 for utf8 and latin1; refuses another, naming the two", async () => {
    const list = write("id,email,name\nu1,a@example.com,Ana\n");
    for (const spelling of ["utf-8", "UTF8", "UTF-8"]) {
      const r = await dryRun(list, ["--encoding", spelling]);
      assert.strictEqual(r.code, 0, `${spelling}: ${r.stderr}`);
    }
    assert.strictEqual((await dryRun(list, ["--encoding", "Latin-1"])).code, 0);
    const bad = await dryRun(list, ["--encoding", "utf-16"]);
    assert.strictEqual(bad.code, 2);
    assert.match(bad.stderr, /--encoding utf-16: one of utf8, latin1/);
  });
});
