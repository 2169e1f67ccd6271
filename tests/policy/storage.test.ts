import { recipientBucketPrivate, recipientBucketRetention } from "../../policy/storage";
import { assertHasStackViolation, assertNoStackViolations, doc, stackResource } from "./util";

const bucket = stackResource("aws:s3/bucket:Bucket", "recipients", {
  bucket: "recipients-ce6a540",
  arn: "arn:aws:s3:::recipients-ce6a540",
});
const pab = (props: object = {}) =>
  stackResource("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "pab", {
    bucket: "recipients-ce6a540",
    blockPublicAcls: true,
    blockPublicPolicy: true,
    ignorePublicAcls: true,
    restrictPublicBuckets: true,
    ...props,
  });
const sse = stackResource(
  "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
  "sse",
  {
    bucket: "recipients-ce6a540",
    rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }],
  },
);
const tlsDeny = {
  Effect: "Deny",
  Principal: "*",
  Action: "s3:*",
  Resource: ["arn:aws:s3:::recipients-ce6a540", "arn:aws:s3:::recipients-ce6a540/*"],
  Condition: { Bool: { "aws:SecureTransport": "false" } },
};
const tls = (statement: object = tlsDeny) =>
  stackResource("aws:s3/bucketPolicy:BucketPolicy", "tls", { bucket: "recipients-ce6a540", policy: doc(statement) });

describe("policy: recipient-bucket-private", () => {
  const p = recipientBucketPrivate;
  it("passes a bucket blocked, encrypted and TLS-only", () => assertNoStackViolations(p, [bucket, pab(), sse, tls()]));
  it("fails a public access block with one setting off, on the bucket's URN", () =>
    assertHasStackViolation(p, [bucket, pab({ restrictPublicBuckets: false }), sse, tls()], {
      message: 'Bucket "recipients" does not block all public access',
      urn: bucket.urn,
    }));
  it("fails no encryption", () =>
    assertHasStackViolation(p, [bucket, pab(), tls()], { message: "has no default encryption" }));
  it("fails no TLS-only policy", () =>
    assertHasStackViolation(p, [bucket, pab(), sse], { message: "accepts requests without TLS" }));
  it("fails a TLS condition that denies only some actions", () =>
    assertHasStackViolation(p, [bucket, pab(), sse, tls({ ...tlsDeny, Action: "s3:GetObject" })], {
      message: "accepts requests without TLS",
    }));
  it("fails protections that belong to another bucket", () => {
    const other = stackResource("aws:s3/bucket:Bucket", "other", { bucket: "other-1" });
    return assertHasStackViolation(p, [bucket, other, pab(), sse, tls()], {
      message: 'Bucket "other" does not block all public access',
    });
  });
  it("matches protections by dependency when the bucket name is not known yet (preview)", () => {
    const unnamed = stackResource("aws:s3/bucket:Bucket", "recipients", {});
    const deps = [unnamed];
    return assertNoStackViolations(p, [
      unnamed,
      stackResource(
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        "pab",
        { blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true },
        deps,
      ),
      stackResource(
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "sse",
        { rules: sse.props.rules },
        deps,
      ),
      stackResource("aws:s3/bucketPolicy:BucketPolicy", "tls", { policy: doc(tlsDeny) }, deps),
    ]);
  });
});

describe("policy: recipient-bucket-retention (advisory)", () => {
  const versioning = stackResource("aws:s3/bucketVersioning:BucketVersioning", "v", {
    bucket: "recipients-ce6a540",
    versioningConfiguration: { status: "Enabled" },
  });
  const lifecycle = stackResource("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "l", {
    bucket: "recipients-ce6a540",
    rules: [{ status: "Enabled", filter: { prefix: "plans/" }, expiration: { days: 30 } }],
  });
  it("passes versioning and expiry", () =>
    assertNoStackViolations(recipientBucketRetention, [bucket, versioning, lifecycle]));
  it("flags no versioning", () =>
    assertHasStackViolation(recipientBucketRetention, [bucket, lifecycle], { message: "is not versioned" }));
  it("flags no expiry", () =>
    assertHasStackViolation(recipientBucketRetention, [bucket, versioning], {
      message: "keeps plans (recipient addresses) forever",
    }));
});
