/**
 * One Logs Insights query of the SMS event log group (StartQuery, then GetQueryResults until it is done), bounded:
 * every call by the command's Deadline, the polls by `maxPolls` a second apart; a query still running then is
 * stopped (StopQuery, best effort) and named. Times are epoch seconds, as StartQuery takes them.
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_StartQuery.html
 */
import {
  CloudWatchLogsClient,
  GetQueryResultsCommand,
  StartQueryCommand,
  StopQueryCommand,
} from "@aws-sdk/client-cloudwatch-logs";
import { awsCall, Deadline } from "./call";
import { FindingsError } from "../../../infra/core/errors";
import type { QueryRow } from "../report/sms-funnel";

export const QUERY_POLL_MS = 1_000;
/** Polls a query may take (a query of a few days' events finishes in seconds; Logs Insights stops one at 60 min). */
export const MAX_QUERY_POLLS = 600;

export async function runLogsQuery(
  logs: CloudWatchLogsClient,
  d: Deadline,
  q: { logGroup: string; query: string; from: number; to: number; limit: number; maxPolls?: number },
): Promise<QueryRow[]> {
  const what = `Logs Insights query of ${q.logGroup}`;
  const started = await awsCall(d, `StartQuery (${what})`, (o) =>
    logs.send(
      new StartQueryCommand({
        logGroupName: q.logGroup,
        queryString: q.query,
        startTime: Math.floor(q.from / 1000),
        endTime: Math.ceil(q.to / 1000),
        limit: q.limit,
      }),
      o,
    ),
  );
  const queryId = started.queryId;
  if (!queryId) throw new FindingsError(`StartQuery (${what}): the answer has no queryId`);
  const maxPolls = q.maxPolls ?? MAX_QUERY_POLLS;
  for (let poll = 1; poll <= maxPolls; poll++) {
    const r = await awsCall(d, `GetQueryResults (${what})`, (o) =>
      logs.send(new GetQueryResultsCommand({ queryId }), o),
    );
    if (r.status === "Complete") return (r.results ?? []) as QueryRow[];
    if (r.status !== "Running" && r.status !== "Scheduled")
      throw new FindingsError(`${what}: the query ended ${r.status ?? "without a status"} (query id ${queryId})`);
    await d.sleep(QUERY_POLL_MS);
    if (d.expired) break;
  }
  await logs.send(new StopQueryCommand({ queryId }), { abortSignal: AbortSignal.timeout(5_000) }).catch(() => {});
  if (d.expired) throw d.exceeded(what);
  throw new FindingsError(`${what}: still running after ${maxPolls} polls; stopped (query id ${queryId})`);
}
