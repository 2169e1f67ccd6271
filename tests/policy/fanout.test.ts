import { fanOutDefinition, FanOutParameters } from "../../infra/state-machines/fanout-definition";
import { STACK_QUOTA_TAG } from "../../infra/core/plan/naming";
import {
  fanOutConcurrencyBelowQuota,
  fanOutBatchedChildren,
  fanOutScheduleSafety,
  fanOutLogsExcludeExecutionData,
} from "../../policy/fanout";
import { assertHasResourceViolation, assertNoResourceViolations, resourceArgs } from "./util";

const PARAMS: FanOutParameters = {
  partition: "aws",
  targetRoleArn: "arn:aws:iam::123456789012:role/t",
  deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
  resultsBucket: "b",
  fromAddress: "news@mail.example.com",
  configurationSetName: "cs",
  maxConcurrency: 19,
  batchSize: 400,
  innerConcurrency: 25,
  toleratedFailurePercentage: 5,
  maxEventAgeSeconds: 7200,
  maxRetryAttempts: 5,
  senderArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev",
};
const STATE_MACHINE = "aws:sfn/stateMachine:StateMachine";
const machine = (definition: object, config: Record<string, unknown> = {}, extra: object = {}) =>
  resourceArgs(STATE_MACHINE, { definition: JSON.stringify(definition), ...extra }, config, "fanout");
/** The shipped definition with one change to the CreateSchedule task (or the state machine). */
function edited(edit: (def: any, task: any) => void, params: Partial<FanOutParameters> = {}) {
  const def: any = fanOutDefinition({ ...PARAMS, ...params });
  edit(def, def.States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor.States.CreateSchedule);
  return def;
}

describe("policy: fanout-concurrency-below-quota", () => {
  const p = fanOutConcurrencyBelowQuota;
  it("passes the shipped shape (19 × 25 = 475 = 5,000/s × 0.95 × 0.1 s)", () =>
    assertNoResourceViolations(p, machine(fanOutDefinition(PARAMS))));
  it("passes exactly at the limit (475 × 1)", () =>
    assertNoResourceViolations(p, machine(fanOutDefinition({ ...PARAMS, maxConcurrency: 475, innerConcurrency: 1 }))));
  it("fails one above the limit, showing the numbers and the largest allowed MaxConcurrency", () =>
    assertHasResourceViolation(p, machine(fanOutDefinition({ ...PARAMS, maxConcurrency: 476, innerConcurrency: 1 })), {
      message:
        'can make 476 CreateSchedule calls at once (Distributed Map "FanOut" MaxConcurrency 476 × inline Map "CreateSchedules" MaxConcurrency 1), above 475 (createScheduleTps 5,000 × headroom 0.95 × 100 ms a call): set the Distributed Map "FanOut" MaxConcurrency to at most 475',
    }));
  it("fails the old shape (60 × 40 = 2,400 calls in flight: about 24,000 calls a second asked of 5,000)", () =>
    assertHasResourceViolation(p, machine(fanOutDefinition({ ...PARAMS, maxConcurrency: 60, innerConcurrency: 40 })), {
      message: "can make 2,400 CreateSchedule calls at once",
    }));
  it("uses the quota, headroom and call latency from policy config", async () => {
    await assertHasResourceViolation(p, machine(fanOutDefinition(PARAMS), { createScheduleTps: 4000, headroom: 0.5 }), {
      message:
        'above 200 (createScheduleTps 4,000 × headroom 0.5 × 100 ms a call): set the Distributed Map "FanOut" MaxConcurrency to at most 8',
    });
    // faster calls: the same concurrency asks for more calls a second
    await assertHasResourceViolation(p, machine(fanOutDefinition(PARAMS), { callLatencyMs: 50 }), {
      message: "above 237 (createScheduleTps 5,000 × headroom 0.95 × 50 ms a call)",
    });
    await assertNoResourceViolations(
      p,
      machine(fanOutDefinition({ ...PARAMS, maxConcurrency: 38 }), { callLatencyMs: 200 }),
    );
  });
  it("counts an absent MaxConcurrency as the service default (10,000)", () =>
    assertHasResourceViolation(p, machine(edited((d) => delete d.States.FanOut.MaxConcurrency)), {
      message: "MaxConcurrency unset (10,000)",
    }));
  it("counts MaxConcurrency 0 as unlimited too", () =>
    assertHasResourceViolation(p, machine(edited((d) => (d.States.FanOut.MaxConcurrency = 0))), {
      message: "can make 250,000 CreateSchedule calls",
    }));
  it("counts an inner Map without MaxConcurrency at the inline limit (40)", () =>
    assertHasResourceViolation(
      p,
      machine(
        edited((d) => delete d.States.FanOut.ItemProcessor.States.CreateSchedules.MaxConcurrency, {
          maxConcurrency: 100,
        }),
      ),
      { message: "can make 4,000" },
    ));
  it("fails a MaxConcurrencyPath it cannot check", () =>
    assertHasResourceViolation(p, machine(edited((d) => (d.States.FanOut.MaxConcurrencyPath = "$.concurrency"))), {
      message: 'Map "FanOut" sets MaxConcurrencyPath',
    }));
  const tagged = (tps: string) => ({ tags: { [STACK_QUOTA_TAG]: tps } });
  it("fails a stack sized for another quota than the policy config's, naming both", () =>
    assertHasResourceViolation(p, machine(fanOutDefinition(PARAMS), { createScheduleTps: 5000 }, tagged("100")), {
      message: `StateMachine "fanout" was built for createScheduleTps 100 (tag ${STACK_QUOTA_TAG}), but the policy config checks against 5,000: make sendtime:createScheduleTps in Pulumi.<stack>.yaml and createScheduleTps in policy/config/<stack>.json the same`,
    }));
  it("fails the mismatch even when the policy config is left at its default", () =>
    assertHasResourceViolation(p, machine(fanOutDefinition(PARAMS), {}, tagged("100")), {
      message: "built for createScheduleTps 100",
    }));
  it("passes a stack whose quota tag is the policy config's", () =>
    assertNoResourceViolations(p, machine(fanOutDefinition(PARAMS), { createScheduleTps: 5000 }, tagged("5000"))));
  it("fails a quota tag that is not a whole number", () =>
    assertHasResourceViolation(p, machine(fanOutDefinition(PARAMS), {}, tagged("lots")), {
      message: `tag ${STACK_QUOTA_TAG} = "lots" is not a whole number`,
    }));
  it("ignores state machines that create no schedules", () =>
    assertNoResourceViolations(
      p,
      machine({
        StartAt: "A",
        States: {
          A: {
            Type: "Map",
            ItemProcessor: {
              ProcessorConfig: { Mode: "DISTRIBUTED" },
              StartAt: "B",
              States: { B: { Type: "Pass", End: true } },
            },
            End: true,
          },
        },
      }),
    ));
});

describe("policy: fanout-schedule-safety", () => {
  const p = fanOutScheduleSafety;
  it("passes the shipped definition", () => assertNoResourceViolations(p, machine(fanOutDefinition(PARAMS))));
  it("fails a schedule that does not delete itself", () =>
    assertHasResourceViolation(p, machine(edited((_, t) => (t.Parameters.ActionAfterCompletion = "NONE"))), {
      message: 'ActionAfterCompletion is "NONE"',
    }));
  for (const minutes of [0, 1441]) {
    it(`fails a window of ${minutes} minutes`, () =>
      assertHasResourceViolation(
        p,
        machine(
          edited((_, t) => (t.Parameters.FlexibleTimeWindow = { Mode: "FLEXIBLE", MaximumWindowInMinutes: minutes })),
        ),
        { message: `FlexibleTimeWindow {"Mode":"FLEXIBLE","MaximumWindowInMinutes":${minutes}} does not spread sends` },
      ));
  }
  it("passes windows of 1 and 1,440 minutes", async () => {
    for (const minutes of [1, 1440])
      await assertNoResourceViolations(
        p,
        machine(
          edited((_, t) => (t.Parameters.FlexibleTimeWindow = { Mode: "FLEXIBLE", MaximumWindowInMinutes: minutes })),
        ),
      );
  });
  it("fails FlexibleTimeWindow OFF", () =>
    assertHasResourceViolation(p, machine(edited((_, t) => (t.Parameters.FlexibleTimeWindow = { Mode: "OFF" }))), {
      message: 'FlexibleTimeWindow {"Mode":"OFF"}',
    }));
  it("fails a retry policy outside the API's ranges", () =>
    assertHasResourceViolation(
      p,
      machine(
        edited((_, t) => (t.Parameters.Target.RetryPolicy = { MaximumEventAgeInSeconds: 30, MaximumRetryAttempts: 5 })),
      ),
      { message: "outside the API's ranges" },
    ));
  it("fails no dead-letter queue", () =>
    assertHasResourceViolation(p, machine(edited((_, t) => delete t.Parameters.Target.DeadLetterConfig)), {
      message: "no Target.DeadLetterConfig",
    }));
  it("fails no throttling retry", () =>
    assertHasResourceViolation(
      p,
      machine(edited((_, t) => (t.Retry = [{ ErrorEquals: ["Scheduler.InternalServerException"] }]))),
      {
        message: "no Retry covers Scheduler.ThrottlingException",
      },
    ));
  it("accepts States.ALL as covering throttling", () =>
    assertNoResourceViolations(
      p,
      machine(edited((_, t) => (t.Retry = [{ ErrorEquals: ["States.ALL"], MaxAttempts: 5 }]))),
    ));
});

describe("policy: fanout-batched-children (advisory)", () => {
  it("flags one STANDARD child per item, as in the reference design", () =>
    assertHasResourceViolation(
      fanOutBatchedChildren,
      machine(
        edited((d) => {
          delete d.States.FanOut.ItemBatcher;
          d.States.FanOut.ItemProcessor.ProcessorConfig.ExecutionType = "STANDARD";
        }),
      ),
      { message: "about $75 per million recipients" },
    ));
  it("passes batched EXPRESS children", () =>
    assertNoResourceViolations(fanOutBatchedChildren, machine(fanOutDefinition(PARAMS))));
});

describe("policy: fanout-logs-exclude-execution-data (advisory)", () => {
  it("flags execution data in logs", () =>
    assertHasResourceViolation(
      fanOutLogsExcludeExecutionData,
      machine(fanOutDefinition(PARAMS), {}, { loggingConfiguration: { level: "ALL", includeExecutionData: true } }),
      { message: "recipient addresses land in CloudWatch Logs" },
    ));
  it("passes logs without execution data", () =>
    assertNoResourceViolations(
      fanOutLogsExcludeExecutionData,
      machine(fanOutDefinition(PARAMS), {}, { loggingConfiguration: { level: "ERROR", includeExecutionData: false } }),
    ));
});

/** The shipped definition with its FanOut Map run twice at once, in the two branches of a Parallel. */
function fanOutInParallel(params: Partial<FanOutParameters> = {}) {
  const def: any = fanOutDefinition({ ...PARAMS, ...params });
  const branch = () => ({
    StartAt: "FanOut",
    States: { FanOut: { ...JSON.parse(JSON.stringify(def.States.FanOut)), End: true } },
  });
  const next = def.States.FanOut.Next;
  def.States.FanOut = { Type: "Parallel", Branches: [branch(), branch()], ...(next ? { Next: next } : { End: true }) };
  return def;
}

describe("policy: fanout-concurrency-below-quota, Maps run at once in a Parallel (issue 23)", () => {
  const p = fanOutConcurrencyBelowQuota;
  it("fails two Distributed Maps in a Parallel's branches, each within the limit alone (475 + 475 calls in flight)", () =>
    assertHasResourceViolation(p, machine(fanOutInParallel()), {
      message:
        'StateMachine "fanout" Parallel "FanOut" creates schedules in 2 branches at once (branch 1: 475, branch 2: 475 CreateSchedule calls in flight), so the state machine can make 950 CreateSchedule calls at once (limit 475)',
    }));
  it("fails them even when their sum fits: the fan-out's pacing is sized for one stream of calls", () =>
    assertHasResourceViolation(p, machine(fanOutInParallel({ maxConcurrency: 1, innerConcurrency: 1 })), {
      message:
        /creates schedules in 2 branches at once .*: run the branches one after another \(Next\), not in a Parallel/,
    }));
  it("fails a Parallel inside the inner Map whose two branches each create schedules (inline Maps too)", () =>
    assertHasResourceViolation(
      p,
      machine(
        edited((d, t) => {
          const inner = d.States.FanOut.ItemProcessor.States.CreateSchedules.ItemProcessor;
          const branch = () => ({ StartAt: "C", States: { C: { ...JSON.parse(JSON.stringify(t)), End: true } } });
          inner.States = { Both: { Type: "Parallel", Branches: [branch(), branch()], End: true } };
          inner.StartAt = "Both";
        }),
      ),
      { message: 'Parallel "Both" creates schedules in 2 branches at once' },
    ));
  it("passes a Parallel with one branch that creates schedules", () =>
    assertNoResourceViolations(
      p,
      machine(
        (() => {
          const def = fanOutInParallel();
          def.States.FanOut.Branches[1] = { StartAt: "Noop", States: { Noop: { Type: "Pass", End: true } } };
          return def;
        })(),
      ),
    ));
});

describe("policy: fanout-schedule-safety, CreateSchedule integration patterns (issue 23)", () => {
  const p = fanOutScheduleSafety;
  for (const suffix of [".waitForTaskToken", ".sync", ".sync:2"]) {
    it(`fails a CreateSchedule task with the ${suffix} suffix, naming the Resource to use`, () =>
      assertHasResourceViolation(p, machine(edited((_, t) => (t.Resource += suffix))), {
        message: `task "CreateSchedule": Resource "arn:aws:states:::aws-sdk:scheduler:createSchedule${suffix}" uses the ${suffix.split(":")[0]} integration pattern`,
      }));
  }
  it("still checks a suffixed task's schedule: no ActionAfterCompletion is reported too", () =>
    assertHasResourceViolation(
      p,
      machine(
        edited((_, t) => {
          t.Resource += ".waitForTaskToken";
          delete t.Parameters.ActionAfterCompletion;
        }),
      ),
      { message: 'ActionAfterCompletion is "unset"' },
    ));
  it("fails ActionAfterCompletion given by a path (it is not known to be DELETE)", () =>
    assertHasResourceViolation(
      p,
      machine(
        edited((_, t) => {
          delete t.Parameters.ActionAfterCompletion;
          t.Parameters["ActionAfterCompletion.$"] = "$.after";
        }),
      ),
      { message: 'ActionAfterCompletion is "unset"' },
    ));
});

describe("policy: fanout-batched-children finds Maps inside a Parallel", () => {
  it("passes batched EXPRESS children in a Parallel named like its Map (it had read the Parallel as the Map)", () =>
    assertNoResourceViolations(fanOutBatchedChildren, machine(fanOutInParallel())));
  it("still flags STANDARD per-item children inside a Parallel", () => {
    const def = fanOutInParallel();
    for (const b of def.States.FanOut.Branches) {
      delete b.States.FanOut.ItemBatcher;
      b.States.FanOut.ItemProcessor.ProcessorConfig.ExecutionType = "STANDARD";
    }
    return assertHasResourceViolation(fanOutBatchedChildren, machine(def), {
      message: "starts one STANDARD child per item",
    });
  });
});

/** A Distributed Map whose task starts another state machine's executions (which may create schedules). */
function startsExecutionsInMap(resource: string, container: "Map" | "Parallel" = "Map") {
  const task = {
    Type: "Task",
    Resource: resource,
    Arguments: { StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:creator" },
    End: true,
  };
  const inner = { StartAt: "Start", States: { Start: task } };
  const state =
    container === "Map"
      ? {
          Type: "Map",
          MaxConcurrency: 1000,
          ItemProcessor: { ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" }, ...inner },
          End: true,
        }
      : { Type: "Parallel", Branches: [inner, inner], End: true };
  return { QueryLanguage: "JSONata", StartAt: "Fan", States: { Fan: state } };
}

describe("policy: fanout-concurrency-below-quota, executions started from a Map or Parallel (hostile review)", () => {
  const p = fanOutConcurrencyBelowQuota;
  for (const resource of [
    "arn:aws:states:::states:startExecution",
    "arn:aws:states:::states:startExecution.sync",
    "arn:aws:states:::states:startExecution.sync:2",
    "arn:aws:states:::states:startExecution.waitForTaskToken",
    "arn:aws:states:::aws-sdk:sfn:startExecution",
    "arn:aws-us-gov:states:::aws-sdk:sfn:startSyncExecution",
  ]) {
    it(`fails ${resource} inside a Distributed Map (MaxConcurrency 1000): the calls it causes are not counted`, () =>
      assertHasResourceViolation(p, machine(startsExecutionsInMap(resource)), {
        message: `StateMachine "fanout" task "Start" starts state machine executions (Resource "${resource}") inside Distributed Map "Fan" MaxConcurrency 1,000, so up to 1,000 run at once and the CreateSchedule calls they make cannot be counted against the limit of 475: create schedules with CreateSchedule tasks in this state machine's own Map, or start the other state machine once, outside any Map or Parallel`,
      }));
  }
  it("fails a StartExecution task in a Parallel's branches", () =>
    assertHasResourceViolation(
      p,
      machine(startsExecutionsInMap("arn:aws:states:::states:startExecution", "Parallel")),
      {
        message: /task "Start" starts state machine executions .* inside Parallel "Fan", so up to 2 run at once/,
      },
    ));
  it("passes one StartExecution outside any Map or Parallel", () =>
    assertNoResourceViolations(
      p,
      machine({
        StartAt: "Start",
        States: { Start: { Type: "Task", Resource: "arn:aws:states:::states:startExecution", End: true } },
      }),
    ));
});
