import * as assert from "assert";
import * as path from "path";
import { InputError } from "../../../../infra/core/errors";
import { renderStack } from "../../../../scripts/lib/offline/mock-stack";
import { devConfig } from "../../../helpers/stack";

/**
 * renderStack reloads the program on each call (its modules read config when they load), but not the pure layers it
 * uses: a CLI loaded before a render and a test loaded after it must share infra/core's error classes, or an
 * `instanceof InputError` in the CLI's runner misses the test's (exit 1 for a usage error) — which depends on which
 * files ran before in the same process, as when mocha runs files in parallel workers.
 */
describe("renderStack reloads the program, not the pure layers", function () {
  this.timeout(60_000);
  const ROOT = path.resolve(__dirname, "..", "..", "..", "..");
  const cached = (file: string) => require.cache[path.join(ROOT, file)];

  it("keeps infra/core's modules (one InputError class) and reloads infra/index.ts", async () => {
    // renderStack itself, not the tests' memo (renderWith): a render another test of this worker made earlier would
    // come back without loading anything.
    await renderStack({ stack: "dev", config: devConfig() });
    const program = cached("infra/index.ts");
    assert.ok(program, "the program is loaded");
    await renderStack({ stack: "dev", config: { ...devConfig(), "aws:region": "eu-west-1" } });
    assert.notStrictEqual(cached("infra/index.ts"), program, "a second render with other config loads it again");
    assert.strictEqual(require("../../../../infra/core/errors").InputError, InputError);
    assert.strictEqual(cached("infra/core/errors.ts")?.exports.InputError, InputError);
  });
});
