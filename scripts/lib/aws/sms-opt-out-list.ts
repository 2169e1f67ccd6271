/**
 * Puts numbers into an End User Messaging SMS opt-out list (PutOptedOutNumber, one call a number: the API takes one),
 * each call bounded by the command's Deadline. A number already in the list is put again without harm (the call
 * answers with the same entry). https://docs.aws.amazon.com/pinpoint/latest/apireference_smsvoicev2/API_PutOptedOutNumber.html
 */
import { PinpointSMSVoiceV2Client, PutOptedOutNumberCommand } from "@aws-sdk/client-pinpoint-sms-voice-v2";
import { awsCall, Deadline } from "./call";

export interface OptOutPutResult {
  list: string;
  /** Numbers put (or, in a dry run, that would be). */
  put: number;
  dryRun: boolean;
}

/** Every number into `list`, in order; the first failure stops with its line (the numbers before it are in). */
export async function putOptedOutNumbers(
  client: PinpointSMSVoiceV2Client,
  d: Deadline,
  list: string,
  numbers: AsyncIterable<string> | Iterable<string>,
  o: { dryRun: boolean; progress?: (put: number) => void },
): Promise<OptOutPutResult> {
  let put = 0;
  for await (const number of numbers) {
    if (!o.dryRun)
      await awsCall(d, `PutOptedOutNumber ${number} into ${list}`, (options) =>
        client.send(new PutOptedOutNumberCommand({ OptOutListName: list, OptedOutNumber: number }), options),
      );
    o.progress?.(++put);
  }
  return { list, put, dryRun: o.dryRun };
}
