import * as assert from "assert";
import { hash } from "crypto";
import {
  audienceBucket,
  AudienceSplit,
  HOLDOUT,
  NO_VARIANT,
  templatesByVariant,
} from "../../../../scripts/lib/recipients/audience";

describe("variants and holdout", () => {
  it("buckets follow the published formula (expected values computed with Python, not with this code)", () => {
    // python3 -c "import hashlib; print(int.from_bytes(hashlib.sha256('bf-2026:u1'.encode()).digest()[:8], 'big') % 10000)"
    const expected: [string, string, number][] = [
      ["bf-2026", "u1", 2318],
      ["bf-2026", "u2", 1045],
      ["bf-2026", "alice@example.com", 3305],
      ["bf-2026", "Zoë", 1639], // UTF-8 bytes of the id
      ["spring-sale", "u1", 2775],
      ["spring-sale", "12345", 6198],
    ];
    for (const [campaign, id, bucket] of expected)
      assert.strictEqual(audienceBucket(campaign, id), bucket, `${campaign}:${id}`);
  });

  it("buckets agree with crypto's sha256 at every message length around one block (55 bytes), in any script", () => {
    const expected = (campaign: string, id: string) => {
      const d = hash("sha256", `${campaign}:${id}`, "buffer");
      return Number((d.readBigUInt64BE(0) % 10000n).toString());
    };
    const ids = ["", "Zoë", "名前-😀", "\ud800-lone-surrogate", ...Array.from({ length: 70 }, (_, n) => "x".repeat(n))];
    for (const campaign of ["", "bf-2026", "é".repeat(26), "c".repeat(54), "c".repeat(55), "c".repeat(80)])
      for (const id of [...ids, ...Array.from({ length: 2000 }, (_, i) => `u${i}${"é".repeat(i % 30)}`)])
        assert.strictEqual(audienceBucket(campaign, id), expected(campaign, id), `${campaign}:${id}`);
    // Campaigns taking turns (the campaign's bytes are kept between calls): each call still hashes its own.
    for (let i = 0; i < 300; i++) {
      const campaign = ["bf-2026", "é".repeat(26), "c".repeat(80), "b"][i % 4];
      const id = i % 3 ? `u${i}` : `ü${i}`;
      assert.strictEqual(audienceBucket(campaign, id), expected(campaign, id), `${campaign}:${id}`);
    }
  });

  it("variants take consecutive basis-point ranges in the order given, the holdout the last range", () => {
    const split = new AudienceSplit("bf-2026", {
      variants: [
        { name: "A", basisPoints: 1045 },
        { name: "B", basisPoints: 7955 },
      ],
      holdoutBasisPoints: 1000,
    });
    assert.strictEqual(split.groupOf(0), 0);
    assert.strictEqual(split.groupOf(1044), 0);
    assert.strictEqual(split.groupOf(1045), 1); // u2's bucket: the first of B
    assert.strictEqual(split.groupOf(8999), 1);
    assert.strictEqual(split.groupOf(9000), HOLDOUT);
    assert.strictEqual(split.groupOf(9999), HOLDOUT);
    assert.strictEqual(split.groupOfRecipient("u1"), 1); // 2318
    assert.strictEqual(split.groupOfRecipient("u2"), 1); // 1045
  });

  it("a holdout alone: the rest get the campaign without a variant", () => {
    const split = new AudienceSplit("spring-sale", { variants: [], holdoutBasisPoints: 3802 });
    assert.strictEqual(split.groupOfRecipient("12345"), HOLDOUT); // 6198 = 10000 - 3802
    assert.strictEqual(split.groupOf(6197), NO_VARIANT);
    assert.strictEqual(
      new AudienceSplit("x", { variants: [], holdoutBasisPoints: 0 }).groupOfRecipient("u1"),
      NO_VARIANT,
    );
  });

  it("a 10% holdout of 20,000 recipients holds out about 10%", () => {
    const split = new AudienceSplit("ab-test", {
      variants: [
        { name: "A", basisPoints: 4500 },
        { name: "B", basisPoints: 4500 },
      ],
      holdoutBasisPoints: 1000,
    });
    const counts = new Map<number, number>();
    for (let i = 0; i < 20_000; i++) {
      const g = split.groupOfRecipient(`user-${i}`);
      counts.set(g, (counts.get(g) ?? 0) + 1);
    }
    // binomial sd at p = 0.1, n = 20,000 is ~42: 5 sd either side
    assert.ok(Math.abs(counts.get(HOLDOUT)! - 2000) < 210, String(counts.get(HOLDOUT)));
    assert.ok(Math.abs(counts.get(0)! - 9000) < 360, String(counts.get(0)));
  });

  it("a variant's template replaces the campaign template for step 1; {variant} is replaced in every step", () => {
    const audience = {
      variants: [
        { name: "short", basisPoints: 5000, template: "bf-subject-short" },
        { name: "long", basisPoints: 5000 },
      ],
      holdoutBasisPoints: 0,
    };
    assert.deepStrictEqual(templatesByVariant(audience, ["bf-{variant}", "reminder-{variant}", "bf-{variant}"]), [
      ["bf-subject-short", "bf-long", "bf-{variant}"],
      ["reminder-short", "reminder-long", "reminder-{variant}"],
      ["bf-short", "bf-long", "bf-{variant}"],
    ]);
  });
});
