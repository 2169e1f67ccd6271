import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { senderStatements, fanOutTrustPolicy, policyDocument } from "./iam";
import { CAPPED_METRIC, FrequencyCap } from "./core/send/frequency-cap";
import { LEDGER_KEY, LEDGER_TTL_ATTRIBUTE } from "./core/send/ledger";
import { ArnScope } from "./core/plan/naming";
import { OPT_OUT_METRIC } from "./core/send/sender-contract";
import { senderDefinition } from "./state-machines/sender-definition";
import { smsSendStatement } from "./core/sms/sms-config";

export interface SenderArgs {
  /** The account and Region the sender acts in. */
  scope: pulumi.Input<ArnScope>;
  /** The state machine's name (the scheduler target role names it before it exists). */
  stateMachineName: string;
  /** SES resources a send uses: the identity, the configuration set and, with list management, the contact list. */
  identityArn: pulumi.Input<string>;
  configurationSetArn: pulumi.Input<string>;
  contactListArn?: pulumi.Input<string | undefined>;
  /**
   * The SES templates the stack deploys: the sender may send only these.
   * @default none: any template of the account (templates kept in SES)
   */
  templateNames?: string[];
  /** Where each entry not sent (or unknown, or held by a pause) goes, as a pointer. */
  deadLetterQueueArn: pulumi.Input<string>;
  deadLetterQueueUrl: pulumi.Input<string>;
  /**
   * A frequency cap across campaigns and journeys: the sender admits every entry against a table of its own.
   * @default none: every entry is sent
   * @example { max: 2, per: "day" }
   */
  cap?: FrequencyCap;
  /**
   * The unsubscribe endpoint's opt-out table: every entry is looked up there before it is sent, and an opted-out one
   * is skipped.
   * @default none: no look-up (a stack without the endpoint)
   * @example { tableArn: unsubscribe.optOutTable.arn, tableName: unsubscribe.optOutTable.name }
   */
  optOuts?: { tableArn: pulumi.Input<string>; tableName: pulumi.Input<string> };
  /**
   * Customer-managed KMS key of the tables and the dead-letter queue.
   * @default AWS-managed encryption
   */
  kmsKeyArn?: string;
  /**
   * With texts (stack config sendtime:sms): the pool every SendTextMessage is sent from and the SMS configuration set
   * it names; the role may send texts only from that pool, through that configuration set.
   * @default none: the sender sends no text
   */
  sms?: {
    poolArn: string;
    configurationSetName: pulumi.Input<string>;
    configurationSetArn: pulumi.Input<string>;
  };
}

/**
 * The one sender: the EXPRESS state machine every schedule starts (infra/state-machines/sender-definition.ts), the only part
 * of the stack that calls SES, with the occurrence ledger it claims each occurrence in and, with a cap, the table of
 * each address's sends per period.
 */
export class Sender extends pulumi.ComponentResource {
  public readonly arn: pulumi.Output<string>;
  public readonly role: aws.iam.Role;
  /** Occurrences claimed and their outcomes, campaigns' states, journeys' enrolments (infra/core/send/ledger.ts). */
  public readonly ledger: aws.dynamodb.Table;
  /** With a cap: each address's sends per period. */
  public readonly capTable?: aws.dynamodb.Table;

  constructor(name: string, args: SenderArgs, opts?: pulumi.ComponentResourceOptions) {
    // The type token keeps the component's former name: it is part of every child's URN, so a new one would replace
    // the stack's resources.
    super("sendtime:index:BulkSender", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);

    const ledger = createTable("ledger");
    // The cap's table was the send gate's: the alias keeps it (and its counts) where it was.
    const capTable = args.cap
      ? createTable("sends", [
          { name: "send-gate-sends", parent: pulumi.createUrn("send-gate", "sendtime:index:SendGate") },
        ])
      : undefined;
    const role = createRole();
    const permissions = allowSending();
    const stateMachine = createStateMachine();

    this.arn = stateMachine.arn;
    this.role = role;
    this.ledger = ledger;
    this.capTable = capTable;
    this.registerOutputs({ arn: this.arn, ledgerTableName: ledger.name });

    /**
     * An on-demand table keyed by `pk`, items expiring by TTL, encrypted (with the stack's key when it has one) and
     * recoverable: the ledger holds campaigns' states, the cap's table every address's counts.
     */
    function createTable(part: string, aliases?: pulumi.Input<pulumi.Alias>[]) {
      return new aws.dynamodb.Table(
        `${name}-${part}`,
        {
          billingMode: "PAY_PER_REQUEST",
          hashKey: LEDGER_KEY,
          attributes: [{ name: LEDGER_KEY, type: "S" }],
          ttl: { attributeName: LEDGER_TTL_ATTRIBUTE, enabled: true },
          serverSideEncryption: { enabled: true, ...(args.kmsKeyArn ? { kmsKeyArn: args.kmsKeyArn } : {}) },
          pointInTimeRecovery: { enabled: true },
        },
        { parent, aliases },
      );
    }

    function createRole() {
      return new aws.iam.Role(
        `${name}-role`,
        {
          description:
            "The one sender: claims each occurrence, reads the campaign's state, sends through SES, records each outcome",
          assumeRolePolicy: scope.apply((s) => JSON.stringify(fanOutTrustPolicy(s.accountId))),
        },
        { parent },
      );
    }

    function allowSending() {
      const statements = pulumi
        .all([
          scope,
          args.identityArn,
          args.configurationSetArn,
          args.contactListArn,
          args.deadLetterQueueArn,
          ledger.arn,
          capTable?.arn,
          args.optOuts?.tableArn,
        ])
        .apply(
          ([
            s,
            identityArn,
            configurationSetArn,
            contactListArn,
            deadLetterQueueArn,
            ledgerTableArn,
            capArn,
            optOutArn,
          ]) =>
            senderStatements({
              scope: s,
              identityArn,
              configurationSetArn,
              contactListArn,
              templateNames: args.templateNames,
              deadLetterQueueArn,
              ledgerTableArn,
              gate: capArn ? { tableArn: capArn, metricNamespace: CAPPED_METRIC.namespace } : undefined,
              optOuts: optOutArn ? { tableArn: optOutArn, metricNamespace: OPT_OUT_METRIC.namespace } : undefined,
              kmsKeyArn: args.kmsKeyArn,
            }),
        );
      // Texts: SendTextMessage from the stack's pool through its configuration set only.
      const policy = pulumi
        .all([statements, args.sms?.configurationSetArn])
        .apply(([st, smsSetArn]) =>
          JSON.stringify(
            policyDocument([
              ...st,
              ...(args.sms && smsSetArn
                ? [smsSendStatement({ poolArn: args.sms.poolArn, configurationSetArn: smsSetArn })]
                : []),
            ]),
          ),
        );
      return new aws.iam.RolePolicy(`${name}-permissions`, { role: role.id, policy }, { parent });
    }

    function createStateMachine() {
      const definition = pulumi
        .all([
          scope,
          args.deadLetterQueueUrl,
          ledger.name,
          capTable?.name,
          args.optOuts?.tableName,
          args.sms?.configurationSetName,
        ])
        .apply(([s, deadLetterQueueUrl, ledgerTableName, capTableName, optOutTableName, smsConfigurationSetName]) =>
          JSON.stringify(
            senderDefinition({
              partition: s.partition,
              deadLetterQueueUrl,
              ledger: { tableName: ledgerTableName },
              gate: args.cap && capTableName ? { cap: args.cap, tableName: capTableName } : undefined,
              optOuts: optOutTableName ? { tableName: optOutTableName } : undefined,
              sms:
                args.sms && smsConfigurationSetName
                  ? { originationIdentity: args.sms.poolArn, configurationSetName: smsConfigurationSetName }
                  : undefined,
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
