import { strict as assert } from "assert";
import { createHash } from "crypto";
import { smsSenderInput } from "../../../../infra/core/send/sms-input";

describe("sms-input: the one sender's input for texts", () => {
  it("carries each entry's number, text and legal end, the recipients in order, and the invocation's identity", () => {
    const input = smsSenderInput("spring.2026", { step: 2, variant: "B" }, [
      { recipient_id: "r1", phone: "+13055550100", body: "Hi Ana", until: "2026-12-05T01:00:00.000Z" },
      {
        recipient_id: "r2",
        phone: "+14165550199",
        body: "Hi Bo",
        until: "2026-12-05T02:30:00.000Z",
        same_subject_limit: 3,
      },
    ]);
    assert.deepEqual(input, {
      channel: "sms",
      sms: {
        MessageType: "PROMOTIONAL",
        Entries: [
          { DestinationPhoneNumber: "+13055550100", MessageBody: "Hi Ana", Until: "2026-12-05T01:00:00.000Z" },
          {
            DestinationPhoneNumber: "+14165550199",
            MessageBody: "Hi Bo",
            Until: "2026-12-05T02:30:00.000Z",
            SameSubjectLimit: 3,
          },
        ],
      },
      recipients: ["r1", "r2"],
      // A tag holds no dot: the id's dots become _ with the first 8 hex digits of sha256("spring.2026").
      campaign: `spring_2026-${createHash("sha256").update("spring.2026").digest("hex").slice(0, 8)}`,
      step: 2,
      variant: "B",
      schedule: "<aws.scheduler.schedule-arn>",
      scheduled_time: "<aws.scheduler.scheduled-time>",
    });
  });

  it("has no variant without variants, and takes TRANSACTIONAL when asked", () => {
    const input = smsSenderInput("c1", { step: 1, variant: null }, [], "TRANSACTIONAL");
    assert.equal("variant" in input, false);
    assert.equal(input.sms.MessageType, "TRANSACTIONAL");
  });
});
