/**
 * Recipient data guards: the bucket holds plans with every recipient's address. Stack policies, since a bucket's
 * protection lives in resources of its own (public access block, encryption, policy, versioning, lifecycle).
 */
import { PolicyResource, StackValidationArgs, StackValidationPolicy } from "@pulumi/policy";
import { parseDocument, wildcardMatch } from "./iam-document";
import { BUCKET } from "./resource-types";

/** The resources of `type` that configure `bucket`: by name, or by dependency when the name is not known yet. */
function configuring(args: StackValidationArgs, type: string, bucket: PolicyResource): PolicyResource[] {
  return args.resources.filter(
    (r) =>
      r.type === type &&
      ((r.props.bucket !== undefined && r.props.bucket === bucket.props.bucket) ||
        (r.propertyDependencies?.bucket ?? r.dependencies ?? []).some((d) => d.urn === bucket.urn)),
  );
}

function blocksAllPublicAccess(args: StackValidationArgs, bucket: PolicyResource): boolean {
  return configuring(args, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", bucket).some((b) =>
    ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"].every(
      (k) => b.props[k] === true,
    ),
  );
}

function isEncrypted(args: StackValidationArgs, bucket: PolicyResource): boolean {
  const rules = [
    ...configuring(
      args,
      "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
      bucket,
    ).flatMap((c) => c.props.rules ?? []),
    ...(bucket.props.serverSideEncryptionConfigurations ?? []).flatMap((c: any) => c.rules ?? []),
  ];
  return rules.some((r: any) =>
    ["AES256", "aws:kms", "aws:kms:dsse"].includes(r?.applyServerSideEncryptionByDefault?.sseAlgorithm),
  );
}

/** A Deny of every S3 action to everyone when aws:SecureTransport is false. */
function deniesInsecureTransport(args: StackValidationArgs, bucket: PolicyResource): boolean {
  const documents = [
    ...configuring(args, "aws:s3/bucketPolicy:BucketPolicy", bucket).map((p) => p.props.policy),
    bucket.props.policy,
  ];
  return documents.some((doc) =>
    (parseDocument(doc) ?? []).some((s) => {
      const everyone = s.principal === "*" || (s.principal as { AWS?: unknown })?.AWS === "*";
      const allS3 = (s.actions ?? []).some(
        (a) =>
          wildcardMatch(a, "s3:GetObject") && wildcardMatch(a, "s3:PutObject") && wildcardMatch(a, "s3:DeleteBucket"),
      );
      const insecure = String(s.condition?.Bool?.["aws:SecureTransport"]) === "false";
      return s.effect === "Deny" && everyone && allS3 && insecure;
    }),
  );
}

export const recipientBucketPrivate: StackValidationPolicy = {
  name: "recipient-bucket-private",
  description:
    "Buckets (they hold recipient plans) block all public access, are encrypted, and refuse requests without TLS.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    for (const bucket of args.resources.filter((r) => r.type === BUCKET)) {
      const label = `Bucket "${bucket.name}"`;
      if (!blocksAllPublicAccess(args, bucket)) {
        report(
          `${label} does not block all public access: add a BucketPublicAccessBlock with blockPublicAcls, blockPublicPolicy, ignorePublicAcls and restrictPublicBuckets true`,
          bucket.urn,
        );
      }
      if (!isEncrypted(args, bucket)) {
        report(
          `${label} has no default encryption: add a BucketServerSideEncryptionConfiguration (AES256, or aws:kms with your key)`,
          bucket.urn,
        );
      }
      if (!deniesInsecureTransport(args, bucket)) {
        report(
          `${label} accepts requests without TLS: add a bucket policy that denies s3:* to "*" when {"Bool": {"aws:SecureTransport": "false"}}`,
          bucket.urn,
        );
      }
    }
  },
};

export const recipientBucketRetention: StackValidationPolicy = {
  name: "recipient-bucket-retention",
  description: "Buckets keep versions (recovery) and expire what they hold (plans carry addresses).",
  enforcementLevel: "advisory",
  validateStack: (args, report) => {
    for (const bucket of args.resources.filter((r) => r.type === BUCKET)) {
      const label = `Bucket "${bucket.name}"`;
      const versioned =
        configuring(args, "aws:s3/bucketVersioning:BucketVersioning", bucket).some(
          (v) => v.props.versioningConfiguration?.status === "Enabled",
        ) || bucket.props.versionings?.[0]?.enabled === true;
      if (!versioned) report(`${label} is not versioned: add a BucketVersioning with status "Enabled"`, bucket.urn);
      const expires = configuring(
        args,
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        bucket,
      ).some((l) =>
        (l.props.rules ?? []).some((r: any) => r.status === "Enabled" && (r.expiration?.days || r.expiration?.date)),
      );
      if (!expires)
        report(
          `${label} keeps plans (recipient addresses) forever: add a BucketLifecycleConfiguration rule that expires them`,
          bucket.urn,
        );
    }
  },
};
