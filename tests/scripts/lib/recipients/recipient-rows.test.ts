import * as assert from "assert";
import { isReject, RecipientChecker } from "../../../../scripts/lib/recipients/recipient-rows";
import { recipientColumns } from "../../../../scripts/lib/recipients/recipient-columns";
import { TemplateDataJson } from "../../../../scripts/lib/recipients/row-size";

describe("recipient checks: ids and their case-folded forms in one set", () => {
  it("a duplicate id is exact; an id differing only in case or spaces is noted against the first planned row only", () => {
    const columns = recipientColumns("list.csv", ["id", "email"]);
    const checker = new RecipientChecker(columns, { steps: 1, noticeIdsDifferingInCase: true });
    try {
      const rows = [
        ["ABC", "not-an-address"], // line 2: rejected, so no note may point at it
        ["abc", "a@example.com"], // line 3: planned; "ABC" on line 2 was rejected: no note
        [" Abc", "b@example.com"], // line 4: noted against line 3
        ["ABC", "c@example.com"], // line 5: the same id as line 2: duplicate-id, first on line 2
        ["abc ", "a@example.com"], // line 6: duplicate address (line 3): rejected, not marked
        ["ABC ", "d@example.com"], // line 7: noted against line 3 (line 6 was rejected)
      ];
      const results = rows.map((fields, i) => checker.check({ line: i + 2, fields }));
      const summary = results.map((r) =>
        isReject(r) ? `${r.line} ${r.reason}: ${r.text}` : `${r.line} ok ${r.sameIdButCase ?? "-"}`,
      );
      assert.deepStrictEqual(summary, [
        '2 invalid-email: invalid email address "not-an-address"',
        "3 ok -",
        "4 ok 3",
        "5 duplicate-id: duplicate id (first on line 2); a recipient is sent once",
        "6 duplicate-email: duplicate email address (first on line 3); a person is sent once",
        "7 ok 3",
      ]);
    } finally {
      checker.close();
    }
  });
});

describe("recipient CSV reader: records taken a chunk at a time", () => {
  const { Readable } = require("stream") as typeof import("stream");
  const { openRecipientCsv } =
    require("../../../../scripts/lib/recipients/recipients") as typeof import("../../../../scripts/lib/recipients/recipients");

  async function readAll(input: import("stream").Readable) {
    const csv = await openRecipientCsv("list.csv", "utf8", input);
    const lines: number[] = [];
    for await (const rec of csv.records) lines.push(rec.line);
    return lines;
  }

  it("yields every record with its line, across many chunks, then ends", async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => `u${i},u${i}@example.com,"City, ${i % 7}"\n`);
    const chunks = ["id,email,city\n", ...rows].join("").match(/[\s\S]{1,1000}/g)!;
    const lines = await readAll(Readable.from(chunks.map((c) => Buffer.from(c))));
    assert.strictEqual(lines.length, 50_000);
    assert.strictEqual(lines[0], 2);
    assert.strictEqual(lines[49_999], 50_001);
  });

  it("a stream that fails after some rows is an error, never an early end", async () => {
    async function* failing() {
      yield Buffer.from("id,email\n");
      for (let i = 0; i < 2_000; i++) yield Buffer.from(`u${i},u${i}@example.com\n`);
      throw new Error("download stalled");
    }
    await assert.rejects(readAll(Readable.from(failing())), /download stalled/);
  });

  it("bytes that are not UTF-8 after 100,000 good rows stop the read with the line", async () => {
    const good = Array.from({ length: 100_000 }, (_, i) => `u${i},u${i}@example.com\n`).join("");
    const bytes = Buffer.concat([
      Buffer.from("id,email\n" + good),
      Buffer.from([0x75, 0xff, 0x2c, 0x61, 0x40, 0x62, 0x2e, 0x63, 0x0a]),
    ]);
    await assert.rejects(readAll(Readable.from([bytes])), /list\.csv:100002: not UTF-8/);
  });

  it("the stream given is closed when a row is malformed, when the bytes are not UTF-8, and when the reader stops early", async () => {
    // Lists longer than the 64 KB read ahead to find the line endings, so the stream is still open when the read stops.
    const rows = (from: number) =>
      Array.from({ length: 10_000 }, (_, i) => Buffer.from(`u${from + i},u${from + i}@example.com\n`));
    const malformed = Readable.from([Buffer.from('id,email\nu1,a@example.com\nu2,b@exa"mple.com\n'), ...rows(3)]);
    await assert.rejects(readAll(malformed), /list\.csv:3: malformed CSV: a quote inside an unquoted field/);
    assert.strictEqual(malformed.destroyed, true);
    const notUtf8 = Readable.from([
      Buffer.from("id,email\nu1,a@example.com\n"),
      Buffer.from([0x75, 0xff, 0x0a]),
      ...rows(3),
    ]);
    await assert.rejects(readAll(notUtf8), /not UTF-8/);
    assert.strictEqual(notUtf8.destroyed, true);
    const long = Readable.from([Buffer.from("id,email\n"), ...rows(0)]);
    const csv = await openRecipientCsv("list.csv", "utf8", long);
    for await (const rec of csv.records) if (rec.line === 3) break;
    assert.strictEqual(long.destroyed, true);
  });
});

describe("template data: a row's personalization as JSON text", () => {
  it("is what JSON.stringify gives for an object of the columns' values, key order and escapes included", () => {
    // Integer-like names come first in JSON.stringify's order; __proto__ is data; quotes, controls and non-ASCII escape.
    const header = ["id", "email", "timezone", "city", "10", "__proto__", "2", 'a"b', "ü", "send_hour"];
    const columns = recipientColumns("list.csv", header);
    const rows = [
      ["u1", "a@example.com", "UTC", "Oslo", "x", 'q"uote', "y", "multi\nline", "é", "7"],
      ["u2", "b@example.com", "UTC", "", "\\back", "\t", "z", "\u0001", "\u{1F600}", ""],
    ];
    for (const fields of rows) {
      const reference: Record<string, string> = Object.create(null);
      for (const name of ["city", "10", "__proto__", "2", 'a"b', "ü"]) reference[name] = fields[header.indexOf(name)];
      const expected = JSON.stringify({ ...reference, step: "1" });
      assert.strictEqual(new TemplateDataJson(columns).prefix(fields) + '"step":"1"}', expected);
    }
    assert.strictEqual(
      new TemplateDataJson(recipientColumns("list.csv", ["id", "email"])).prefix(["u1", "a@example.com"]),
      "{",
    );
  });
});
