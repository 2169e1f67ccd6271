import * as assert from "assert";
import { settingsFromEnv } from "../../infra/handlers/settings";

describe("handler settings", () => {
  const read = (value: string | undefined) =>
    settingsFromEnv<{ a: string; b: string; c: string }>(value === undefined ? {} : { S: value }, "S", ["a", "b", "c"]);

  it("the environment variable's JSON when every required field is set", () => {
    assert.deepStrictEqual(read('{"a":"1","b":"2","c":"3","d":"4"}'), { a: "1", b: "2", c: "3", d: "4" });
  });

  it("missing, not JSON, or a field unset: one message naming the variable and its fields", () => {
    assert.throws(() => read(undefined), { message: "environment S is missing or not JSON" });
    assert.throws(() => read("{a"), { message: "environment S is missing or not JSON" });
    for (const bad of ["null", '{"a":"1","b":"2"}', '{"a":"1","b":"","c":"3"}'])
      assert.throws(() => read(bad), { message: "environment S lacks a, b or c" }, bad);
  });
});
