/**
 * Managed and exclusive attachments (issue 23): what an attached managed policy grants is checked as if it were
 * written inline, and a managed policy the pack cannot read is refused.
 */
import { attachedPoliciesReadable } from "../../policy/attachments";
import { passRoleOnlyToScheduler, schedulerActionsScopedToCampaigns, sesSendScoped } from "../../policy/iam";
import { sendGateTableScoped } from "../../policy/gate";
import {
  assertHasResourceViolation,
  assertHasStackViolation,
  assertNoResourceViolations,
  assertNoStackViolations,
  doc,
  resourceArgs,
  stackResource,
} from "./util";

const managed = (name: string, partition = "aws") => `arn:${partition}:iam::aws:policy/${name}`;
const EVENTBRIDGE_FULL = managed("AmazonEventBridgeFullAccess");

/** Each way of attaching a managed policy to a role, with the ARN given. */
const attachments: [string, (arn: string) => ReturnType<typeof resourceArgs>][] = [
  ["Role managedPolicyArns", (arn) => resourceArgs("aws:iam/role:Role", { managedPolicyArns: [arn] }, {}, "r")],
  [
    "RolePolicyAttachment",
    (arn) => resourceArgs("aws:iam/rolePolicyAttachment:RolePolicyAttachment", { role: "r", policyArn: arn }, {}, "a"),
  ],
  [
    "RolePolicyAttachmentsExclusive (policyArns, plural)",
    (arn) =>
      resourceArgs(
        "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
        { roleName: "r", policyArns: [managed("service-role/AWSLambdaBasicExecutionRole"), arn] },
        {},
        "a",
      ),
  ],
  [
    "PolicyAttachment (with roles)",
    (arn) => resourceArgs("aws:iam/policyAttachment:PolicyAttachment", { roles: ["r"], policyArn: arn }, {}, "a"),
  ],
];

describe("policy: attached AWS managed policies are checked as written (issue 23)", () => {
  for (const [how, attach] of attachments) {
    it(`${how}: AmazonEventBridgeFullAccess grants scheduler:* on "*"`, () =>
      assertHasResourceViolation(schedulerActionsScopedToCampaigns, attach(EVENTBRIDGE_FULL), {
        message: new RegExp(
          `attaches ${EVENTBRIDGE_FULL} \\(AWS managed\\), whose statement "EventBridgeActions" allows 12 Scheduler actions on "\\*", outside campaign schedules: list only .*; an AWS managed policy cannot be narrowed: detach it and grant what the role needs in a policy of your own`,
        ),
      }));
    it(`${how}: AmazonSESFullAccess grants ses:* on "*"`, () =>
      assertHasResourceViolation(sesSendScoped, attach(managed("AmazonSESFullAccess")), {
        message:
          /attaches arn:aws:iam::aws:policy\/AmazonSESFullAccess \(AWS managed\), whose statement 1 allows ses:SendEmail, ses:SendTemplatedEmail on "\*"/,
      }));
  }
  it("AdministratorAccess: Scheduler, SES, PassRole and DynamoDB on everything", async () => {
    const args = attachments[1][1](managed("AdministratorAccess"));
    await assertHasResourceViolation(schedulerActionsScopedToCampaigns, args, {
      message: 'allows 12 Scheduler actions on "*"',
    });
    await assertHasResourceViolation(sesSendScoped, args, {
      message: 'allows ses:SendEmail, ses:SendTemplatedEmail on "*"',
    });
    await assertHasResourceViolation(passRoleOnlyToScheduler, args, { message: 'allows iam:PassRole on "*"' });
    await assertHasResourceViolation(sendGateTableScoped, args, { message: "AdministratorAccess (AWS managed)" });
  });
  it("PowerUserAccess: its NotAction allows Scheduler and SES", async () => {
    const args = attachments[0][1](managed("PowerUserAccess"));
    await assertHasResourceViolation(schedulerActionsScopedToCampaigns, args, {
      message: "uses NotAction and so allows 12 Scheduler actions",
    });
    await assertHasResourceViolation(sesSendScoped, args, { message: "uses NotAction and so allows ses:SendEmail" });
  });
  it("AmazonEventBridgeSchedulerFullAccess: PassRole of any role", () =>
    assertHasResourceViolation(
      passRoleOnlyToScheduler,
      attachments[2][1](managed("AmazonEventBridgeSchedulerFullAccess")),
      {
        message: 'allows iam:PassRole on "arn:aws:iam::*:role/*"',
      },
    ));
  it("in other partitions too (aws-us-gov, aws-cn)", async () => {
    for (const partition of ["aws-us-gov", "aws-cn"])
      await assertHasResourceViolation(
        schedulerActionsScopedToCampaigns,
        attachments[1][1](managed("AmazonEventBridgeFullAccess", partition)),
        {
          message: "(AWS managed)",
        },
      );
  });
  it("passes a known AWS managed policy that grants none of these (AWSLambdaBasicExecutionRole)", async () => {
    const args = attachments[1][1](managed("service-role/AWSLambdaBasicExecutionRole"));
    for (const p of [schedulerActionsScopedToCampaigns, sesSendScoped, passRoleOnlyToScheduler, sendGateTableScoped])
      await assertNoResourceViolations(p, args);
  });
});

describe("policy: attached-policies-readable (issue 23)", () => {
  const p = attachedPoliciesReadable;
  const customer = stackResource("aws:iam/policy:Policy", "ops", {
    arn: "arn:aws:iam::123456789012:policy/ops-1a2b3c",
    name: "ops-1a2b3c",
    policy: doc({ Effect: "Allow", Action: "logs:PutLogEvents", Resource: "*" }),
  });
  const attach = (policyArn: unknown) =>
    stackResource("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "extra", {
      role: "fanout-role-cc741ce",
      policyArn,
    });
  it("fails an AWS managed policy the pack does not know, naming it and the fix", () =>
    assertHasStackViolation(p, [attach(managed("AmazonS3FullAccess"))], {
      message:
        'RolePolicyAttachment "extra" attaches arn:aws:iam::aws:policy/AmazonS3FullAccess to "fanout-role-cc741ce", and the policy pack cannot read what it grants: grant what the role needs inline (aws.iam.RolePolicy) or in an aws.iam.Policy of this stack',
      urn: "urn:pulumi:test::sendtime::aws:iam/rolePolicyAttachment:RolePolicyAttachment::extra",
    }));
  it("fails a customer managed policy from outside the stack", () =>
    assertHasStackViolation(p, [customer, attach("arn:aws:iam::123456789012:policy/elsewhere")], {
      message: "attaches arn:aws:iam::123456789012:policy/elsewhere to",
    }));
  it("passes a customer managed policy of this stack (its document is checked where it is written)", () =>
    assertNoStackViolations(p, [customer, attach(customer.props.arn)]));
  it("passes AWS managed policies it knows (their statements are checked by the IAM policies)", () =>
    assertNoStackViolations(p, [
      attach(EVENTBRIDGE_FULL),
      attach(managed("service-role/AWSLambdaBasicExecutionRole")),
    ]));
  it("checks every way of attaching one", async () => {
    const unknown = managed("AmazonS3FullAccess");
    for (const r of [
      stackResource("aws:iam/role:Role", "r", { name: "r", managedPolicyArns: [unknown] }),
      stackResource("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "x", {
        roleName: "r",
        policyArns: [unknown],
      }),
      stackResource("aws:iam/policyAttachment:PolicyAttachment", "x", { roles: ["r"], policyArn: unknown }),
    ])
      await assertHasStackViolation(p, [r], { message: `attaches ${unknown} to "r"` });
  });
  it("skips an ARN not known yet (preview of a new stack)", () => assertNoStackViolations(p, [attach(undefined)]));
});
