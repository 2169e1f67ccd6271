import * as assert from "assert";
import { Readable } from "stream";
import fc from "fast-check";
import { firstInvalidUtf8, lines } from "../../../../scripts/lib/pinpoint/lines";

/** Node's own strict decoder: the independent judge of what is UTF-8. */
const strict = new TextDecoder("utf-8", { fatal: true });
const isValid = (b: Uint8Array) => {
  try {
    strict.decode(b);
    return true;
  } catch {
    return false;
  }
};

// Bytes that make UTF-8 interesting: ASCII, LF, CR, continuation bytes, lead bytes, overlong and surrogate leads.
const byte = fc.constantFrom(
  0x41,
  0x0a,
  0x0d,
  0x80,
  0xbf,
  0xc0,
  0xc3,
  0xa9,
  0xe0,
  0xed,
  0xa0,
  0xf0,
  0xf4,
  0x90,
  0xf5,
  0xff,
);
const bytes = fc.array(byte, { maxLength: 40 }).map((a) => Uint8Array.from(a));

describe("pinpoint-lines: lines split from bytes, their UTF-8 checked", () => {
  it("firstInvalidUtf8 is -1 exactly when the strict decoder accepts, and the bytes before it are valid", () => {
    fc.assert(
      fc.property(bytes, (b) => {
        const at = firstInvalidUtf8(b);
        assert.strictEqual(at === -1, isValid(b));
        if (at >= 0)
          assert.ok(isValid(b.subarray(0, at)) && !isValid(b.subarray(0, at + 4 > b.length ? b.length : at + 4)));
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same lines, texts and invalid offsets however the bytes are cut into chunks", async () => {
    await fc.assert(
      fc.asyncProperty(
        bytes,
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }),
        async (b, cuts) => {
          const chunks: Buffer[] = [];
          for (let at = 0, i = 0; at < b.length; i++) {
            const n = cuts[i % cuts.length];
            chunks.push(Buffer.from(b.subarray(at, at + n)));
            at += n;
          }
          const got = [];
          for await (const l of lines(Readable.from(chunks))) got.push(l);
          // Expected from the whole buffer at once: split at LF, drop one CR before it, judge each line on its own.
          const parts = Buffer.from(b).toString("latin1").split("\n");
          if (parts[parts.length - 1] === "") parts.pop();
          const expected = parts.map((p, i) => {
            const raw = Buffer.from(p.endsWith("\r") ? p.slice(0, -1) : p, "latin1");
            return { line: i + 1, text: raw.toString("utf8"), invalidAt: isValid(raw) ? -1 : firstInvalidUtf8(raw) };
          });
          assert.deepStrictEqual(got, expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
