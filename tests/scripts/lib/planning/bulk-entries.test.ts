/**
 * Cutting one entry out of a sender's Input (scripts/lib/planning/bulk-entries.ts): a property over inputs whose
 * entries are arbitrary JSON texts (fast-check's JSON, written with its own spacing), against an independent oracle:
 * JSON.parse of the result equals the parsed input with that element dropped, and each other entry's text is still
 * there verbatim, in order.
 */
import * as assert from "assert";
import fc from "fast-check";
import { splitBulkEntry } from "../../../../scripts/lib/planning/bulk-entries";

const RUNS = Number(process.env.SENDTIME_PROPERTY_RUNS ?? 200);

describe("splitBulkEntry", () => {
  it("keeps every other entry's text byte for byte; the one taken out stands alone", () => {
    fc.assert(
      fc.property(
        fc.array(fc.json(), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.constantFrom("", " ", "\n  "),
        (entries, k, space) => {
          const index = k % entries.length;
          const ids = entries.map((_, i) => JSON.stringify(`r${i}/\u00e9`));
          const text = `{"bulk":{"FromEmailAddress":"a@example.com",${space}"BulkEmailEntries":[${entries.join(`,${space}`)}]},"recipients":[${ids.join(",")}],"campaign":"c"}`;
          const { rest, alone } = splitBulkEntry(text, index);
          const parsed = JSON.parse(text);
          const expected = JSON.parse(text);
          expected.bulk.BulkEmailEntries.splice(index, 1);
          expected.recipients.splice(index, 1);
          assert.deepStrictEqual(JSON.parse(rest), expected);
          const others = entries.filter((_, i) => i !== index);
          assert.ok(rest.includes(`[${others.join(",")}]`), rest);
          const one = JSON.parse(alone);
          assert.deepStrictEqual(one.bulk.BulkEmailEntries, [parsed.bulk.BulkEmailEntries[index]]);
          assert.deepStrictEqual(one.recipients, [parsed.recipients[index]]);
          assert.ok(alone.includes(`[${entries[index]}]`));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("refuses an Input it cannot cut, naming what is wrong", () => {
    assert.throws(
      () => splitBulkEntry('{"bulk":{"BulkEmailEntries":[1,2]},"recipients":["a"]}', 0),
      /2 entries but 1 recipient ids/,
    );
    assert.throws(() => splitBulkEntry('{"recipients":["a"]}', 0), /no bulk\.BulkEmailEntries/);
    assert.throws(() => splitBulkEntry('{"bulk":{"BulkEmailEntries":[1]},"recipients":["a"]', 0), /not JSON/);
    assert.throws(() => splitBulkEntry('{"bulk":{"BulkEmailEntries":[1]},"recipients":["a"]}', 1), /no entry 2 of 1/);
  });
});
