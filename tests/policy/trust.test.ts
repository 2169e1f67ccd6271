/**
 * role-trust-not-public (issue 31): no role of the stack may be assumable by anyone — a trust statement whose
 * principal is everyone ("*", {"AWS": "*"}, a list with "*" in it, NotPrincipal) needs a condition that names who
 * (aws:PrincipalArn, aws:SourceArn or aws:SourceAccount, without wildcards); a whole account or organisation
 * (aws:PrincipalAccount, aws:PrincipalOrgID) is not who.
 */
import { roleTrustNotPublic } from "../../policy/iam";
import { renderShipped, renderWith } from "../helpers/stack";
import { assertHasResourceViolation, assertNoResourceViolations, doc, resourceArgs } from "./util";

const ROLE = "aws:iam/role:Role";
const trusting = (s: object, name = "fanout-role") =>
  resourceArgs(ROLE, { name: `${name}-1a2b3c4`, assumeRolePolicy: doc(s) }, {}, name);
const assume = (Principal: unknown, extra: object = {}) => ({
  Effect: "Allow",
  Principal,
  Action: "sts:AssumeRole",
  ...extra,
});

describe("policy: role-trust-not-public", () => {
  it("every role of the rendered stacks (example config, prod) passes", async () => {
    for (const stack of [await renderWith(), await renderShipped("prod")])
      for (const r of stack.resources.filter((x) => x.type === ROLE))
        await assertNoResourceViolations(roleTrustNotPublic, resourceArgs(ROLE, r.outputs, {}, r.name));
  });

  it("everyone as the principal, without a condition, is a violation on every role", async () => {
    for (const name of ["fanout-role", "bulk-sender-role", "unsubscribe-role", "scheduler-target-role"])
      for (const Principal of ["*", { AWS: "*" }, { AWS: ["arn:aws:iam::123456789012:root", "*"] }, { Federated: "*" }])
        await assertHasResourceViolation(roleTrustNotPublic, trusting(assume(Principal), name), {
          message: `Role "${name}" trust statement 1 lets ${JSON.stringify(Principal)} (anyone) assume it without a condition that names who: name the principal (a service with aws:SourceAccount, or a role ARN)`,
        });
  });

  it("a condition that does not name the caller does not count: TLS, a wildcard, a negated operator, IfExists, an account", async () => {
    const conditions = [
      { StringEquals: { "aws:PrincipalAccount": "123456789012" } },
      { StringEquals: { "aws:PrincipalOrgID": "o-a1b2c3d4e5" } },
      { Bool: { "aws:SecureTransport": "true" } },
      { StringLike: { "aws:PrincipalArn": "arn:aws:iam::*:role/*" } },
      { StringNotEquals: { "aws:PrincipalAccount": "999999999999" } },
      { StringEqualsIfExists: { "aws:PrincipalAccount": "123456789012" } },
      { StringEquals: { "sts:ExternalId": "shared-secret" } },
    ];
    for (const Condition of conditions)
      await assertHasResourceViolation(roleTrustNotPublic, trusting(assume({ AWS: "*" }, { Condition })), {
        message: 'lets {"AWS":"*"} (anyone) assume it without a condition that names who',
      });
  });

  it("NotPrincipal in an Allow lets everyone else assume the role: a violation", async () => {
    await assertHasResourceViolation(
      roleTrustNotPublic,
      trusting({ Effect: "Allow", NotPrincipal: { AWS: "arn:aws:iam::123456789012:root" }, Action: "sts:AssumeRole" }),
      {
        message:
          'Role "fanout-role" trust statement 1 uses NotPrincipal, which lets everyone it does not list assume it',
      },
    );
  });

  it("everyone with a condition that names the caller, a named principal, or a Deny is not a violation here", async () => {
    for (const s of [
      assume({ AWS: "*" }, { Condition: { ArnEquals: { "aws:PrincipalArn": "arn:aws:iam::123456789012:role/ops" } } }),
      assume("*", { Condition: { StringEquals: { "aws:SourceAccount": "123456789012" } } }),
      assume(
        { Service: "lambda.amazonaws.com" },
        { Condition: { StringEquals: { "aws:SourceAccount": "123456789012" } } },
      ),
      assume({ AWS: "arn:aws:iam::123456789012:role/ops" }),
      { Effect: "Deny", Principal: "*", Action: "sts:AssumeRole" },
    ])
      await assertNoResourceViolations(roleTrustNotPublic, trusting(s));
  });
});
