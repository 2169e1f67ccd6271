import { strict as assert } from "assert";
import { InputError } from "../../../../infra/core/errors";
import { jsonObjectSetting, settingFailure } from "../../../../infra/core/config/json-setting";

describe("json-setting: a stack setting holding a JSON object", () => {
  const read = (raw: string) => jsonObjectSetting(raw, ["a", "b"], settingFailure("sendtime:x", raw, "JSON {a, b}"));

  it("gives the object of known keys", () => assert.deepEqual(read('{"a": 1}'), { a: 1 }));

  for (const [raw, why] of [
    ["{a: 1}", "not JSON"],
    ["[1]", "not an object"],
    ["null", "not an object"],
    ['{"a": 1, "c": 2, "d": 3}', "unknown key c, d"],
  ])
    it(`refuses ${raw} in one line: ${why}`, () =>
      assert.throws(
        () => read(raw),
        (e: unknown) =>
          e instanceof InputError &&
          e.message === `sendtime:x = ${JSON.stringify(raw)} is not valid: ${why}; expected JSON {a, b}`,
      ));
});
