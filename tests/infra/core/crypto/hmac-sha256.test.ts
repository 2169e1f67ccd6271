import { strict as assert } from "assert";
import { createHmac } from "crypto";
import fc from "fast-check";
import { base64urlInto, HmacSha256, paddedLength } from "../../../../infra/core/crypto/hmac-sha256";
import { UnsubscribeSigner } from "../../../../infra/core/consent/unsubscribe";

/** The expected MAC from Node's crypto (OpenSSL), not from the code under test. */
const nodeHmac = (key: Uint8Array, message: Uint8Array) => createHmac("sha256", key).update(message).digest();

function ours(key: Uint8Array, message: Uint8Array): Buffer {
  const scratch = Buffer.alloc(paddedLength(message.length) + 7, 0xee);
  scratch.set(message, 0);
  const out = Buffer.alloc(40, 0xee);
  new HmacSha256(key).mac(scratch, message.length, out, 4);
  // Only the 32 bytes at 4 are written.
  assert.deepStrictEqual(
    [...out.subarray(0, 4), ...out.subarray(36)],
    [0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee],
  );
  return out.subarray(4, 36);
}

describe("HMAC-SHA256 in JavaScript (the launcher's signer)", () => {
  it("equals Node's createHmac for every message length across the block boundaries, and for keys past a block", () => {
    const key = Buffer.from("0123456789abcdef0123456789abcdef");
    // 55/56 and 119/120 bytes: where the padding stops fitting the last block; 64 and 128: whole blocks.
    for (let n = 0; n <= 200; n++) {
      const message = Buffer.alloc(n, n % 251);
      assert.deepStrictEqual(ours(key, message), nodeHmac(key, message), `${n} bytes`);
    }
    for (const k of [0, 1, 63, 64, 65, 200]) {
      const longKey = Buffer.alloc(k, 0x5a);
      assert.deepStrictEqual(ours(longKey, Buffer.from("m")), nodeHmac(longKey, Buffer.from("m")), `key of ${k} bytes`);
    }
  });

  it("property: equals createHmac for random keys and messages", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 130 }), fc.uint8Array({ maxLength: 400 }), (key, message) => {
        assert.deepStrictEqual(ours(key, message), nodeHmac(key, message));
      }),
      { numRuns: 300 },
    );
  });

  it("reuses one instance: each MAC depends on its message only", () => {
    const key = Buffer.from("k");
    const h = new HmacSha256(key);
    for (const text of ["a", "a much longer message than one block of sixty-four bytes, to be sure", "", "a"]) {
      const m = Buffer.from(text);
      const scratch = Buffer.alloc(paddedLength(m.length));
      scratch.set(m);
      const out = Buffer.alloc(32);
      h.mac(scratch, m.length, out, 0);
      assert.deepStrictEqual(out, nodeHmac(key, m), text);
    }
  });

  it("refuses scratch too short for the padding instead of writing past it", () => {
    const h = new HmacSha256(Buffer.from("k"));
    assert.throws(() => h.mac(Buffer.alloc(60), 56, Buffer.alloc(32), 0), /HMAC scratch of 60 bytes: 128 needed/);
  });

  it("base64urlInto equals Buffer's base64url (no padding) for every length", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const out = Buffer.alloc(200);
        const end = base64urlInto(bytes, 0, bytes.length, out, 3);
        assert.strictEqual(out.toString("latin1", 3, end), Buffer.from(bytes).toString("base64url"));
      }),
      { numRuns: 300 },
    );
  });
});

describe("UnsubscribeSigner", () => {
  const CONTEXT = "sendtime-unsubscribe:v1:";
  it("property: a token is base64url(address).base64url(HMAC(key, context + address)), as createHmac computes it", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.array(fc.oneof(fc.emailAddress(), fc.string({ unit: "grapheme", maxLength: 120 })), { maxLength: 20 }),
        (key, emails) => {
          const signer = new UnsubscribeSigner(Buffer.from(key));
          for (const email of emails) {
            const address = email.trim().toLowerCase();
            const mac = createHmac("sha256", key)
              .update(CONTEXT + address, "utf8")
              .digest("base64url");
            assert.strictEqual(signer.token(email), `${Buffer.from(address).toString("base64url")}.${mac}`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("grows its buffers for a long address", () => {
    const key = Buffer.from("k");
    const signer = new UnsubscribeSigner(key);
    const address = `${"é".repeat(500)}@example.com`;
    const mac = createHmac("sha256", key)
      .update(CONTEXT + address, "utf8")
      .digest("base64url");
    assert.strictEqual(signer.token(address), `${Buffer.from(address).toString("base64url")}.${mac}`);
    assert.strictEqual(signer.token("a@b.co").split(".")[0], Buffer.from("a@b.co").toString("base64url"));
  });

  it("without a key, signs nothing: a zero signature (43 A's), the length of a real one", () => {
    const signer = new UnsubscribeSigner(undefined);
    assert.strictEqual(
      signer.token(" Zoe@Example.com "),
      `${Buffer.from("zoe@example.com").toString("base64url")}.${"A".repeat(43)}`,
    );
  });
});
