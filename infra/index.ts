/**
 * sendtime: one stack per environment. Reads the validated config (a bad key stops the program with one line naming
 * it), builds one Sendtime from it, exports what the operator scripts need (docs/deploying.md, "Stack outputs").
 */
import { Sendtime, sendtimeArgsFromConfig } from "./sendtime";

const app = new Sendtime("sendtime", sendtimeArgsFromConfig());

export const {
  bucketName,
  stateMachineArn,
  schedulerRoleArn,
  housekeepingRoleArn,
  deadLetterQueueUrl,
  configurationSetName,
  fromAddress,
  scheduleGroupPrefix,
  region,
  defaultWindowMinutes,
  createScheduleTps,
  maxSchedules,
  dkimTokens,
  alarmTopicArn,
  journeyDefinitions,
  journeyEnrolment,
  journeyFunctionName,
  journeyDeadLetterQueueUrl,
  eventBusName,
  senderStateMachineArn,
  ledgerTableName,
  unsubscribeUrl,
  unsubscribeKeyParameter,
  optOutTableName,
  contactListName,
  unsubscribeTopic,
  optOutEventsDeadLetterQueueUrl,
  templateNames,
  guardrailSettings,
  guardrailAlarmPrefix,
  smsPoolArn,
  smsConfigurationSetName,
  smsOptOutListName,
  smsEventLogGroupName,
  smsMps,
  smsMessageType,
} = app.outputs;
