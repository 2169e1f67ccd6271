import { policyDocument, sesOptOutStatements } from "../../infra/iam";
import { sesOptOutRecorderRoleMinimal } from "../../policy/opt-out-events";
import { assertHasStackViolation, assertNoStackViolations, doc, stackResource } from "./util";

const ROLE_ARN = "arn:aws:iam::123456789012:role/ses-opt-outs-role-1";
const TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/unsubscribe-opt-outs-1a2b3c4";
const GRANTS = {
  optOutTableArn: TABLE,
  logGroupArn: "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/sendtime-ses-opt-outs-dev",
  deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:ses-opt-outs-dlq-1",
};
const FN_ARN = "arn:aws:lambda:us-east-1:123456789012:function:sendtime-ses-opt-outs-dev";

/** The recorder as the stack has it: found by its rule on SES's events (`handler`: its entry point, or another). */
function recorder(policy: string, opts: { handler?: string; managed?: string[] } = {}) {
  return [
    stackResource("aws:cloudwatch/eventRule:EventRule", "ses-opt-outs-rule", {
      name: "ses-opt-outs-rule-1",
      eventPattern: JSON.stringify({ source: ["aws.ses"], "detail-type": ["Email Subscribed"] }),
    }),
    stackResource("aws:cloudwatch/eventTarget:EventTarget", "ses-opt-outs-target", {
      rule: "ses-opt-outs-rule-1",
      arn: FN_ARN,
    }),
    stackResource("aws:lambda/function:Function", "ses-opt-outs-function", {
      name: "sendtime-ses-opt-outs-dev",
      arn: FN_ARN,
      role: ROLE_ARN,
      handler: opts.handler ?? "index.sesOptOutHandler",
    }),
    stackResource("aws:iam/role:Role", "ses-opt-outs-role", {
      name: "ses-opt-outs-role-1",
      arn: ROLE_ARN,
      managedPolicyArns: opts.managed,
    }),
    stackResource("aws:iam/rolePolicy:RolePolicy", "ses-opt-outs-permissions", { role: "ses-opt-outs-role-1", policy }),
  ];
}
const ours = () => JSON.stringify(policyDocument(sesOptOutStatements(GRANTS)));
const withStatement = (s: object) => doc(...policyDocument(sesOptOutStatements(GRANTS)).Statement, s);

describe("ses-opt-out-recorder-role-minimal: the role of the function that records SES's opt-outs", () => {
  it("the stack's recorder role passes (with a CMK too)", async () => {
    await assertNoStackViolations(sesOptOutRecorderRoleMinimal, recorder(ours()));
    const kms = policyDocument(
      sesOptOutStatements({ ...GRANTS, kmsKeyArn: "arn:aws:kms:us-east-1:123456789012:key/1111-2222" }),
    );
    await assertNoStackViolations(sesOptOutRecorderRoleMinimal, recorder(JSON.stringify(kms)));
  });

  it("any other action is a violation: SES (sending or contacts), reading or deleting opt-outs", async () => {
    for (const [Action, Resource] of [
      ["ses:SendEmail", "arn:aws:ses:us-east-1:123456789012:identity/example.com"],
      ["ses:UpdateContact", "arn:aws:ses:us-east-1:123456789012:contact-list/sendtime-dev"],
      ["dynamodb:DeleteItem", TABLE],
      ["dynamodb:*", TABLE],
    ])
      await assertHasStackViolation(
        sesOptOutRecorderRoleMinimal,
        recorder(withStatement({ Effect: "Allow", Action, Resource })),
        {
          message: new RegExp(
            `\\(role of the SES opt-out recorder "sendtime-ses-opt-outs-dev"\\) allows ${Action.replace("*", "\\*")}: the recorder may only dynamodb:UpdateItem, sqs:SendMessage`,
          ),
          urn: "urn:pulumi:test::sendtime::aws:iam/rolePolicy:RolePolicy::ses-opt-outs-permissions",
        },
      );
  });

  it("a wildcard resource, a table index, NotAction and an attached managed policy are violations; found by its rule alone too", async () => {
    await assertHasStackViolation(
      sesOptOutRecorderRoleMinimal,
      recorder(
        withStatement({
          Effect: "Allow",
          Action: "dynamodb:UpdateItem",
          Resource: "arn:aws:dynamodb:us-east-1:123456789012:table/*",
        }),
      ),
      { message: 'has the wildcard resource "arn:aws:dynamodb:us-east-1:123456789012:table/*": name each resource' },
    );
    await assertHasStackViolation(
      sesOptOutRecorderRoleMinimal,
      recorder(withStatement({ Effect: "Allow", Action: "dynamodb:UpdateItem", Resource: `${TABLE}/index/by-time` })),
      { message: "name the opt-out table" },
    );
    await assertHasStackViolation(
      sesOptOutRecorderRoleMinimal,
      recorder(withStatement({ Effect: "Allow", NotAction: "iam:*", Resource: TABLE })),
      { message: "uses NotAction" },
    );
    await assertHasStackViolation(
      sesOptOutRecorderRoleMinimal,
      recorder(ours(), { managed: ["arn:aws:iam::aws:policy/AmazonSESFullAccess"] }),
      { message: /role of the SES opt-out recorder/ },
    );
    // Another handler name: the rule on aws.ses still makes it the recorder.
    await assertHasStackViolation(
      sesOptOutRecorderRoleMinimal,
      recorder(withStatement({ Effect: "Allow", Action: "ses:SendEmail", Resource: "*" }), { handler: "index.other" }),
      { message: /allows ses:SendEmail/ },
    );
  });
});
