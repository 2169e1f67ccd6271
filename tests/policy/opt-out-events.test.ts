/**
 * ses-opt-out-recorder-role-minimal: the recorder's role holds the same kind of allow-list as the public endpoint's
 * (policy/function-roles.ts), checked on the stack as rendered (the example config), widened one way at a time.
 */
import { PolicyResource } from "@pulumi/policy";
import { policyDocument, sesOptOutStatements } from "../../infra/iam";
import { sesOptOutRecorderRoleMinimal } from "../../policy/opt-out-events";
import { renderWith } from "../helpers/stack";
import { assertHasStackViolation, assertNoStackViolations, doc, named, packResources, stackResource } from "./util";

const WHO = '(role of the SES opt-out recorder "sendtime-ses-opt-outs-dev")';
const RP = "aws:iam/rolePolicy:RolePolicy";
const KEY = "arn:aws:kms:us-east-1:123456789012:key/1111-2222";

let stack: PolicyResource[];
const arnOf = (type: string, name: string) => named(stack, type, name).props.arn as string;
const table = () => arnOf("aws:dynamodb/table:Table", "unsubscribe-opt-outs");

/** The stack with `s` added to the recorder's role in a RolePolicy of its own, and the function's props changed. */
function widened(s: object | undefined, fn: (props: Record<string, any>) => void = () => {}): PolicyResource[] {
  const role = named(stack, "aws:iam/role:Role", "ses-opt-outs-role");
  const copy = stack.map((r) =>
    r.name === "ses-opt-outs-function" ? stackResource(r.type, r.name, JSON.parse(JSON.stringify(r.props))) : r,
  );
  fn(copy.find((r) => r.name === "ses-opt-outs-function")!.props);
  return s ? [...copy, stackResource(RP, "extra", { role: role.props.name, policy: doc(s) })] : copy;
}

describe("ses-opt-out-recorder-role-minimal: the role of the function that records SES's opt-outs", () => {
  before(async () => {
    stack = packResources(await renderWith());
  });

  it("the stack's recorder role passes as rendered, and its statements built with the table's CMK pass too", async () => {
    await assertNoStackViolations(sesOptOutRecorderRoleMinimal, stack);
    const grants = {
      optOutTableArn: table(),
      logGroupArn: arnOf("aws:cloudwatch/logGroup:LogGroup", "ses-opt-outs-logs"),
      deadLetterQueueArn: arnOf("aws:sqs/queue:Queue", "ses-opt-outs-dlq"),
      kmsKeyArn: KEY,
    };
    const policy = JSON.stringify(policyDocument(sesOptOutStatements(grants)));
    const withKey = (keyed: boolean) =>
      stack.map((r) =>
        r.name === "ses-opt-outs-permissions"
          ? stackResource(r.type, r.name, { ...r.props, policy })
          : r.name === "unsubscribe-opt-outs" && keyed
            ? stackResource(r.type, r.name, { ...r.props, serverSideEncryption: { enabled: true, kmsKeyArn: KEY } })
            : r,
      );
    await assertNoStackViolations(sesOptOutRecorderRoleMinimal, withKey(true));
    await assertHasStackViolation(sesOptOutRecorderRoleMinimal, withKey(false), {
      message: `${WHO} allows kms:GenerateDataKey on "${KEY}": the SES opt-out recorder may only`,
    });
  });

  it("any other action is a violation naming it and its resource: SES (sending or contacts), reading or deleting opt-outs", async () => {
    for (const [Action, Resource] of [
      ["ses:SendEmail", "arn:aws:ses:us-east-1:123456789012:identity/example.com"],
      ["ses:UpdateContact", arnOf("aws:sesv2/contactList:ContactList", "sender-contacts")],
      ["dynamodb:DeleteItem", table()],
      ["dynamodb:*", table()],
      ["sqs:SendMessage", arnOf("aws:sqs/queue:Queue", "scheduler-target-dlq")],
    ])
      await assertHasStackViolation(sesOptOutRecorderRoleMinimal, widened({ Effect: "Allow", Action, Resource }), {
        message: `RolePolicy "extra" statement 1 ${WHO} allows ${Action} on "${Resource}": the SES opt-out recorder may only dynamodb:UpdateItem on its opt-out table (${table()}); sqs:SendMessage on its on-failure destination`,
        urn: `urn:pulumi:test::sendtime::${RP}::extra`,
      });
  });

  it("a wildcard resource, a table index, NotAction and an attached managed policy are violations; found by its rule alone too", async () => {
    for (const Resource of ["arn:aws:dynamodb:us-east-1:123456789012:table/*", `${table()}/index/by-time`])
      await assertHasStackViolation(
        sesOptOutRecorderRoleMinimal,
        widened({ Effect: "Allow", Action: "dynamodb:UpdateItem", Resource }),
        { message: `${WHO} allows dynamodb:UpdateItem on "${Resource}"` },
      );
    await assertHasStackViolation(
      sesOptOutRecorderRoleMinimal,
      widened({ Effect: "Allow", NotAction: "iam:*", Resource: table() }),
      { message: "uses NotAction" },
    );
    const managed = stack.map((r) =>
      r.name === "ses-opt-outs-role"
        ? stackResource(r.type, r.name, {
            ...r.props,
            managedPolicyArns: ["arn:aws:iam::aws:policy/AmazonSESFullAccess"],
          })
        : r,
    );
    await assertHasStackViolation(sesOptOutRecorderRoleMinimal, managed, {
      message: /AmazonSESFullAccess \(AWS managed\), whose statement 1 \(role of the SES opt-out recorder/,
    });
    // Another handler name: the rule on aws.ses still makes it the recorder.
    await assertHasStackViolation(
      sesOptOutRecorderRoleMinimal,
      widened({ Effect: "Allow", Action: "ses:SendEmail", Resource: "*" }, (p) => (p.handler = "index.other")),
      { message: /allows ses:SendEmail on "\*"/ },
    );
  });

  it("a trust that lets anyone assume the recorder's role is a violation", async () => {
    const open = stack.map((r) =>
      r.name === "ses-opt-outs-role"
        ? stackResource(r.type, r.name, {
            ...r.props,
            assumeRolePolicy: doc({ Effect: "Allow", Principal: { AWS: "*" }, Action: "sts:AssumeRole" }),
          })
        : r,
    );
    await assertHasStackViolation(sesOptOutRecorderRoleMinimal, open, {
      message: `Role "ses-opt-outs-role" trust statement 1 lets {"AWS":"*"} assume the role of the SES opt-out recorder "sendtime-ses-opt-outs-dev": trust only {"Service": "lambda.amazonaws.com"}`,
    });
  });
});
