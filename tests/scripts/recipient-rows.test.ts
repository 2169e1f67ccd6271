import * as assert from "assert";
import { isReject, RecipientChecker, recipientColumns } from "../../scripts/lib/core/recipient-rows";

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
      const summary = results.map((r) => (isReject(r) ? `${r.line} ${r.reason}: ${r.text}` : `${r.line} ok ${r.sameIdButCase ?? "-"}`));
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
