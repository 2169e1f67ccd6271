import { policyDocument, unsubscribeStatements } from "../../infra/iam";
import { publicFunctionRoleMinimal } from "../../policy/public-endpoints";
import { only, renderWith } from "../helpers/stack";
import { assertHasStackViolation, assertNoStackViolations, doc, stackResource } from "./util";

const ROLE_ARN = "arn:aws:iam::123456789012:role/unsubscribe-role-1";
const LIST = "arn:aws:ses:us-east-1:123456789012:contact-list/sendtime-dev";
const GRANTS = {
  keyParameterArn: "arn:aws:ssm:us-east-1:123456789012:parameter/sendtime/dev/unsubscribe-key",
  contactListArn: LIST,
  logGroupArn: "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/sendtime-unsubscribe-dev",
  optOutTableArn: "arn:aws:dynamodb:us-east-1:123456789012:table/unsubscribe-opt-outs-1a2b3c4",
};

/** A public function (URL with authorization NONE), its role, and the role's inline policy. */
function endpoint(policy: string, opts: { auth?: string; managed?: string[] } = {}) {
  return [
    stackResource("aws:lambda/functionUrl:FunctionUrl", "unsubscribe-url", {
      functionName: "sendtime-unsubscribe-dev",
      authorizationType: opts.auth ?? "NONE",
    }),
    stackResource("aws:lambda/function:Function", "unsubscribe-function", {
      name: "sendtime-unsubscribe-dev",
      role: ROLE_ARN,
    }),
    stackResource("aws:iam/role:Role", "unsubscribe-role", {
      name: "unsubscribe-role-1",
      arn: ROLE_ARN,
      managedPolicyArns: opts.managed,
    }),
    stackResource("aws:iam/rolePolicy:RolePolicy", "unsubscribe-permissions", { role: "unsubscribe-role-1", policy }),
  ];
}
const ours = () => JSON.stringify(policyDocument(unsubscribeStatements(GRANTS)));
const withStatement = (s: object) => doc(...policyDocument(unsubscribeStatements(GRANTS)).Statement, s);

describe("public-function-role-minimal: the role of a function behind a URL with authorization NONE", () => {
  it("the stack's unsubscribe role passes, as rendered and as built (with a CMK too)", async () => {
    await assertNoStackViolations(publicFunctionRoleMinimal, endpoint(ours()));
    const kms = JSON.stringify(
      policyDocument(
        unsubscribeStatements({
          ...GRANTS,
          kmsKeyArn: "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555",
        }),
      ),
    );
    await assertNoStackViolations(publicFunctionRoleMinimal, endpoint(kms));
    const stack = await renderWith();
    const url = only(stack, "aws:lambda/functionUrl:FunctionUrl");
    const fn = only(stack, "aws:lambda/function:Function", "unsubscribe-function");
    const role = only(stack, "aws:iam/role:Role", "unsubscribe-role");
    const rp = only(stack, "aws:iam/rolePolicy:RolePolicy", "unsubscribe-permissions");
    await assertNoStackViolations(publicFunctionRoleMinimal, [
      stackResource(url.type, url.name, url.inputs),
      stackResource(fn.type, fn.name, { ...fn.inputs, ...fn.outputs }),
      stackResource(role.type, role.name, { ...role.inputs, ...role.outputs }),
      stackResource(rp.type, rp.name, rp.inputs),
    ]);
  });

  it("may not send email: ses:SendEmail, ses:SendBulkEmail or ses:* is a violation", async () => {
    for (const Action of ["ses:SendEmail", "ses:SendBulkEmail", "ses:*"])
      await assertHasStackViolation(
        publicFunctionRoleMinimal,
        endpoint(withStatement({ Effect: "Allow", Action, Resource: LIST })),
        {
          message:
            /\(role of the public function "sendtime-unsubscribe-dev"\) allows .*ses:Send.*: a public endpoint must not send email/,
          urn: "urn:pulumi:test::sendtime::aws:iam/rolePolicy:RolePolicy::unsubscribe-permissions",
        },
      );
  });

  it("SES actions are the three contact calls on a named contact list", async () => {
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(withStatement({ Effect: "Allow", Action: "ses:DeleteContactList", Resource: LIST })),
      {
        message:
          "allows ses:DeleteContactList: SES actions are limited to ses:GetContact, ses:CreateContact, ses:UpdateContact",
      },
    );
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(
        withStatement({
          Effect: "Allow",
          Action: "ses:GetContact",
          Resource: "arn:aws:ses:us-east-1:123456789012:contact-list/*",
        }),
      ),
      { message: 'on "arn:aws:ses:us-east-1:123456789012:contact-list/*": name the contact list' },
    );
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(
        withStatement({
          Effect: "Allow",
          Action: "ses:UpdateContact",
          Resource: "arn:aws:ses:us-east-1:123456789012:identity/example.com",
        }),
      ),
      { message: "name the contact list" },
    );
  });

  it("no wildcard resource (but a log group's streams), no NotAction, no NotResource, no PassRole, no managed SES policy", async () => {
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(withStatement({ Effect: "Allow", Action: "ssm:GetParameter", Resource: "*" })),
      {
        message: 'has the wildcard resource "*": name each resource',
      },
    );
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(withStatement({ Effect: "Allow", NotAction: "iam:*", Resource: LIST })),
      {
        message: "uses NotAction",
      },
    );
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(withStatement({ Effect: "Allow", Action: "ssm:GetParameter", NotResource: LIST })),
      {
        message: "uses NotResource",
      },
    );
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(
        withStatement({ Effect: "Allow", Action: "iam:PassRole", Resource: "arn:aws:iam::123456789012:role/x" }),
      ),
      { message: "must not pass roles" },
    );
    await assertHasStackViolation(
      publicFunctionRoleMinimal,
      endpoint(ours(), { managed: ["arn:aws:iam::aws:policy/AmazonSESFullAccess"] }),
      {
        message: /attaches arn:aws:iam::aws:policy\/AmazonSESFullAccess .* must not send email/,
      },
    );
  });

  it("a function whose URL needs IAM authorization is not a public endpoint: not checked here", async () => {
    await assertNoStackViolations(
      publicFunctionRoleMinimal,
      endpoint(withStatement({ Effect: "Allow", Action: "ses:SendEmail", Resource: "*" }), { auth: "AWS_IAM" }),
    );
  });
});
