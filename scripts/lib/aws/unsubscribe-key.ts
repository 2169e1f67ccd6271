/**
 * The key bulk sends sign their one-click unsubscribe links with: the SSM SecureString parameter the stack creates
 * (stack output unsubscribeKeyParameter), read with decryption within the command's time limit. The key is the
 * parameter's value as UTF-8 bytes, as the endpoint reads it.
 */
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { awsCall, Deadline } from "./call";
import { FindingsError } from "../../../infra/rules/errors";

/** Fewer bytes than this cannot be a key the stack made (HMAC-SHA256 wants at least 32). */
export const MIN_UNSUBSCRIBE_KEY_BYTES = 32;

export async function readUnsubscribeKey(d: Deadline, ssm: SSMClient, parameterName: string): Promise<Buffer> {
  const what = `GetParameter ${parameterName} (the unsubscribe signing key)`;
  // A missing parameter is one line naming it (ParameterNotFound), as every AWS error is.
  const answer = await awsCall(d, what, (options) =>
    ssm.send(new GetParameterCommand({ Name: parameterName, WithDecryption: true }), options),
  );
  const value = answer.Parameter?.Value;
  if (typeof value !== "string" || Buffer.byteLength(value, "utf8") < MIN_UNSUBSCRIBE_KEY_BYTES)
    throw new FindingsError(
      `${what}: the value is ${value === undefined ? "missing" : `${Buffer.byteLength(value, "utf8")} bytes`}; expected a key of at least ${MIN_UNSUBSCRIBE_KEY_BYTES} bytes`,
    );
  return Buffer.from(value, "utf8");
}
