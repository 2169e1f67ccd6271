import { bulkSenderStatements, unsubscribeStatements } from "../../infra/iam";
import { sendGateTableProtected, sendGateTableScoped } from "../../policy/gate";
import { assertHasResourceViolation, assertNoResourceViolations, doc, resourceArgs } from "./util";

const TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/send-gate-sends-1a2b3c4";
const rolePolicy = (...statements: object[]) =>
  resourceArgs("aws:iam/rolePolicy:RolePolicy", { policy: doc(...statements) });

describe("send-gate-table-scoped", () => {
  it("passes the sender's own statements: the ledger (a conditional PutItem claims), the cap's table", async () => {
    const statements = bulkSenderStatements({
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
          'statement 1 allows dynamodb:DeleteItem: allow only "dynamodb:UpdateItem", "dynamodb:GetItem", "dynamodb:BatchGetItem" and "dynamodb:PutItem"',
      },
    );
    await assertHasResourceViolation(
      sendGateTableScoped,
      rolePolicy({ Effect: "Allow", Action: "dynamodb:*", Resource: TABLE }),
      {
        message: /allows dynamodb:DeleteItem, .*dynamodb:Scan/,
      },
    );
  });

  it("passes the bulk sender's opt-out look-up and the endpoint's opt-out record (BatchGetItem/GetItem, UpdateItem, on one table)", async () => {
    const optOuts = "arn:aws:dynamodb:us-east-1:123456789012:table/unsubscribe-opt-outs-1a2b3c4";
    const scope = { partition: "aws", region: "us-east-1", accountId: "123456789012" };
    const sender = bulkSenderStatements({
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
    // Still refused: a delete, a query or scan (which would list every opted-out address), BatchGetItem on every
    // table. (A put is the ledger's claim; on the opt-out table it can add an opt-out, never take one away.)
    for (const Action of ["dynamodb:DeleteItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:BatchWriteItem"])
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
