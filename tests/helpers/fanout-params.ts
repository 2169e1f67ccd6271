/** The fan-out definition's parameters the tests build it with (mocked ARNs in AWS's formats), and the sender's. */
import type { FanOutParameters } from "../../infra/state-machines/fanout-definition";

export const SENDER_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:sendtime-sender-dev";

export function fanOutTestParameters(overrides: Partial<FanOutParameters> = {}): FanOutParameters {
  return {
    partition: "aws",
    targetRoleArn: "arn:aws:iam::123456789012:role/target",
    housekeepingRoleArn: "arn:aws:iam::123456789012:role/housekeeping",
    deadLetterQueueArn: "arn:aws:sqs:us-east-1:123456789012:dlq",
    resultsBucket: "recipients-bucket",
    fromAddress: "news@mail.example.com",
    configurationSetName: "sendtime-dev",
    listManagement: { contactListName: "sendtime-dev", topicName: "campaigns" },
    maxConcurrency: 60,
    batchSize: 3,
    innerConcurrency: 2,
    toleratedFailurePercentage: 0,
    maxEventAgeSeconds: 7200,
    maxRetryAttempts: 5,
    senderArn: SENDER_ARN,
    ...overrides,
  };
}
