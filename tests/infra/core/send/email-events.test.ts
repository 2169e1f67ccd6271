import * as assert from "assert";
import { campaignTag, EMAIL_EVENTS } from "../../../../infra/core/send/email-events";
import { campaignIdProblem } from "../../../../infra/core/plan/naming";

describe("email tags and events", () => {
  it("a campaign id of tag characters is its own tag", () => {
    for (const id of ["spring", "Spring_Sale-2026", "x".repeat(55)]) assert.strictEqual(campaignTag(id), id);
  });

  it("an id with dots (valid for a schedule group, not for an SES tag) maps to _ plus a hash of the id", () => {
    // hashes from `printf 'spring.2026' | sha256sum`
    assert.strictEqual(campaignTag("spring.2026"), "spring_2026-bbb28c0e");
    assert.strictEqual(campaignTag("a.b.c"), "a_b_c-845e3044");
    assert.notStrictEqual(campaignTag("spring.2026"), campaignTag("spring_2026"));
    const longest = "a.".repeat(27) + "b";
    assert.strictEqual(campaignIdProblem(longest), undefined);
    assert.match(campaignTag(longest), /^[A-Za-z0-9_-]{1,256}$/);
  });

  it("publishes the ten SES event types, each once", () => {
    assert.deepStrictEqual(
      EMAIL_EVENTS.map((e) => e.type),
      [
        "SEND",
        "DELIVERY",
        "BOUNCE",
        "COMPLAINT",
        "REJECT",
        "RENDERING_FAILURE",
        "DELIVERY_DELAY",
        "OPEN",
        "CLICK",
        "SUBSCRIPTION",
      ],
    );
  });
});
