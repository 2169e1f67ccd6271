import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { fnv1a32, CompactSeenKeys } from "../../../../scripts/lib/recipients/seen-keys";

/** Feeds keys as lines 2, 3, …; returns each key's answer next to what a plain Map says (the reference). */
function compareWithMap(keys: string[], set: CompactSeenKeys) {
  const reference = new Map<string, number>();
  const mismatches: string[] = [];
  keys.forEach((key, i) => {
    const line = i + 2;
    const expected = reference.get(key);
    if (expected === undefined) reference.set(key, line);
    const got = set.firstLineOrAdd(key, line);
    if (got !== expected) mismatches.push(`${JSON.stringify(key)} on line ${line}: got ${got}, expected ${expected}`);
  });
  return { mismatches, distinct: reference.size };
}

describe("CompactSeenKeys: exact duplicate detection in a compact table", () => {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "sendtime-seen-test-"));
  after(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

  it("answers the first line of a repeated key and undefined for a new one", () => {
    const set = new CompactSeenKeys({ tmpDir });
    try {
      assert.strictEqual(set.firstLineOrAdd("a1", 2), undefined);
      assert.strictEqual(set.firstLineOrAdd("a2", 3), undefined);
      assert.strictEqual(set.firstLineOrAdd("a1", 7), 2);
      assert.strictEqual(set.firstLineOrAdd("a1", 9), 2, "the first line stays the first");
      assert.strictEqual(set.size, 2);
    } finally {
      set.close();
    }
  });

  it("a key that UTF-8 cannot carry (a lone surrogate) is refused when added, never stored mangled and then missed as a duplicate", () => {
    const set = new CompactSeenKeys({ tmpDir });
    try {
      const lone = JSON.parse('"u\\ud800"') as string;
      assert.throws(() => set.firstLineOrAdd(lone, 2), /not well-formed Unicode/);
      assert.strictEqual(set.size, 0);
      // A surrogate pair (an emoji) is well formed: stored and found exactly.
      assert.strictEqual(set.firstLineOrAdd("u\u{1F600}", 3), undefined);
      assert.strictEqual(set.firstLineOrAdd("u\u{1F600}", 4), 3);
    } finally {
      set.close();
    }
  });

  it("a forced hash collision never rejects a distinct key, and every true duplicate is still found", () => {
    // Every key hashes to 42: each lookup must compare the keys themselves.
    const set = new CompactSeenKeys({ hash: () => 42, tmpDir });
    try {
      // Keys that differ only in ways a hash or a sloppy compare might miss: case, spaces, Unicode normalization.
      const keys = [
        "ana@example.com",
        "Ana@example.com",
        "ana@example.com ",
        "caf\u00e9",
        "cafe\u0301",
        "1",
        "01",
        "ana@example.com",
        "caf\u00e9",
        "01",
      ];
      const { mismatches, distinct } = compareWithMap(keys, set);
      assert.deepStrictEqual(mismatches, []);
      assert.strictEqual(distinct, 7);
      assert.strictEqual(set.size, 7);
    } finally {
      set.close();
    }
  });

  it("stays exact when colliding keys have been flushed to the log file, across table growth", () => {
    // 64 hash values for 2,000 keys of 1,000 characters (2 MB of log, past the 1 MB write buffer) with repeats.
    const set = new CompactSeenKeys({ hash: (k) => (fnv1a32(k) & 63) << 8, initialCapacity: 16, tmpDir });
    try {
      const keys: string[] = [];
      for (let i = 0; i < 2_000; i++) keys.push(`${"x".repeat(990)}${String(i).padStart(10, "0")}`);
      for (let i = 0; i < 2_000; i += 7) keys.push(keys[i]);
      const { mismatches, distinct } = compareWithMap(keys, set);
      assert.deepStrictEqual(mismatches.slice(0, 3), []);
      assert.strictEqual(set.size, distinct);
    } finally {
      set.close();
    }
  });

  it("256 hash values for 4,000 keys: every collision is resolved by the keys, across growths", () => {
    const set = new CompactSeenKeys({ hash: (k) => (fnv1a32(k) & 0xff000000) | 5, initialCapacity: 16, tmpDir });
    try {
      const keys = Array.from({ length: 6_000 }, (_, i) => `id-${i % 4_000}`);
      const { mismatches, distinct } = compareWithMap(keys, set);
      assert.deepStrictEqual(mismatches.slice(0, 3), []);
      assert.strictEqual(distinct, 4_000);
    } finally {
      set.close();
    }
  });

  it("matches a Map on 200,000 random keys with the real hash (many growths, many duplicates)", () => {
    const set = new CompactSeenKeys({ initialCapacity: 16, tmpDir });
    try {
      let seed = 7;
      const random = () => {
        seed ^= seed << 13;
        seed ^= seed >>> 17;
        seed ^= seed << 5;
        return (seed >>> 0) / 4294967296;
      };
      const keys = Array.from({ length: 200_000 }, () => `user${Math.floor(random() * 150_000)}@example.com`);
      const { mismatches, distinct } = compareWithMap(keys, set);
      assert.deepStrictEqual(mismatches.slice(0, 3), []);
      assert.ok(distinct < 200_000 && distinct > 100_000, `distinct ${distinct}`);
    } finally {
      set.close();
    }
  });

  it("spreads ordinary ids over the whole 32-bit range", () => {
    const buckets = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) buckets[fnv1a32(`u${i}`) >>> 28]++;
    for (const b of buckets) assert.ok(b > 800 && b < 1200, `bucket counts ${buckets.join(",")}`);
  });

  it("firstLine then add (the checker's pattern) behaves like firstLineOrAdd, also with another key in between", () => {
    const set = new CompactSeenKeys({ hash: () => 1, tmpDir });
    try {
      assert.strictEqual(set.firstLine("a"), undefined);
      assert.strictEqual(set.firstLine("b"), undefined);
      set.add("a", 2); // not the key looked up last: probed again
      set.add("b", 3);
      assert.strictEqual(set.firstLine("a"), 2);
      assert.strictEqual(set.firstLine("b"), 3);
      assert.throws(() => set.add("a", 9), /already present/);
      assert.strictEqual(set.size, 2);
    } finally {
      set.close();
    }
  });

  it("firstLine then add with other lookups in between (found, not found, non-ASCII): every key is still found", () => {
    const set = new CompactSeenKeys({ tmpDir });
    try {
      set.firstLineOrAdd("bob@x.com", 1);
      assert.strictEqual(set.firstLine("alice@x.com"), undefined);
      assert.strictEqual(set.firstLine("bob@x.com"), 1); // found: its bytes were written where alice's wait
      set.add("alice@x.com", 3);
      assert.strictEqual(set.firstLine("carol@x.com"), undefined);
      assert.strictEqual(set.firstLine("dörte@x.com"), undefined); // non-ASCII: the general path
      set.add("carol@x.com", 4);
      assert.deepStrictEqual(
        ["alice@x.com", "bob@x.com", "carol@x.com", "dörte@x.com"].map((k) => set.firstLine(k)),
        [3, 1, 4, undefined],
      );
      assert.strictEqual(set.size, 3);
    } finally {
      set.close();
    }
  });

  it("stays exact across the switch from 4-byte to 8-byte slots (lowered here to 1,000 keys)", () => {
    const set = new CompactSeenKeys({
      hash: (k) => fnv1a32(k) & 0xfff,
      initialCapacity: 16,
      narrowMaxKeys: 1_000,
      tmpDir,
    });
    try {
      const keys = Array.from({ length: 9_000 }, (_, i) => `k${(i * 7919) % 3_000}`);
      const narrowBytes = set.tableBytes;
      const { mismatches, distinct } = compareWithMap(keys, set);
      assert.deepStrictEqual(mismatches.slice(0, 3), []);
      assert.strictEqual(distinct, 3_000);
      assert.strictEqual(set.size, 3_000);
      assert.ok(set.tableBytes > narrowBytes);
    } finally {
      set.close();
    }
  });

  it("sized for the expected count, 1,000,000 keys take under 5 bytes each of memory and the table does not grow", () => {
    const set = new CompactSeenKeys({ initialCapacity: 1_000_000, tmpDir });
    try {
      const before = set.tableBytes;
      for (let i = 0; i < 1_000_000; i++) set.add(`user${i}@example.com`, i + 2);
      assert.strictEqual(set.tableBytes, before, "no growth");
      assert.ok(set.tableBytes / set.size < 5, `${set.tableBytes / set.size} bytes a key`);
      assert.strictEqual(set.firstLine("user0@example.com"), 2);
      assert.strictEqual(set.firstLine("user999999@example.com"), 1_000_001);
      assert.strictEqual(set.firstLine("user1000000@example.com"), undefined);
    } finally {
      set.close();
    }
  });

  it("keys that fold alike: firstMarkedLineOfFold answers the earliest marked one, firstLine only the exact key", () => {
    // Every key collides too: the fold must be compared on the keys read back, not taken from the hash.
    const fold = (k: string) => k.trim().toLowerCase();
    const set = new CompactSeenKeys({ fold, hash: () => 7, tmpDir });
    try {
      set.add("ABC", 2, false); // not marked (its row was rejected)
      assert.strictEqual(set.firstMarkedLineOfFold("abc"), undefined);
      set.add("xyz", 3, true);
      set.add(" Abc", 4, true);
      set.add("abc", 5, true);
      assert.strictEqual(set.firstLine("abc"), 5);
      assert.strictEqual(set.firstLine("ABC"), 2);
      assert.strictEqual(set.firstLine("aBc"), undefined);
      assert.strictEqual(set.firstMarkedLineOfFold("aBc"), 4);
      assert.strictEqual(set.firstMarkedLineOfFold("XYZ "), 3);
      assert.strictEqual(set.firstMarkedLineOfFold("xy"), undefined);
    } finally {
      set.close();
    }
  });

  it("close() removes its key log", () => {
    const before = fs.readdirSync(tmpDir).length;
    const set = new CompactSeenKeys({ tmpDir });
    set.firstLineOrAdd("k", 2);
    assert.strictEqual(fs.readdirSync(tmpDir).length, before + 1);
    set.close();
    assert.strictEqual(fs.readdirSync(tmpDir).length, before);
  });
});
