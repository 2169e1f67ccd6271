import { strict as assert } from "assert";
import { nearest } from "../../../../infra/core/text/nearest";

describe("nearest: the did-you-mean of a misspelt name", () => {
  it("takes the closest name by edit distance, case aside", () => {
    // "--windw-minutes" → "window-minutes": one insertion; "--tps" is 11 edits away.
    assert.equal(nearest("windw-minutes", ["tps", "window-minutes"]), "window-minutes");
    assert.equal(nearest("FromAddress", ["fromAddress", "frequencyCap"]), "fromAddress");
  });

  it("gives nothing when no name is a likely misspelling (more than max(2, length / 3) edits)", () => {
    // "zzz" to "tps": 3 substitutions > 2.
    assert.equal(nearest("zzz", ["tps"]), undefined);
    // "recipeints" (10 letters) to "recipients": 2 edits (a swap is two substitutions) ≤ 3.
    assert.equal(nearest("recipeints", ["recipients"]), "recipients");
  });
});
