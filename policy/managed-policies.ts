/**
 * AWS managed policies the pack can read. An attachment carries only the policy's ARN, never its document, so the
 * documents of the AWS managed policies known to grant what the guards check (Scheduler, SES sending, iam:PassRole,
 * DynamoDB), and of a few known not to, are kept here, as published in the AWS Managed Policy Reference
 * (https://docs.aws.amazon.com/aws-managed-policy/latest/reference/<name>.html). An AWS managed policy missing from
 * this list cannot be read, and attached-policies-readable refuses it.
 */

/** `arn:<partition>:iam::aws:policy/<path/name>`: the path and name, or undefined for any other ARN. */
export function awsManagedPolicyName(arn: string): string | undefined {
  return /^arn:aws[a-z-]*:iam::aws:policy\/(.+)$/.exec(arn)?.[1];
}

const allowAll = (Action: string | string[], extra: object = {}) => ({
  Effect: "Allow",
  Action,
  Resource: "*",
  ...extra,
});

/** Name (with path) → policy document. `excerpt` marks a document cut to the statements that grant what is checked. */
export const AWS_MANAGED_POLICIES: Record<string, { Statement: object[]; excerpt?: true }> = {
  AdministratorAccess: { Statement: [allowAll("*")] },
  PowerUserAccess: {
    Statement: [
      { Effect: "Allow", NotAction: ["iam:*", "organizations:*", "account:*"], Resource: "*" },
      allowAll([
        "account:GetAccountInformation",
        "account:GetGovCloudAccountInformation",
        "account:GetPrimaryEmail",
        "account:ListRegions",
        "iam:CreateServiceLinkedRole",
        "iam:DeleteServiceLinkedRole",
        "iam:ListRoles",
        "organizations:DescribeEffectivePolicy",
        "organizations:DescribeOrganization",
      ]),
    ],
  },
  // Its other statements (service-linked roles, secrets for API destinations, PassRole to EventBridge) are left out.
  AmazonEventBridgeFullAccess: {
    Statement: [allowAll(["events:*", "schemas:*", "scheduler:*", "pipes:*"], { Sid: "EventBridgeActions" })],
    excerpt: true,
  },
  AmazonEventBridgeSchedulerFullAccess: {
    Statement: [
      allowAll("scheduler:*"),
      {
        Effect: "Allow",
        Action: "iam:PassRole",
        Resource: "arn:aws:iam::*:role/*",
        Condition: { StringLike: { "iam:PassedToService": "scheduler.amazonaws.com" } },
      },
    ],
  },
  AmazonSESFullAccess: { Statement: [allowAll(["ses:*"])] },
  AmazonSESReadOnlyAccess: {
    Statement: [allowAll(["ses:Get*", "ses:List*", "ses:BatchGetMetricData"], { Sid: "SESReadOnlyAccess" })],
  },
  "service-role/AWSLambdaBasicExecutionRole": {
    Statement: [allowAll(["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"])],
  },
};

/** The published document of a known AWS managed policy, by ARN; undefined for any other ARN. */
export function awsManagedDocument(arn: unknown): { Statement: object[] } | undefined {
  const name = typeof arn === "string" ? awsManagedPolicyName(arn) : undefined;
  return name !== undefined && Object.prototype.hasOwnProperty.call(AWS_MANAGED_POLICIES, name)
    ? AWS_MANAGED_POLICIES[name]
    : undefined;
}
