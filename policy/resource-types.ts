/** The Pulumi type tokens of the AWS resources the policies read (@pulumi/aws 7), each named once. */
export const BUCKET = "aws:s3/bucket:Bucket";
export const CONTACT_LIST = "aws:sesv2/contactList:ContactList";
export const EVENT_RULE = "aws:cloudwatch/eventRule:EventRule";
export const EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget";
export const FUNCTION = "aws:lambda/function:Function";
export const FUNCTION_URL = "aws:lambda/functionUrl:FunctionUrl";
export const INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig";
export const LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup";
export const PARAMETER = "aws:ssm/parameter:Parameter";
export const POLICY = "aws:iam/policy:Policy";
export const QUEUE = "aws:sqs/queue:Queue";
export const QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy";
export const ROLE = "aws:iam/role:Role";
export const STATE_MACHINE = "aws:sfn/stateMachine:StateMachine";
export const TABLE = "aws:dynamodb/table:Table";
export const SMS_CONFIGURATION_SET = "aws:pinpoint/smsvoicev2ConfigurationSet:Smsvoicev2ConfigurationSet";
export const SMS_EVENT_DESTINATION = "aws:pinpoint/smsvoicev2EventDestination:Smsvoicev2EventDestination";
