import { enrolmentTargetFailureHandling } from "../../policy/events";
import { assertHasStackViolation, assertNoStackViolations, stackResource } from "./util";

const FN_ARN = "arn:aws:lambda:us-east-1:123456789012:function:sendtime-journeys-dev";
const DLQ = "arn:aws:sqs:us-east-1:123456789012:journeys-dlq";

const fn = (props: object = {}) =>
  stackResource("aws:lambda/function:Function", "journeys-function", {
    name: "sendtime-journeys-dev",
    arn: FN_ARN,
    ...props,
  });
const target = (props: object = {}) =>
  stackResource("aws:cloudwatch/eventTarget:EventTarget", "journeys-onboarding-trigger-target", {
    rule: "journeys-onboarding-trigger",
    arn: FN_ARN,
    retryPolicy: { maximumEventAgeInSeconds: 86400, maximumRetryAttempts: 185 },
    deadLetterConfig: { arn: DLQ },
    ...props,
  });
const invokeConfig = (props: object = {}) =>
  stackResource("aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig", "journeys-failures", {
    functionName: "sendtime-journeys-dev",
    maximumRetryAttempts: 2,
    destinationConfig: { onFailure: { destination: DLQ } },
    ...props,
  });

describe("policy: enrolment-target-failure-handling", () => {
  const p = enrolmentTargetFailureHandling;
  it("passes a target with a DLQ and retries, invoking a function with an on-failure destination", () =>
    assertNoStackViolations(p, [fn(), target(), invokeConfig()]));
  it("passes a function that keeps failed events in its own dead-letter queue", () =>
    assertNoStackViolations(p, [fn({ deadLetterConfig: { targetArn: DLQ } }), target()]));
  it("passes a target without retryPolicy (EventBridge's default retries for 24 h)", () =>
    assertNoStackViolations(p, [fn(), target({ retryPolicy: undefined }), invokeConfig()]));
  it("fails a rule target without a dead-letter queue, on the target", () =>
    assertHasStackViolation(p, [fn(), target({ deadLetterConfig: undefined }), invokeConfig()], {
      message:
        'EventTarget "journeys-onboarding-trigger-target" drops events it cannot deliver: add a deadLetterConfig',
      urn: "urn:pulumi:test::sendtime::aws:cloudwatch/eventTarget:EventTarget::journeys-onboarding-trigger-target",
    }));
  it("fails a rule target that never retries", () =>
    assertHasStackViolation(
      p,
      [fn(), target({ retryPolicy: { maximumEventAgeInSeconds: 60, maximumRetryAttempts: 0 } }), invokeConfig()],
      {
        message: "retries (retryPolicy.maximumRetryAttempts is 0)",
      },
    ));
  it("fails the function a rule invokes when a failed run's event is dropped (no on-failure destination, no DLQ)", () =>
    assertHasStackViolation(p, [fn(), target()], {
      message:
        'Function "journeys-function" (invoked by EventTarget "journeys-onboarding-trigger-target") drops events whose run fails',
      urn: "urn:pulumi:test::sendtime::aws:lambda/function:Function::journeys-function",
    }));
  it("fails an invoke config that turns retries off", () =>
    assertHasStackViolation(p, [fn(), target(), invokeConfig({ maximumRetryAttempts: 0 })], {
      message: "maximumRetryAttempts 0",
    }));
  it("matches a target that invokes an alias of the function", () =>
    assertHasStackViolation(p, [fn(), target({ arn: `${FN_ARN}:live` })], { message: /Function "journeys-function"/ }));
});
