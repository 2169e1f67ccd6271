/**
 * The guard policies against the IAM documents the stack really writes: infra/iam.ts builds them for the components,
 * and here for the policies, from the same values the offline stack uses.
 */
import * as assert from "assert";
import {
  fanOutStatements,
  fanOutTrustPolicy,
  housekeepingStatements,
  journeyStatements,
  journeyTrustPolicy,
  policyDocument,
  PolicyStatement,
  schedulerTargetStatements,
  schedulerTrustPolicy,
  senderStatements,
  unsubscribeStatements,
  sesOptOutStatements,
  unsubscribeTrustPolicy,
} from "../../infra/iam";
import {
  guardrailAlarmsArn,
  guardrailArmStatements,
  guardrailCleanupStatements,
  guardrailEventsStatements,
  guardrailPauseStatements,
} from "../../infra/guardrail-iam";
import { ArnScope } from "../../infra/core/plan/naming";
import { SMS_EVENT_LOG_ACTIONS, smsSendStatement } from "../../infra/core/sms/sms-config";
import { eventRoleTrust } from "../../infra/sms";
import {
  passRoleOnlyToScheduler,
  schedulerActionsScopedToCampaigns,
  schedulerRoleTrust,
  sesSendScoped,
} from "../../policy/iam";
import { all, only, renderWith } from "../helpers/stack";
import { assertHasResourceViolation, assertNoResourceViolations, resourceArgs } from "./util";

const scope: ArnScope = { partition: "aws", region: "eu-west-1", accountId: "210987654321" };
const ses = `arn:aws:ses:eu-west-1:210987654321`;
const targetGrants = {
  scope,
  deadLetterQueueArn: "arn:aws:sqs:eu-west-1:210987654321:scheduler-target-dlq-0123abc",
  kmsKeyArn: "arn:aws:kms:eu-west-1:210987654321:key/1234abcd-12ab-34cd-56ef-1234567890ab",
  senderName: "sendtime-sender-prod",
};
const senderGrants = {
  scope,
  identityArn: `${ses}:identity/mail.example.org`,
  configurationSetArn: `${ses}:configuration-set/sendtime-prod`,
  contactListArn: `${ses}:contact-list/sendtime-prod`,
  templateNames: ["spring-sale"],
  deadLetterQueueArn: "arn:aws:sqs:eu-west-1:210987654321:scheduler-target-dlq-0123abc",
  ledgerTableArn: "arn:aws:dynamodb:eu-west-1:210987654321:table/bulk-sender-ledger-0123abc",
  kmsKeyArn: "arn:aws:kms:eu-west-1:210987654321:key/1234abcd-12ab-34cd-56ef-1234567890ab",
};
const fanOutGrants = {
  scope,
  stateMachineName: "sendtime-fanout-prod",
  targetRoleArn: "arn:aws:iam::210987654321:role/scheduler-target-role-0123abc",
  housekeepingRoleArn: "arn:aws:iam::210987654321:role/scheduler-target-housekeeping-role-0123abc",
  bucketArn: "arn:aws:s3:::recipients-0123abc",
  kmsKeyArn: targetGrants.kmsKeyArn,
};
const journeyGrants = {
  scope,
  journeyNames: ["onboarding", "winback.v2"],
  targetRoleArn: fanOutGrants.targetRoleArn,
  logGroupArn: "arn:aws:logs:eu-west-1:210987654321:log-group:/aws/lambda/sendtime-journeys-prod",
  deadLetterQueueArn: "arn:aws:sqs:eu-west-1:210987654321:journeys-dlq-0123abc",
  ledgerTableArn: "arn:aws:dynamodb:eu-west-1:210987654321:table/ledger-0123abc",
  kmsKeyArn: targetGrants.kmsKeyArn,
};
const IAM_POLICIES = [schedulerActionsScopedToCampaigns, passRoleOnlyToScheduler, schedulerRoleTrust, sesSendScoped];
const rolePolicy = (statements: PolicyStatement[]) =>
  resourceArgs(
    "aws:iam/rolePolicy:RolePolicy",
    { role: "r", policy: JSON.stringify(policyDocument(statements)) },
    {},
    "permissions",
  );
const role = (trust: object) =>
  resourceArgs("aws:iam/role:Role", { assumeRolePolicy: JSON.stringify(trust) }, {}, "role");

describe("the stack's own IAM statements (infra/iam.ts) under every IAM policy", () => {
  for (const policy of IAM_POLICIES) {
    it(`${policy.name}: the fan-out role's permissions and trust pass`, async () => {
      await assertNoResourceViolations(policy, rolePolicy(fanOutStatements(fanOutGrants)));
      await assertNoResourceViolations(policy, rolePolicy(fanOutStatements({ ...fanOutGrants, kmsKeyArn: undefined })));
      await assertNoResourceViolations(policy, role(fanOutTrustPolicy(scope.accountId)));
    });
    it(`${policy.name}: the scheduler target role's permissions and trust pass`, async () => {
      await assertNoResourceViolations(policy, rolePolicy(schedulerTargetStatements(targetGrants)));
      await assertNoResourceViolations(
        policy,
        rolePolicy(schedulerTargetStatements({ ...targetGrants, kmsKeyArn: undefined })),
      );
      await assertNoResourceViolations(policy, role(schedulerTrustPolicy(scope.accountId)));
    });
    it(`${policy.name}: the one sender's permissions pass, with and without a contact list, templates, a key`, async () => {
      await assertNoResourceViolations(policy, rolePolicy(senderStatements(senderGrants)));
      await assertNoResourceViolations(
        policy,
        rolePolicy(
          senderStatements({
            ...senderGrants,
            contactListArn: undefined,
            templateNames: undefined,
            kmsKeyArn: undefined,
          }),
        ),
      );
    });
    it(`${policy.name}: the housekeeping role's permissions pass`, async () => {
      await assertNoResourceViolations(policy, rolePolicy(housekeepingStatements(targetGrants)));
      await assertNoResourceViolations(
        policy,
        rolePolicy(housekeepingStatements({ ...targetGrants, kmsKeyArn: undefined })),
      );
    });
    it(`${policy.name}: the journey enrolment function's permissions and trust pass`, async () => {
      await assertNoResourceViolations(policy, rolePolicy(journeyStatements(journeyGrants)));
      await assertNoResourceViolations(
        policy,
        rolePolicy(journeyStatements({ ...journeyGrants, kmsKeyArn: undefined })),
      );
      await assertNoResourceViolations(policy, role(journeyTrustPolicy(scope.accountId)));
    });
  }

  it("the policies do look at these statements: one widened resource is caught", async () => {
    const widened = fanOutStatements(fanOutGrants).map((s) =>
      s.Sid === "CreateCampaignSchedules"
        ? { ...s, Resource: "arn:aws:scheduler:eu-west-1:210987654321:schedule/*/*" }
        : s,
    );
    await assertHasResourceViolation(schedulerActionsScopedToCampaigns, rolePolicy(widened), {
      message: 'RolePolicy "permissions" statement "CreateCampaignSchedules" allows scheduler:CreateSchedule on',
    });
    const sendAnywhere = senderStatements(senderGrants).map((s) =>
      s.Sid === "SendEmail" ? { ...s, Resource: "*" } : s,
    );
    await assertHasResourceViolation(sesSendScoped, rolePolicy(sendAnywhere), {
      message: 'allows ses:SendEmail on "*"',
    });
  });

  it("the rendered stack's documents are exactly what the builders make", async () => {
    const stack = await renderWith();
    const accountScope: ArnScope = { partition: "aws", region: "us-east-1", accountId: "123456789012" };
    const targetRole = only(stack, "aws:iam/role:Role", "scheduler-target-role");
    const housekeepingRole = only(stack, "aws:iam/role:Role", "scheduler-target-housekeeping-role");
    const contactList = only(stack, "aws:sesv2/contactList:ContactList").outputs.arn;
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "scheduler-target-send").inputs.policy),
      policyDocument(
        schedulerTargetStatements({
          scope: accountScope,
          deadLetterQueueArn: only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn,
          senderName: "sendtime-sender-dev",
        }),
      ),
    );
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "fanout-permissions").inputs.policy),
      policyDocument(
        fanOutStatements({
          scope: accountScope,
          stateMachineName: "sendtime-fanout-dev",
          targetRoleArn: targetRole.outputs.arn,
          housekeepingRoleArn: housekeepingRole.outputs.arn,
          bucketArn: only(stack, "aws:s3/bucket:Bucket").outputs.arn,
        }),
      ),
    );
    assert.deepStrictEqual(JSON.parse(targetRole.inputs.assumeRolePolicy), schedulerTrustPolicy("123456789012"));
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "journeys-permissions").inputs.policy),
      policyDocument(
        journeyStatements({
          scope: accountScope,
          journeyNames: ["onboarding"],
          targetRoleArn: targetRole.outputs.arn,
          logGroupArn: only(stack, "aws:cloudwatch/logGroup:LogGroup", "journeys-logs").outputs.arn,
          deadLetterQueueArn: only(stack, "aws:sqs/queue:Queue", "journeys-dlq").outputs.arn,
          ledgerTableArn: only(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger").outputs.arn,
        }),
      ),
    );
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/role:Role", "journeys-role").inputs.assumeRolePolicy),
      journeyTrustPolicy("123456789012"),
    );
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "scheduler-target-housekeeping").inputs.policy),
      policyDocument(
        housekeepingStatements({
          scope: accountScope,
          deadLetterQueueArn: only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn,
        }),
      ),
    );
    assert.deepStrictEqual(JSON.parse(housekeepingRole.inputs.assumeRolePolicy), schedulerTrustPolicy("123456789012"));
    const dlqArn = only(stack, "aws:sqs/queue:Queue", "scheduler-target-dlq").outputs.arn;
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "bulk-sender-permissions").inputs.policy),
      policyDocument(
        senderStatements({
          scope: accountScope,
          identityArn: only(stack, "aws:sesv2/emailIdentity:EmailIdentity").outputs.arn,
          configurationSetArn: only(stack, "aws:sesv2/configurationSet:ConfigurationSet").outputs.arn,
          contactListArn: contactList,
          templateNames: all(stack, "aws:ses/template:Template").map((t) => t.inputs.name),
          deadLetterQueueArn: dlqArn,
          ledgerTableArn: only(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger").outputs.arn,
          optOuts: {
            tableArn: only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs").outputs.arn,
            metricNamespace: "sendtime",
          },
        }).concat(
          // The example stack sends texts (sendtime:sms): SendTextMessage on its pool and configuration set.
          smsSendStatement({
            poolArn: String(stack.outputs.smsPoolArn),
            configurationSetArn: only(stack, "aws:pinpoint/smsvoicev2ConfigurationSet:Smsvoicev2ConfigurationSet")
              .outputs.arn,
          }),
        ),
      ),
    );
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "unsubscribe-permissions").inputs.policy),
      policyDocument(
        unsubscribeStatements({
          keyParameterArn: only(stack, "aws:ssm/parameter:Parameter").outputs.arn,
          contactListArn: contactList,
          logGroupArn: only(stack, "aws:cloudwatch/logGroup:LogGroup", "unsubscribe-logs").outputs.arn,
          optOutTableArn: only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs").outputs.arn,
        }),
      ),
    );
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/role:Role", "unsubscribe-role").inputs.assumeRolePolicy),
      unsubscribeTrustPolicy("123456789012"),
    );
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "ses-opt-outs-permissions").inputs.policy),
      policyDocument(
        sesOptOutStatements({
          optOutTableArn: only(stack, "aws:dynamodb/table:Table", "unsubscribe-opt-outs").outputs.arn,
          logGroupArn: only(stack, "aws:cloudwatch/logGroup:LogGroup", "ses-opt-outs-logs").outputs.arn,
          deadLetterQueueArn: only(stack, "aws:sqs/queue:Queue", "ses-opt-outs-dlq").outputs.arn,
        }),
      ),
    );
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/role:Role", "ses-opt-outs-role").inputs.assumeRolePolicy),
      unsubscribeTrustPolicy("123456789012"),
    );
    const alarmsArn = guardrailAlarmsArn(accountScope, "dev");
    const machineArn = (n: string) => only(stack, "aws:sfn/stateMachine:StateMachine", n).outputs.arn;
    for (const [name, statements] of [
      [
        "guardrails-arm-permissions",
        guardrailArmStatements({
          alarmsArn,
          cleanupSchedulesArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/sendtime-dev-guardrail-cleanup/*",
          cleanupRoleArn: only(stack, "aws:iam/role:Role", "guardrails-cleanup-role").outputs.arn,
        }),
      ],
      [
        "guardrails-cleanup-permissions",
        guardrailCleanupStatements({
          campaignAlarmsArn: "arn:aws:cloudwatch:us-east-1:123456789012:alarm:sendtime-dev-guardrail-campaign-*",
          deadLetterQueueArn: only(stack, "aws:sqs/queue:Queue", "guardrails-dlq").outputs.arn,
        }),
      ],
      [
        "guardrails-pause-permissions",
        guardrailPauseStatements({
          ledgerTableArn: only(stack, "aws:dynamodb/table:Table", "bulk-sender-ledger").outputs.arn,
          alarmsArn,
        }),
      ],
      [
        "guardrails-events-permissions",
        guardrailEventsStatements({ stateMachineArns: [machineArn("guardrails-arm"), machineArn("guardrails-pause")] }),
      ],
    ] as const)
      assert.deepStrictEqual(
        JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", name).inputs.policy),
        policyDocument([...statements]),
        name,
      );
    // Texts: the SMS event destination's role, trusted by sms-voice for this account and configuration set.
    const smsSet = only(stack, "aws:pinpoint/smsvoicev2ConfigurationSet:Smsvoicev2ConfigurationSet").outputs.arn;
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/role:Role", "sms-events-role").inputs.assumeRolePolicy),
      eventRoleTrust("123456789012", smsSet),
    );
    const smsLogs = only(stack, "aws:cloudwatch/logGroup:LogGroup", "sms-events").outputs.arn;
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/rolePolicy:RolePolicy", "sms-events-permissions").inputs.policy),
      policyDocument([
        { Sid: "WriteSmsEvents", Effect: "Allow", Action: [...SMS_EVENT_LOG_ACTIONS], Resource: `${smsLogs}:*` },
      ]),
    );
    // The guardrails' alarm clean-up: a role only Scheduler assumes.
    assert.deepStrictEqual(
      JSON.parse(only(stack, "aws:iam/role:Role", "guardrails-cleanup-role").inputs.assumeRolePolicy),
      schedulerTrustPolicy("123456789012"),
    );
    assert.strictEqual(all(stack, "aws:iam/role:Role").length, 12);
  });
});
