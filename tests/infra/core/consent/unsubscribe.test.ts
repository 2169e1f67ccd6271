import { strict as assert } from "assert";
import fc from "fast-check";
import {
  unsubscribeHeaders,
  unsubscribeToken,
  unsubscribeUrl,
  verifyUnsubscribeToken,
} from "../../../../infra/core/consent/unsubscribe";

const KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => i));

describe("one-click unsubscribe tokens", () => {
  it("are the address and its HMAC-SHA256, base64url (the expected token computed with Python's hmac)", () => {
    // python3: b64url(a) + "." + b64url(hmac.new(bytes(range(32)), b"sendtime-unsubscribe:v1:" + a, sha256).digest())
    assert.equal(
      unsubscribeToken(KEY, " Zoe@Example.com "),
      "em9lQGV4YW1wbGUuY29t.Zfvn0wMgRE4CNBnRmoI_NSov6mVMiCquTE0a-ig7Vv4",
    );
  });

  it("verify to the address they name, trimmed and lower-cased", () => {
    assert.equal(verifyUnsubscribeToken(KEY, unsubscribeToken(KEY, "Zoe@Example.com")), "zoe@example.com");
  });

  it("refuse a token signed with another key, for another address, or malformed", () => {
    const other = Buffer.alloc(32, 7);
    const token = unsubscribeToken(KEY, "zoe@example.com");
    assert.equal(verifyUnsubscribeToken(other, token), undefined);
    const [, sig] = token.split(".");
    const forged = `${Buffer.from("eve@example.com").toString("base64url")}.${sig}`;
    assert.equal(verifyUnsubscribeToken(KEY, forged), undefined);
    for (const bad of ["", ".", token + "x", token.replace(".", ""), `${token.split(".")[0]}.`, "a.b"])
      assert.equal(verifyUnsubscribeToken(KEY, bad), undefined, bad);
  });

  it("refuse the other spellings of the same signature bytes (the last character's two spare bits)", () => {
    const token = unsubscribeToken(KEY, "zoe@example.com");
    assert.ok(token.endsWith("4"));
    for (const c of "567") assert.equal(verifyUnsubscribeToken(KEY, token.slice(0, -1) + c), undefined, c);
  });

  it("never verify a changed token (property: any one character changed)", () => {
    const token = unsubscribeToken(KEY, "zoe@example.com");
    fc.assert(
      fc.property(
        fc.nat(token.length - 1),
        fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."),
        (at, c) => {
          fc.pre(token[at] !== c);
          const changed = token.slice(0, at) + c + token.slice(at + 1);
          const address = verifyUnsubscribeToken(KEY, changed);
          assert.ok(address === undefined, `${changed} verified as ${address}`);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("make the link and the RFC 8058 headers", () => {
    const link = unsubscribeUrl("https://abc.lambda-url.us-east-1.on.aws/", KEY, "zoe@example.com");
    assert.equal(
      link,
      "https://abc.lambda-url.us-east-1.on.aws/?t=em9lQGV4YW1wbGUuY29t.Zfvn0wMgRE4CNBnRmoI_NSov6mVMiCquTE0a-ig7Vv4",
    );
    assert.deepEqual(unsubscribeHeaders(link), [
      { Name: "List-Unsubscribe", Value: `<${link}>` },
      { Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click" },
    ]);
  });
});
