/** Every policy of the sendtime-guard pack. Tests import this module; only index.ts constructs (and serves) the pack. */
import { Policies } from "@pulumi/policy";
import { enrolmentTargetFailureHandling } from "./events";
import {
  fanOutConcurrencyBelowQuota,
  fanOutBatchedChildren,
  fanOutScheduleSafety,
  fanOutLogsExcludeExecutionData,
} from "./fanout";
import { guardrailAlarmsWiredToPause } from "./guardrails";
import { ledgerWritesKeyed, sendGateTableProtected, sendGateTableScoped } from "./gate";
import { attachedPoliciesReadable } from "./attachments";
import {
  passRoleOnlyTargetRoles,
  passRoleOnlyToScheduler,
  roleTrustNotPublic,
  schedulerActionsScopedToCampaigns,
  schedulerRoleTrust,
  sesSendScoped,
} from "./iam";
import { publicFunctionRoleMinimal } from "./public-endpoints";
import { sesOptOutRecorderRoleMinimal } from "./opt-out-events";
import { queuePolicyStackOnly } from "./queues";
import { recipientBucketPrivate, recipientBucketRetention } from "./storage";
import { smsConfigurationSetEvents, smsSendScoped } from "./sms";

export const PACK_NAME = "sendtime-guard";

export const policies: Policies = [
  schedulerActionsScopedToCampaigns,
  passRoleOnlyToScheduler,
  passRoleOnlyTargetRoles,
  schedulerRoleTrust,
  roleTrustNotPublic,
  sesSendScoped,
  attachedPoliciesReadable,
  fanOutConcurrencyBelowQuota,
  fanOutScheduleSafety,
  fanOutBatchedChildren,
  fanOutLogsExcludeExecutionData,
  recipientBucketPrivate,
  recipientBucketRetention,
  enrolmentTargetFailureHandling,
  sendGateTableScoped,
  sendGateTableProtected,
  ledgerWritesKeyed,
  publicFunctionRoleMinimal,
  sesOptOutRecorderRoleMinimal,
  queuePolicyStackOnly,
  guardrailAlarmsWiredToPause,
  smsSendScoped,
  smsConfigurationSetEvents,
];
