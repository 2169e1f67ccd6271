import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { roledFunction } from "./function-parts";
import { bundleUnsubscribeHandler, HANDLER_NAME } from "./handler-bundle";
import { policyDocument, unsubscribeStatements, unsubscribeTrustPolicy } from "./iam";
import { ArnScope } from "./core/plan/naming";
import { newUnsubscribeKeyValue, OPT_OUT_KEY } from "./core/consent/unsubscribe-endpoint";

/**
 * Instances of the function at once: bounds the SES contact-list calls (each click is one read and at most one write)
 * and the cost of a flood. A click over the limit gets 429 from Lambda; mail providers send one POST per click.
 */
export const UNSUBSCRIBE_RESERVED_CONCURRENCY = 5;

export interface UnsubscribeEndpointArgs {
  /** The account and Region the function acts in. */
  scope: pulumi.Input<ArnScope>;
  /** The SES contact list and topic an unsubscribe opts out of (the SesIdentity's, sendtime:unsubscribe*). */
  contactListName: pulumi.Input<string>;
  contactListArn: pulumi.Input<string>;
  topicName: string;
  /**
   * Customer-managed KMS key for the signing key's parameter and the opt-out table.
   * @default the AWS managed keys aws/ssm and aws/dynamodb
   */
  kmsKeyArn?: string;
  /** Days the function's logs are kept. */
  logRetentionDays: number;
}

/**
 * One-click unsubscribe (RFC 8058) for bulk sends, which SES's list management does not cover: a public Lambda
 * function URL (infra/handlers/unsubscribe.ts) that verifies each link's signed token and opts its address out of the
 * contact list's topic, and the signing key in an SSM SecureString parameter, generated once when the stack creates it.
 * It also records each opt-out in a DynamoDB table of its own, which the sender reads before every SendBulkEmail
 * (SES filters only sends that carry ListManagementOptions; SendBulkEmail cannot).
 */
export class UnsubscribeEndpoint extends pulumi.ComponentResource {
  /** The endpoint's base URL: links are `<url>?t=<token>`. */
  public readonly url: pulumi.Output<string>;
  /** The name of the SSM parameter that holds the signing key (the launcher reads it to sign). */
  public readonly keyParameterName: pulumi.Output<string>;
  /** The opt-out table: one item per address opted out here, keyed by the address as its token names it. */
  public readonly optOutTable: aws.dynamodb.Table;
  public readonly function: aws.lambda.Function;
  public readonly role: aws.iam.Role;

  constructor(name: string, args: UnsubscribeEndpointArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:UnsubscribeEndpoint", name, {}, opts);
    const parent = this;
    const scope = pulumi.output(args.scope);

    const key = createSigningKey();
    const optOutTable = createOptOutTable();
    const { function: fn, role } = roledFunction(
      name,
      {
        logRetentionDays: args.logRetentionDays,
        roleDescription:
          "Assumed by the sendtime unsubscribe function to opt addresses out of the contact list's topic",
        trustPolicy: scope.apply((s) => JSON.stringify(unsubscribeTrustPolicy(s.accountId))),
        policy: optingOutPolicy,
        function: {
          description: "sendtime: one-click unsubscribe (RFC 8058) for bulk sends",
          handler: HANDLER_NAME,
          code: bundleUnsubscribeHandler().code,
          timeout: 10,
          memorySize: 256,
          reservedConcurrentExecutions: UNSUBSCRIBE_RESERVED_CONCURRENCY,
          variables: {
            SENDTIME_UNSUBSCRIBE: pulumi
              .all([args.contactListName, key.name, optOutTable.name])
              .apply(([contactListName, keyParameter, optOutTableName]) =>
                JSON.stringify({
                  contactListName,
                  topicName: args.topicName,
                  keyParameter,
                  optOutTable: optOutTableName,
                }),
              ),
          },
        },
      },
      parent,
    );
    const url = createUrl();

    this.url = url.functionUrl;
    this.keyParameterName = key.name;
    this.optOutTable = optOutTable;
    this.function = fn;
    this.role = role;
    this.registerOutputs({ url: this.url, keyParameterName: this.keyParameterName, optOutTableName: optOutTable.name });

    /**
     * SSM rather than Secrets Manager: a standard SecureString parameter costs nothing and the function reads it
     * once per instance; the value is random at creation and never replaced (ignoreChanges), so links already sent
     * keep working across deployments. Rotating it would invalidate every link in every mail sent.
     */
    function createSigningKey() {
      return new aws.ssm.Parameter(
        `${name}-key`,
        {
          name: `/sendtime/${pulumi.getStack()}/unsubscribe-key`,
          description:
            "sendtime: the key that signs one-click unsubscribe links (never rotate: sent links would stop working)",
          type: aws.ssm.ParameterType.SecureString,
          value: pulumi.secret(newUnsubscribeKeyValue()),
          ...(args.kmsKeyArn ? { keyId: args.kmsKeyArn } : {}),
        },
        { parent, ignoreChanges: ["value"], additionalSecretOutputs: ["value"] },
      );
    }

    /**
     * On-demand (opt-outs are rare; each bulk schedule reads its ≤ 50 keys once), encrypted, recoverable: it holds the
     * addresses that asked to get no more mail, so losing it would send them bulk mail again.
     */
    function createOptOutTable() {
      return new aws.dynamodb.Table(
        `${name}-opt-outs`,
        {
          billingMode: "PAY_PER_REQUEST",
          hashKey: OPT_OUT_KEY,
          attributes: [{ name: OPT_OUT_KEY, type: "S" }],
          serverSideEncryption: { enabled: true, ...(args.kmsKeyArn ? { kmsKeyArn: args.kmsKeyArn } : {}) },
          pointInTimeRecovery: { enabled: true },
        },
        { parent },
      );
    }

    function optingOutPolicy(logGroupArn: pulumi.Output<string>) {
      return pulumi
        .all([key.arn, args.contactListArn, logGroupArn, optOutTable.arn])
        .apply(([keyParameterArn, contactListArn, logGroupArn, optOutTableArn]) =>
          JSON.stringify(
            policyDocument(
              unsubscribeStatements({
                keyParameterArn,
                contactListArn,
                logGroupArn,
                optOutTableArn,
                kmsKeyArn: args.kmsKeyArn,
              }),
            ),
          ),
        );
    }

    /** Public (auth NONE): the provider adds the invoke permissions a NONE URL needs (lambda:InvokeFunctionUrl and InvokeFunction). */
    function createUrl() {
      return new aws.lambda.FunctionUrl(
        `${name}-url`,
        { functionName: fn.name, authorizationType: "NONE" },
        { parent },
      );
    }
  }
}
