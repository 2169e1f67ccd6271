/**
 * The unsubscribe endpoint's DynamoDB call on the wire (against a local endpoint): the request DynamoDB's JSON 1.0
 * protocol takes, and a SigV4 signature that botocore (Python, an independent signer) computes the same from the
 * same request, so AWS would accept it.
 */
import * as assert from "assert";
import { execFileSync } from "child_process";
import { recordOptOut } from "../../../infra/handlers/opt-out-table";
import { SeenRequest, startEndpoint } from "../../helpers/aws-endpoint";

/** botocore's SigV4 signature of the same request (method, URL, the headers the JS signer signed, body, date). */
function botocoreSignature(r: SeenRequest, url: string, signed: string[], token?: string): string {
  const script = `
import json, sys
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
r = json.loads(sys.stdin.read())
req = AWSRequest(method="POST", url=r["url"], data=r["body"].encode(), headers={k: v for k, v in r["headers"].items() if k != "host"})
req.context["timestamp"] = r["headers"]["x-amz-date"]
auth = SigV4Auth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", r["token"]), "dynamodb", "us-east-1")
print(auth.signature(auth.string_to_sign(req, auth.canonical_request(req)), req))`;
  const headers = Object.fromEntries(signed.map((h) => [h, String(r.headers[h])]));
  const input = JSON.stringify({ url: `${url}/`, headers, body: r.body, token: token ?? null });
  return execFileSync("python3", ["-c", script], { input }).toString().trim();
}

describe("the opt-out table call on the wire", () => {
  for (const token of [undefined, "FwoGZXIvYXdzEXAMPLETOKEN"]) {
    it(`UpdateItem, idempotent, signed as botocore signs it (${token ? "with" : "without"} a session token)`, async () => {
      const endpoint = await startEndpoint(() => ({ json: {} }));
      try {
        const env = {
          AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
          AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
          ...(token ? { AWS_SESSION_TOKEN: token } : {}),
          AWS_ENDPOINT_URL_DYNAMODB: endpoint.url,
        };
        await recordOptOut(
          { tableName: "opt-outs-1", region: "us-east-1", env },
          "ann@example.com",
          new Date("2026-12-01T09:00:00Z"),
        );
        const [r] = endpoint.requests;
        assert.strictEqual(r.target, "DynamoDB_20120810.UpdateItem");
        assert.deepStrictEqual(JSON.parse(r.body), {
          TableName: "opt-outs-1",
          Key: { address: { S: "ann@example.com" } },
          UpdateExpression: "SET #since = if_not_exists(#since, :now)",
          ExpressionAttributeNames: { "#since": "opted_out_at" },
          ExpressionAttributeValues: { ":now": { S: "2026-12-01T09:00:00.000Z" } },
        });
        const m =
          /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/(\d{8})\/us-east-1\/dynamodb\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
            String(r.headers.authorization),
          );
        assert.ok(m, String(r.headers.authorization));
        const signed = m[2].split(";");
        for (const h of ["host", "content-type", "x-amz-date", "x-amz-target"])
          assert.ok(signed.includes(h), `${h} signed`);
        if (token) assert.ok(signed.includes("x-amz-security-token"));
        assert.strictEqual(m[3], botocoreSignature(r, endpoint.url, signed, token));
      } finally {
        await endpoint.close();
      }
    });
  }

  it("a refusal is not retried and names DynamoDB's error; a throttle is retried", async () => {
    let n = 0;
    const endpoint = await startEndpoint(() =>
      ++n === 1
        ? { status: 400, json: { __type: "com.amazonaws.dynamodb.v20120810#ThrottlingException" } }
        : { status: 400, json: { __type: "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException" } },
    );
    try {
      const env = { AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "b", AWS_ENDPOINT_URL_DYNAMODB: endpoint.url };
      await assert.rejects(recordOptOut({ tableName: "t", region: "us-east-1", env }, "a@example.com", new Date()), {
        name: "ResourceNotFoundException",
      });
      assert.strictEqual(endpoint.requests.length, 2);
    } finally {
      await endpoint.close();
    }
  });
});
