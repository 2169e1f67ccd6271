import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { tlsOnlyBucketPolicy } from "./iam";
import { PLANS_PREFIX, RESULTS_PREFIX } from "./core/plan/naming";

export interface RecipientBucketArgs {
  /**
   * Days plans (`plans/`) and fan-out results (`results/`) are kept before they expire; both hold recipient addresses.
   * Noncurrent versions expire a day later.
   *
   * Required, no default here: the stack passes `sendtime:recipientRetentionDays` (`30` when unset).
   * @example
   * ```ts
   * { retentionDays: 30 }
   * ```
   */
  retentionDays: number;
  /**
   * Customer-managed KMS key the bucket encrypts with (SSE-KMS, with an S3 bucket key).
   * @default none: SSE-S3 (`AES256`)
   * @example
   * ```ts
   * { kmsKeyArn: "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab" }
   * ```
   */
  kmsKeyArn?: string;
}

/** The private bucket that holds campaign plans and fan-out results: no public access, encrypted, TLS only, expiring. */
export class RecipientBucket extends pulumi.ComponentResource {
  public readonly bucket: aws.s3.Bucket;
  public readonly name: pulumi.Output<string>;
  public readonly arn: pulumi.Output<string>;

  constructor(name: string, args: RecipientBucketArgs, opts?: pulumi.ComponentResourceOptions) {
    super("sendtime:index:RecipientBucket", name, {}, opts);
    const parent = this;

    const bucket = createBucket();
    const publicAccess = blockPublicAccess();
    enforceBucketOwnership();
    encrypt();
    enableVersioning();
    expirePlansAndResults();
    denyInsecureTransport();

    this.bucket = bucket;
    this.name = bucket.bucket;
    this.arn = bucket.arn;
    this.registerOutputs({ name: this.name, arn: this.arn });

    function createBucket() {
      return new aws.s3.Bucket(`${name}`, { forceDestroy: false }, { parent });
    }

    function blockPublicAccess() {
      return new aws.s3.BucketPublicAccessBlock(
        `${name}-public-access`,
        {
          bucket: bucket.id,
          blockPublicAcls: true,
          blockPublicPolicy: true,
          ignorePublicAcls: true,
          restrictPublicBuckets: true,
        },
        { parent },
      );
    }

    function enforceBucketOwnership() {
      new aws.s3.BucketOwnershipControls(
        `${name}-ownership`,
        {
          bucket: bucket.id,
          rule: { objectOwnership: "BucketOwnerEnforced" },
        },
        { parent },
      );
    }

    function encrypt() {
      new aws.s3.BucketServerSideEncryptionConfiguration(
        `${name}-encryption`,
        {
          bucket: bucket.id,
          rules: [
            {
              applyServerSideEncryptionByDefault: args.kmsKeyArn
                ? { sseAlgorithm: "aws:kms", kmsMasterKeyId: args.kmsKeyArn }
                : { sseAlgorithm: "AES256" },
              bucketKeyEnabled: args.kmsKeyArn ? true : undefined,
            },
          ],
        },
        { parent },
      );
    }

    function enableVersioning() {
      new aws.s3.BucketVersioning(
        `${name}-versioning`,
        {
          bucket: bucket.id,
          versioningConfiguration: { status: "Enabled" },
        },
        { parent },
      );
    }

    function expirePlansAndResults() {
      // Versioned: expire the current object and the noncurrent versions it leaves, or addresses linger.
      new aws.s3.BucketLifecycleConfiguration(
        `${name}-expiry`,
        {
          bucket: bucket.id,
          rules: [PLANS_PREFIX, RESULTS_PREFIX].map((prefix) => ({
            id: `expire-${prefix.replace(/\/$/, "")}`,
            status: "Enabled",
            filter: { prefix },
            expiration: { days: args.retentionDays },
            noncurrentVersionExpiration: { noncurrentDays: 1 },
            abortIncompleteMultipartUpload: { daysAfterInitiation: 1 },
          })),
        },
        { parent },
      );
    }

    function denyInsecureTransport() {
      new aws.s3.BucketPolicy(
        `${name}-tls-only`,
        {
          bucket: bucket.id,
          policy: bucket.arn.apply((arn) => JSON.stringify(tlsOnlyBucketPolicy(arn))),
        },
        { parent, dependsOn: [publicAccess] },
      );
    }
  }
}
