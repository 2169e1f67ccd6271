/**
 * reschedule --dry-run: a Scheduler client that reads as the real one and changes nothing. Each write is recorded,
 * not sent; a DeleteSchedule is answered by a GetSchedule of the same schedule, so that one that does not exist is
 * still found missing (and a bulk entry looked for) exactly as a real run would.
 */
import { GetScheduleCommand, SchedulerClient } from "@aws-sdk/client-scheduler";

/** The writes a dry run did not send: `UpdateSchedule campaign-spring/a1-1`. */
export type DryRunWrites = string[];

const WRITES = new Set(["CreateSchedule", "UpdateSchedule", "DeleteSchedule"]);

export function dryRunScheduler(real: SchedulerClient, notSent: DryRunWrites): SchedulerClient {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return (
        command: { constructor: { name: string }; input: { Name?: string; GroupName?: string } },
        options?: object,
      ) => {
        const kind = command.constructor.name.replace(/Command$/, "");
        if (!WRITES.has(kind)) return target.send(command as never, options as never);
        const { Name, GroupName } = command.input;
        if (kind === "DeleteSchedule")
          return target.send(new GetScheduleCommand({ Name, GroupName }), options).then(() => {
            notSent.push(`${kind} ${GroupName}/${Name}`);
            return {};
          });
        notSent.push(`${kind} ${GroupName}/${Name}`);
        return Promise.resolve(kind === "UpdateSchedule" || kind === "CreateSchedule" ? { ScheduleArn: "" } : {});
      };
    },
  });
}
