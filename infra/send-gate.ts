import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { CAPPED_METRIC, FrequencyCap, gateDefinition } from "./rules/frequency-cap";
import { fanOutTrustPolicy, policyDocument, sendGateStatements } from "./iam";
import { ArnScope } from "./rules/naming";

export interface SendGateArgs {
  /** The partition, account and Region the gate acts in. Required. */
  scope: pulumi.Input<ArnScope>;
  /**
   * How many sends an address may get per UTC period, across campaigns.
   *
   * Required, no default: the stack creates a gate only when `sendtime:frequencyCap` is set.
   * @example
   * ```ts
   * { cap: { max: 2, per: "day" } }
   * ```
   */
  cap: FrequencyCap;
  /**
   * The state machine's name, fixed so that the scheduler target's role can name it before it exists. Required.
   * @example
   * ```ts
   * { stateMachineName: sendGateName(pulumi.getStack()) }
   * ```
   */
  stateMachineName: string;
  /** The SES identity a send uses, as for the scheduler target. Required. */
  identityArn: pulumi.Input<string>;
  /** The configuration set a send uses, as for the scheduler target. Required. */
  configurationSetArn: pulumi.Input<string>;
  /**
   * The contact list a send may name for one-click unsubscribe.
   * @default none: sends name no contact list
   */
  contactListArn?: pulumi.Input<string>;
  /**
   * The SES templates the stack deploys: sends may use only these.
   * @default none: any template of the account (templates kept in SES)
   */
  templateNames?: string[];
  /** ARN of the queue a failed send goes to, as when Scheduler gives up on one (the role may write there). Required. */
  deadLetterQueueArn: pulumi.Input<string>;
  /** URL of that same queue (the state machine sends to it). Required. */
  deadLetterQueueUrl: pulumi.Input<string>;
  /**
   * Customer-managed KMS key for the table (and the dead-letter queue it writes to).
   * @default none: encryption at rest with DynamoDB's AWS managed key (`aws/dynamodb`)
   */
  kmsKeyArn?: string;
}

/**
 * The frequency cap: an EXPRESS state machine Scheduler starts instead of calling SES, with the DynamoDB table that
 * counts each address's sends per period (on-demand, encrypted, point-in-time recovery, old periods expire by TTL).
 */
export class SendGate extends pulumi.ComponentResource {
  public readonly arn: pulumi.Output<string>;
  public readonly table: aws.dynamodb.Table;

  constructor(name: string, args: SendGateArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:SendGate", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);

    const table = createTable();
    const role = createRole();
    allowCountingAndSending();
    const stateMachine = createStateMachine();

    this.arn = stateMachine.arn;
    this.table = table;
    this.registerOutputs({ arn: this.arn, tableName: table.name });

    function createTable() {
      return new aws.dynamodb.Table(
        `${name}-sends`,
        {
          billingMode: "PAY_PER_REQUEST",
          hashKey: "pk",
          attributes: [{ name: "pk", type: "S" }],
          ttl: { attributeName: "expires_at", enabled: true },
          serverSideEncryption: { enabled: true, ...(args.kmsKeyArn ? { kmsKeyArn: args.kmsKeyArn } : {}) },
          pointInTimeRecovery: { enabled: true },
        },
        { parent },
      );
    }

    function createRole() {
      return new aws.iam.Role(
        `${name}-role`,
        {
          description: "The send gate: counts sends per address and period, then sends through SES",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(fanOutTrustPolicy(s.accountId))),
        },
        { parent },
      );
    }

    function allowCountingAndSending() {
      const policy = pulumi
        .all([
          scope,
          table.arn,
          args.identityArn,
          args.configurationSetArn,
          args.contactListArn,
          args.deadLetterQueueArn,
        ])
        .apply(([s, tableArn, identityArn, configurationSetArn, contactListArn, deadLetterQueueArn]) =>
          JSON.stringify(
            policyDocument(
              sendGateStatements({
                scope: s,
                tableArn,
                identityArn,
                configurationSetArn,
                contactListArn,
                templateNames: args.templateNames,
                deadLetterQueueArn,
                metricNamespace: CAPPED_METRIC.namespace,
                kmsKeyArn: args.kmsKeyArn,
              }),
            ),
          ),
        );
      new aws.iam.RolePolicy(`${name}-permissions`, { role: role.id, policy }, { parent });
    }

    function createStateMachine() {
      const definition = pulumi
        .all([scope, table.name, args.deadLetterQueueUrl])
        .apply(([s, tableName, deadLetterQueueUrl]) =>
          JSON.stringify(
            gateDefinition({ partition: s.partition, cap: args.cap, tableName, deadLetterQueueUrl }),
            null,
            2,
          ),
        );
      return new aws.sfn.StateMachine(
        name,
        { name: args.stateMachineName, type: "EXPRESS", roleArn: role.arn, definition },
        { parent },
      );
    }
  }
}
