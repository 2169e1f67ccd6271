/**
 * public-function-role-minimal: the role of a function behind a URL with authorization NONE holds an allow-list —
 * its key parameter's read, its contact calls on its contact list, its opt-out table's write, its key's use and its
 * logs — checked on the stack as rendered (the example config), widened one way at a time. Expected messages are
 * written by hand from the rendered names.
 */
import { PolicyResource } from "@pulumi/policy";
import { policyDocument, unsubscribeStatements } from "../../infra/iam";
import { publicFunctionRoleMinimal } from "../../policy/public-endpoints";
import { renderWith } from "../helpers/stack";
import { assertHasStackViolation, assertNoStackViolations, doc, named, packResources, stackResource } from "./util";

const ACCOUNT = "arn:aws:iam::123456789012";
const ROLE = "aws:iam/role:Role";
const WHO = '(role of the public function "sendtime-unsubscribe-dev")';
const urnOf = (type: string, name: string) => `urn:pulumi:test::sendtime::${type}::${name}`;

let stack: PolicyResource[];
const arnOf = (type: string, name: string) => named(stack, type, name).props.arn as string;
const role = () => named(stack, ROLE, "unsubscribe-role");

/** The stack with `extra` resources added and the unsubscribe role's props changed by `change`. */
function widened(extra: PolicyResource[], change: (props: Record<string, any>) => void = () => {}): PolicyResource[] {
  const copy = stack.map((r) =>
    r === role() ? stackResource(r.type, r.name, JSON.parse(JSON.stringify(r.props))) : r,
  );
  change(copy.find((r) => r.type === ROLE && r.name === "unsubscribe-role")!.props);
  return [...copy, ...extra];
}

/** Every way the pack knows to put a statement on the unsubscribe role, and the resource the violation names. */
const FORMS: { form: string; put: (s: object) => PolicyResource[]; urn: string }[] = [
  {
    form: "a RolePolicy",
    put: (s) =>
      widened([stackResource("aws:iam/rolePolicy:RolePolicy", "extra", { role: role().props.name, policy: doc(s) })]),
    urn: urnOf("aws:iam/rolePolicy:RolePolicy", "extra"),
  },
  {
    form: "an inline policy of the Role",
    put: (s) => widened([], (p) => (p.inlinePolicies = [{ name: "extra", policy: doc(s) }])),
    urn: urnOf(ROLE, "unsubscribe-role"),
  },
  {
    form: "a stack Policy attached by RolePolicyAttachment",
    put: (s) =>
      widened([
        extraPolicy(s),
        stackResource("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "extra-attach", {
          role: role().props.name,
          policyArn: `${ACCOUNT}:policy/extra`,
        }),
      ]),
    urn: urnOf("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "extra-attach"),
  },
  {
    form: "a stack Policy in the Role's managedPolicyArns",
    put: (s) => widened([extraPolicy(s)], (p) => (p.managedPolicyArns = [`${ACCOUNT}:policy/extra`])),
    urn: urnOf(ROLE, "unsubscribe-role"),
  },
  {
    form: "a stack Policy attached by RolePolicyAttachmentsExclusive",
    put: (s) =>
      widened([
        extraPolicy(s),
        stackResource("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "extra-exclusive", {
          roleName: role().props.name,
          policyArns: [`${ACCOUNT}:policy/extra`],
        }),
      ]),
    urn: urnOf("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "extra-exclusive"),
  },
  {
    form: "a stack Policy attached by PolicyAttachment (roles)",
    put: (s) =>
      widened([
        extraPolicy(s),
        stackResource("aws:iam/policyAttachment:PolicyAttachment", "extra-shared", {
          roles: [role().props.name],
          policyArn: `${ACCOUNT}:policy/extra`,
        }),
      ]),
    urn: urnOf("aws:iam/policyAttachment:PolicyAttachment", "extra-shared"),
  },
];
const extraPolicy = (s: object) =>
  stackResource("aws:iam/policy:Policy", "extra", { name: "extra", arn: `${ACCOUNT}:policy/extra`, policy: doc(s) });

describe("public-function-role-minimal: the role of a function behind a URL with authorization NONE", () => {
  before(async () => {
    stack = packResources(await renderWith());
  });

  it("the stack's unsubscribe role passes as rendered, and its statements built with a CMK pass too", async () => {
    await assertNoStackViolations(publicFunctionRoleMinimal, stack);
    const key = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555";
    const grants = {
      keyParameterArn: arnOf("aws:ssm/parameter:Parameter", "unsubscribe-key"),
      contactListArn: arnOf("aws:sesv2/contactList:ContactList", "sender-contacts"),
      logGroupArn: arnOf("aws:cloudwatch/logGroup:LogGroup", "unsubscribe-logs"),
      optOutTableArn: arnOf("aws:dynamodb/table:Table", "unsubscribe-opt-outs"),
      kmsKeyArn: key,
    };
    const withKey = stack.map((r) =>
      r.name === "unsubscribe-permissions"
        ? stackResource(r.type, r.name, {
            ...r.props,
            policy: JSON.stringify(policyDocument(unsubscribeStatements(grants))),
          })
        : r.name === "unsubscribe-key"
          ? stackResource(r.type, r.name, { ...r.props, keyId: key })
          : r,
    );
    await assertNoStackViolations(publicFunctionRoleMinimal, withKey);
    // The key is allowed because the stack's parameter uses it; one the stack does not use is not.
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      withKey
        .filter((r) => r.name !== "unsubscribe-key")
        .concat(named(stack, "aws:ssm/parameter:Parameter", "unsubscribe-key")),
      {
        message: `${WHO} allows kms:Decrypt on "${key}": the public function may only`,
      },
    );
  });

  // Issue 31: each of these passed the pack before it was an allow-list.
  const widenings: [string, () => string][] = [
    ["states:StartExecution", () => arnOf("aws:sfn/stateMachine:StateMachine", "bulk-sender")],
    ["sqs:SendMessage", () => arnOf("aws:sqs/queue:Queue", "scheduler-target-dlq")],
    ["iam:PutRolePolicy", () => role().props.arn],
    ["sts:AssumeRole", () => arnOf(ROLE, "scheduler-target-role")],
    ["ssm:PutParameter", () => arnOf("aws:ssm/parameter:Parameter", "unsubscribe-key")],
    ["lambda:InvokeFunction", () => arnOf("aws:lambda/function:Function", "journeys-function")],
  ];
  for (const { form, put, urn } of FORMS)
    it(`every grant outside the allow-list is a violation naming its action and resource, in ${form}`, async () => {
      for (const [Action, resource] of widenings)
        await assertHasStackViolation(
          publicFunctionRoleMinimal,
          put({ Sid: "Widened", Effect: "Allow", Action, Resource: resource() }),
          {
            message: `statement "Widened" ${WHO} allows ${Action} on "${resource()}": the public function may only ssm:GetParameter on its key parameter`,
            urn,
          },
        );
    });

  it("a trust that lets anyone assume the role ({AWS: *}, *) is a violation on the role", async () => {
    for (const Principal of [{ AWS: "*" }, "*", { AWS: [`${ACCOUNT}:root`, "*"] }, { Service: "ec2.amazonaws.com" }])
      await assertHasStackViolation(
        publicFunctionRoleMinimal,
        widened([], (p) => (p.assumeRolePolicy = doc({ Effect: "Allow", Principal, Action: "sts:AssumeRole" }))),
        {
          message: `Role "unsubscribe-role" trust statement 1 lets ${JSON.stringify(Principal)} assume the role of the public function "sendtime-unsubscribe-dev": trust only {"Service": "lambda.amazonaws.com"}`,
          urn: urnOf(ROLE, "unsubscribe-role"),
        },
      );
  });

  it("the allowed actions on another resource of the same kind are violations: another parameter, table, contact list or log group", async () => {
    const other: [string, string][] = [
      ["ssm:GetParameter", "arn:aws:ssm:us-east-1:123456789012:parameter/prod/database-password"],
      ["dynamodb:UpdateItem", "arn:aws:dynamodb:us-east-1:123456789012:table/send-gate-sends-1a2b3c4"],
      ["ses:UpdateContact", "arn:aws:ses:us-east-1:123456789012:contact-list/someone-elses"],
      ["logs:PutLogEvents", `${arnOf("aws:cloudwatch/logGroup:LogGroup", "journeys-logs")}:*`],
      ["ssm:GetParameter", "*"],
    ];
    for (const [Action, Resource] of other)
      await assertHasStackViolation(publicFunctionRoleMinimal, FORMS[0].put({ Effect: "Allow", Action, Resource }), {
        message: `statement 1 ${WHO} allows ${Action} on "${Resource}": the public function may only`,
      });
  });

  it("sending, contact-list administration and wildcard actions are violations: nothing beyond the named actions", async () => {
    const list = arnOf("aws:sesv2/contactList:ContactList", "sender-contacts");
    for (const Action of ["ses:SendEmail", "ses:SendBulkEmail", "ses:*", "ses:DeleteContactList", "ses:*Contact"])
      await assertHasStackViolation(
        publicFunctionRoleMinimal,
        FORMS[0].put({ Effect: "Allow", Action, Resource: list }),
        {
          message: `allows ${Action} on "${list}": the public function may only`,
        },
      );
  });

  it("NotAction, NotResource, no resource, and an attached AWS managed policy are violations", async () => {
    const list = arnOf("aws:sesv2/contactList:ContactList", "sender-contacts");
    const cases: [object, string][] = [
      [{ Effect: "Allow", NotAction: "iam:*", Resource: list }, "uses NotAction"],
      [{ Effect: "Allow", Action: "ses:GetContact", NotResource: list }, "uses NotResource"],
      [{ Effect: "Allow", Action: "ses:GetContact" }, "names no resource"],
    ];
    for (const [s, message] of cases)
      await assertHasStackViolation(publicFunctionRoleMinimal, FORMS[0].put(s), { message });
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      widened([], (p) => (p.managedPolicyArns = ["arn:aws:iam::aws:policy/AmazonSESFullAccess"])),
      {
        message:
          /attaches arn:aws:iam::aws:policy\/AmazonSESFullAccess \(AWS managed\), whose statement 1 .* allows ses:\* on "\*"/,
      },
    );
  });

  it("a managed policy the pack cannot read, attached to the role, is a violation: its grants are not on the list", async () => {
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      widened([
        stackResource("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "ops", {
          role: role().props.name,
          policyArn: `${ACCOUNT}:policy/ops-wide`,
        }),
      ]),
      {
        message: `RolePolicyAttachment "ops" attaches ${ACCOUNT}:policy/ops-wide ${WHO}, and the pack cannot read what it grants`,
        urn: urnOf("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "ops"),
      },
    );
  });

  it("a function whose URL needs IAM authorization is not a public endpoint: not checked here", async () => {
    const iamAuth = stack.map((r) =>
      r.type === "aws:lambda/functionUrl:FunctionUrl"
        ? stackResource(r.type, r.name, { ...r.props, authorizationType: "AWS_IAM" })
        : r.name === "unsubscribe-permissions"
          ? stackResource(r.type, r.name, {
              ...r.props,
              policy: doc({ Effect: "Allow", Action: "ses:SendEmail", Resource: "*" }),
            })
          : r,
    );
    await assertNoStackViolations(publicFunctionRoleMinimal, iamAuth);
  });
});
