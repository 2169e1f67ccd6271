/**
 * Event-driven guards: an app event that enrols a subscriber must never be dropped. EventBridge retries delivering
 * to a rule target and, with a dead-letter queue, keeps what it could not deliver; a Lambda function invoked
 * asynchronously retries a failed run and, with an on-failure destination (or its own DLQ), keeps the event.
 */
import { PolicyResource, StackValidationPolicy } from "@pulumi/policy";
import { EVENT_TARGET, FUNCTION, INVOKE_CONFIG } from "./resource-types";

const LAMBDA_ARN = /^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[^:]+(:[^:]+)?$/;

/** Why a rule target can lose events, or undefined. An omitted retryPolicy means EventBridge's default (185 tries, 24 h). */
function targetProblem(target: PolicyResource): string | undefined {
  const missing: string[] = [];
  if (!target.props.deadLetterConfig?.arn)
    missing.push("a deadLetterConfig (an SQS queue) to keep what cannot be delivered");
  if (target.props.retryPolicy?.maximumRetryAttempts === 0)
    missing.push("retries (retryPolicy.maximumRetryAttempts is 0)");
  return missing.length ? missing.join(" and ") : undefined;
}

/** Why a function's asynchronous invocations can lose events, or undefined. */
function functionProblem(fn: PolicyResource, configs: PolicyResource[]): string | undefined {
  const names = [fn.props.name, fn.props.arn].filter(Boolean);
  const config = configs.find((c) => names.includes(c.props.functionName));
  const destination = config?.props.destinationConfig?.onFailure?.destination ?? fn.props.deadLetterConfig?.targetArn;
  const missing: string[] = [];
  if (!destination)
    missing.push(
      "an on-failure destination (a FunctionEventInvokeConfig with destinationConfig.onFailure) or a deadLetterConfig",
    );
  if (config?.props.maximumRetryAttempts === 0)
    missing.push("retries (its FunctionEventInvokeConfig has maximumRetryAttempts 0)");
  return missing.length ? missing.join(" and ") : undefined;
}

export const enrolmentTargetFailureHandling: StackValidationPolicy = {
  name: "enrolment-target-failure-handling",
  description:
    "An EventBridge rule target retries and keeps what it cannot deliver (dead-letter queue); a Lambda function it invokes retries failed runs and keeps their events (on-failure destination).",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    const functions = args.resources.filter((r) => r.type === FUNCTION);
    const configs = args.resources.filter((r) => r.type === INVOKE_CONFIG);
    const reported = new Set<string>();
    for (const target of args.resources.filter((r) => r.type === EVENT_TARGET)) {
      const problem = targetProblem(target);
      if (problem) report(`EventTarget "${target.name}" drops events it cannot deliver: add ${problem}`, target.urn);
      const arn = String(target.props.arn ?? "");
      if (!LAMBDA_ARN.test(arn)) continue;
      // The function itself, or one of its versions or aliases (`<function ARN>:<qualifier>`).
      const fn = functions.find((f) => f.props.arn && (arn === f.props.arn || arn.startsWith(`${f.props.arn}:`)));
      if (!fn || reported.has(fn.urn)) continue;
      const fnProblem = functionProblem(fn, configs);
      if (fnProblem) {
        reported.add(fn.urn);
        report(
          `Function "${fn.name}" (invoked by EventTarget "${target.name}") drops events whose run fails: add ${fnProblem}`,
          fn.urn,
        );
      }
    }
  },
};
