import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { bulkSenderStatements, fanOutTrustPolicy, policyDocument } from "./iam";
import { CAPPED_METRIC, FrequencyCap } from "./rules/frequency-cap";
import { ArnScope } from "./rules/naming";
import { OPT_OUT_METRIC, senderDefinition } from "./rules/sender-definition";

export interface BulkSenderArgs {
  /** The account and Region the sender acts in. */
  scope: pulumi.Input<ArnScope>;
  /** The state machine's name (the scheduler target role names it before it exists). */
  stateMachineName: string;
  /** SES resources a send uses: the identity and the configuration set (templates: any of the account's). */
  identityArn: pulumi.Input<string>;
  configurationSetArn: pulumi.Input<string>;
  /** Where each entry that still fails goes, one message per entry. */
  deadLetterQueueArn: pulumi.Input<string>;
  deadLetterQueueUrl: pulumi.Input<string>;
  /**
   * With a frequency cap: the send gate's table and cap; the sender admits every entry against them.
   * @default none: every entry is sent
   * @example { cap: { max: 2, per: "day" }, tableArn: gate.table.arn, tableName: gate.table.name }
   */
  gate?: { cap: FrequencyCap; tableArn: pulumi.Input<string>; tableName: pulumi.Input<string> };
  /**
   * The unsubscribe endpoint's opt-out table: every entry is looked up there before SendBulkEmail, and an opted-out
   * one is not sent.
   * @default none: no look-up (a stack without the endpoint)
   * @example { tableArn: unsubscribe.optOutTable.arn, tableName: unsubscribe.optOutTable.name }
   */
  optOuts?: { tableArn: pulumi.Input<string>; tableName: pulumi.Input<string> };
  /**
   * Customer-managed KMS key of the dead-letter queue (and the gate's table).
   * @default AWS-managed encryption
   */
  kmsKeyArn?: string;
}

/**
 * Bulk sends: the EXPRESS state machine a bulk schedule starts (infra/rules/sender-definition.ts). It sends the
 * schedule's entries with SendBulkEmail, retries the transient ones alone and dead-letters each one that still fails.
 */
export class BulkSender extends pulumi.ComponentResource {
  public readonly arn: pulumi.Output<string>;
  public readonly role: aws.iam.Role;

  constructor(name: string, args: BulkSenderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:BulkSender", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);

    const role = createRole();
    const permissions = allowSending();
    const stateMachine = createStateMachine();

    this.arn = stateMachine.arn;
    this.role = role;
    this.registerOutputs({ arn: this.arn });

    function createRole() {
      return new aws.iam.Role(
        `${name}-role`,
        {
          description:
            "The bulk sender: sends bulk schedules' entries with SES SendBulkEmail and dead-letters failed ones",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(fanOutTrustPolicy(s.accountId))),
        },
        { parent },
      );
    }

    function allowSending() {
      const policy = pulumi
        .all([
          scope,
          args.identityArn,
          args.configurationSetArn,
          args.deadLetterQueueArn,
          args.gate?.tableArn,
          args.optOuts?.tableArn,
        ])
        .apply(([s, identityArn, configurationSetArn, deadLetterQueueArn, tableArn, optOutTableArn]) =>
          JSON.stringify(
            policyDocument(
              bulkSenderStatements({
                scope: s,
                identityArn,
                configurationSetArn,
                deadLetterQueueArn,
                gate: tableArn ? { tableArn, metricNamespace: CAPPED_METRIC.namespace } : undefined,
                optOuts: optOutTableArn
                  ? { tableArn: optOutTableArn, metricNamespace: OPT_OUT_METRIC.namespace }
                  : undefined,
                kmsKeyArn: args.kmsKeyArn,
              }),
            ),
          ),
        );
      return new aws.iam.RolePolicy(`${name}-permissions`, { role: role.id, policy }, { parent });
    }

    function createStateMachine() {
      const definition = pulumi
        .all([scope, args.deadLetterQueueUrl, args.gate?.tableName, args.optOuts?.tableName])
        .apply(([s, deadLetterQueueUrl, tableName, optOutTableName]) =>
          JSON.stringify(
            senderDefinition({
              partition: s.partition,
              deadLetterQueueUrl,
              gate: args.gate && tableName ? { cap: args.gate.cap, tableName } : undefined,
              optOuts: optOutTableName ? { tableName: optOutTableName } : undefined,
            }),
            null,
            2,
          ),
        );
      return new aws.sfn.StateMachine(
        name,
        { name: args.stateMachineName, type: "EXPRESS", roleArn: role.arn, definition },
        { parent, dependsOn: [permissions] },
      );
    }
  }
}
