import { senderStatements, journeyStatements, unsubscribeStatements } from "../../infra/iam";
import type { PolicyResource } from "@pulumi/policy";
import { ledgerWritesKeyed, sendGateTableProtected, sendGateTableScoped } from "../../policy/gate";
import { renderWith } from "../helpers/stack";
import {
  assertHasResourceViolation,
  assertHasStackViolation,
  assertNoResourceViolations,
  assertNoStackViolations,
  doc,
  named,
  packResources,
  resourceArgs,
  stackResource,
} from "./util";

const TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/send-gate-sends-1a2b3c4";
const rolePolicy = (...statements: object[]) =>
  resourceArgs("aws:iam/rolePolicy:RolePolicy", { policy: doc(...statements) });

describe("send-gate-table-scoped", () => {
  it("passes the sender's own statements: its ledger grants keyed to occurrences and campaign states, the cap's table", async () => {
    const statements = senderStatements({
      scope: { partition: "aws", region: "us-east-1", accountId: "123456789012" },
      identityArn: "arn:aws:ses:us-east-1:123456789012:identity/mail.example.com",
      configurationSetArn: "arn:aws:ses:us-east-1:123456789012:configuration-set/sendtime-dev",
      deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
      ledgerTableArn: "arn:aws:dynamodb:us-east-1:123456789012:table/bulk-sender-ledger-1a2b3c4",
      gate: { tableArn: TABLE, metricNamespace: "sendtime" },
    });
    await assertNoResourceViolations(sendGateTableScoped, rolePolicy(...statements));
  });

  it("refuses any other DynamoDB action, also through a wildcard", async () => {
    await assertHasResourceViolation(
      sendGateTableScoped,
      rolePolicy({ Effect: "Allow", Action: ["dynamodb:UpdateItem", "dynamodb:DeleteItem"], Resource: TABLE }),
      {
        message:
          'statement 1 allows dynamodb:DeleteItem: allow only "dynamodb:UpdateItem", "dynamodb:GetItem" and "dynamodb:BatchGetItem"',
      },
    );
    await assertHasResourceViolation(
      sendGateTableScoped,
      rolePolicy({ Effect: "Allow", Action: "dynamodb:*", Resource: TABLE }),
      {
        message: /allows dynamodb:PutItem, .*dynamodb:Scan/,
      },
    );
  });

  it("passes the sender's opt-out look-up and the endpoint's opt-out record (BatchGetItem/GetItem, UpdateItem, on one table)", async () => {
    const optOuts = "arn:aws:dynamodb:us-east-1:123456789012:table/unsubscribe-opt-outs-1a2b3c4";
    const scope = { partition: "aws", region: "us-east-1", accountId: "123456789012" };
    const sender = senderStatements({
      scope,
      identityArn: "arn:aws:ses:us-east-1:123456789012:identity/mail.example.com",
      configurationSetArn: "arn:aws:ses:us-east-1:123456789012:configuration-set/sendtime-dev",
      deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
      ledgerTableArn: "arn:aws:dynamodb:us-east-1:123456789012:table/bulk-sender-ledger-1a2b3c4",
      optOuts: { tableArn: optOuts, metricNamespace: "sendtime" },
    });
    await assertNoResourceViolations(sendGateTableScoped, rolePolicy(...sender));
    const endpoint = unsubscribeStatements({
      keyParameterArn: "arn:aws:ssm:us-east-1:123456789012:parameter/sendtime/dev/unsubscribe-key",
      contactListArn: "arn:aws:ses:us-east-1:123456789012:contact-list/sendtime-dev",
      logGroupArn: "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/sendtime-unsubscribe-dev",
      optOutTableArn: optOuts,
    });
    await assertNoResourceViolations(sendGateTableScoped, rolePolicy(...endpoint));
    // Still refused: a put, a query or scan (which would list every opted-out address), BatchGetItem on every table.
    for (const Action of ["dynamodb:PutItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:BatchWriteItem"])
      await assertHasResourceViolation(
        sendGateTableScoped,
        rolePolicy({ Effect: "Allow", Action, Resource: optOuts }),
        {
          message: `allows ${Action}`,
        },
      );
    await assertHasResourceViolation(
      sendGateTableScoped,
      rolePolicy({
        Effect: "Allow",
        Action: "dynamodb:BatchGetItem",
        Resource: "arn:aws:dynamodb:us-east-1:123456789012:table/*",
      }),
      { message: 'allows dynamodb:BatchGetItem on "arn:aws:dynamodb:us-east-1:123456789012:table/*"' },
    );
  });

  it("passes the journeys' enrolment claims: PutItem and DeleteItem of the ledger's enr# items, by key", async () => {
    const ledger = "arn:aws:dynamodb:us-east-1:123456789012:table/ledger-1a2b3c4";
    const journeys = journeyStatements({
      scope: { partition: "aws", region: "us-east-1", accountId: "123456789012" },
      journeyNames: ["onboarding", "winback.v2"],
      targetRoleArn: "arn:aws:iam::123456789012:role/scheduler-target-role-1a2b3c4",
      logGroupArn: "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/sendtime-journeys-dev",
      deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:journeys-dlq",
      ledgerTableArn: ledger,
    });
    await assertNoResourceViolations(sendGateTableScoped, rolePolicy(...journeys));
    // Refused: a put or delete not held to ledger keys (an opt-out's key is an address), or held by ForAnyValue.
    const optOuts = "arn:aws:dynamodb:us-east-1:123456789012:table/unsubscribe-opt-outs-1a2b3c4";
    const conditions: (object | undefined)[] = [
      undefined,
      { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["*"] } },
      { "ForAllValues:StringEquals": { "dynamodb:LeadingKeys": ["ann@example.com"] } },
      { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["enr#onboarding#*", "*@example.com"] } },
      { "ForAnyValue:StringLike": { "dynamodb:LeadingKeys": ["enr#onboarding#*"] } },
      { StringLike: { "dynamodb:LeadingKeys": "enr#onboarding#*" } },
      { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [] } },
    ];
    for (const Condition of conditions)
      for (const Action of ["dynamodb:PutItem", "dynamodb:DeleteItem"])
        await assertHasResourceViolation(
          sendGateTableScoped,
          rolePolicy({ Effect: "Allow", Action, Resource: optOuts, ...(Condition ? { Condition } : {}) }),
          { message: `statement 1 allows ${Action}: allow only` },
        );
    // Held to ledger keys, a put still may not come with a scan or a batch write.
    await assertHasResourceViolation(
      sendGateTableScoped,
      rolePolicy({
        Effect: "Allow",
        Action: ["dynamodb:PutItem", "dynamodb:Scan", "dynamodb:BatchWriteItem"],
        Resource: ledger,
        Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["enr#onboarding#*"] } },
      }),
      { message: "statement 1 allows dynamodb:BatchWriteItem, dynamodb:Scan: allow only" },
    );
  });

  it("refuses a table wildcard, an index, or everything", async () => {
    for (const resource of ["arn:aws:dynamodb:us-east-1:123456789012:table/*", `${TABLE}/index/by-email`, "*"])
      await assertHasResourceViolation(
        sendGateTableScoped,
        rolePolicy({ Effect: "Allow", Action: "dynamodb:UpdateItem", Resource: resource }),
        {
          message: `allows dynamodb:UpdateItem on "${resource}"`,
        },
      );
  });

  it("refuses NotAction, which would grant DynamoDB by omission", async () => {
    await assertHasResourceViolation(
      sendGateTableScoped,
      rolePolicy({ Effect: "Allow", NotAction: "s3:*", Resource: TABLE }),
      {
        message: "uses NotAction or NotResource with DynamoDB",
      },
    );
  });
});

describe("send-gate-table-protected", () => {
  const table = (props: object) =>
    resourceArgs("aws:dynamodb/table:Table", { billingMode: "PAY_PER_REQUEST", ...props }, {}, "send-gate-sends");
  it("passes an encrypted table with point-in-time recovery", () =>
    assertNoResourceViolations(
      sendGateTableProtected,
      table({ serverSideEncryption: { enabled: true }, pointInTimeRecovery: { enabled: true } }),
    ));
  it("refuses a table without KMS encryption", () =>
    assertHasResourceViolation(sendGateTableProtected, table({ pointInTimeRecovery: { enabled: true } }), {
      message: 'Table "send-gate-sends" is not encrypted with KMS: set serverSideEncryption {enabled: true}',
    }));
  it("refuses a table without point-in-time recovery", () =>
    assertHasResourceViolation(
      sendGateTableProtected,
      table({ serverSideEncryption: { enabled: true }, pointInTimeRecovery: { enabled: false } }),
      {
        message: 'Table "send-gate-sends" has no point-in-time recovery',
      },
    ));
});

describe("ledger-writes-keyed", () => {
  let stack: PolicyResource[];
  let ledgerArn: string;
  before(async () => {
    stack = packResources(await renderWith());
    ledgerArn = named(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger").props.arn;
  });

  it("the rendered stack passes: the sender's and the journeys' ledger grants are keyed", async () => {
    await assertNoStackViolations(ledgerWritesKeyed, stack);
  });

  it("any role that may write the ledger unkeyed is a violation: an outcome could be rewritten (review)", async () => {
    const widened = stackResource("aws:iam/rolePolicy:RolePolicy", "journeys-extra", {
      role: "journeys-role",
      policy: doc({ Effect: "Allow", Action: "dynamodb:UpdateItem", Resource: ledgerArn }),
    });
    await assertHasStackViolation(ledgerWritesKeyed, [...stack, widened], {
      message:
        'RolePolicy "journeys-extra" statement 1 allows dynamodb:UpdateItem on the occurrence ledger without keying it to items',
    });
    const everyTable = stackResource("aws:iam/rolePolicy:RolePolicy", "any-table", {
      role: "x",
      policy: doc({
        Effect: "Allow",
        Action: "dynamodb:*",
        Resource: "arn:aws:dynamodb:us-east-1:123456789012:table/*",
      }),
    });
    await assertHasStackViolation(ledgerWritesKeyed, [...stack, everyTable], {
      message: /allows dynamodb:PutItem, dynamodb:UpdateItem/,
    });
  });

  it("the sender's own grant without its key condition is a violation too", async () => {
    const sender = named(stack, "aws:iam/rolePolicy:RolePolicy", "bulk-sender-permissions");
    const document = JSON.parse(sender.props.policy);
    for (const st of document.Statement) delete st.Condition?.["ForAllValues:StringLike"];
    const unkeyed = stackResource(sender.type, sender.name, { ...sender.props, policy: JSON.stringify(document) });
    await assertHasStackViolation(ledgerWritesKeyed, [...stack.filter((r) => r !== sender), unkeyed], {
      message:
        'statement "ClaimAndRecordOccurrences" allows dynamodb:PutItem, dynamodb:UpdateItem on the occurrence ledger',
    });
  });
});
