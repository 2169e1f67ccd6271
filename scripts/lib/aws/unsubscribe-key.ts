/**
 * The key bulk sends sign their one-click unsubscribe links with: the SSM SecureString parameter the stack creates
 * (stack output unsubscribeKeyParameter), read with decryption within the command's time limit, and decoded exactly
 * as the endpoint decodes it (infra/core/consent/unsubscribe-endpoint.ts), so the links it signs are the ones it accepts.
 */
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { awsCall, Deadline } from "./call";
import { FindingsError } from "../../../infra/core/errors";
import { UNSUBSCRIBE_KEY_BYTES, unsubscribeKeyFromParameter } from "../../../infra/core/consent/unsubscribe-endpoint";

export async function readUnsubscribeKey(d: Deadline, ssm: SSMClient, parameterName: string): Promise<Buffer> {
  const what = `GetParameter ${parameterName} (the unsubscribe signing key)`;
  // A missing parameter is one line naming it (ParameterNotFound), as every AWS error is.
  const answer = await awsCall(d, what, (options) =>
    ssm.send(new GetParameterCommand({ Name: parameterName, WithDecryption: true }), options),
  );
  const value = answer.Parameter?.Value;
  const key = typeof value === "string" ? unsubscribeKeyFromParameter(value) : undefined;
  if (!key)
    throw new FindingsError(
      `${what}: ${value === undefined ? "no value" : "the value"} is not a key the stack made: expected ${UNSUBSCRIBE_KEY_BYTES} bytes as base64url`,
    );
  return key;
}
