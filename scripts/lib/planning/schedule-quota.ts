/**
 * EventBridge Scheduler holds at most `maxSchedules` schedules per Region (10,000,000 by default, adjustable), counting
 * every pending schedule of every campaign. A plan above it would fail row after row at fan-out time (quota errors are
 * not transient), so the launcher refuses it before uploading anything.
 */

/** The quota a plan is checked against, and where that number came from (said in the refusal). */
export interface ScheduleQuota {
  maxSchedules: number;
  source: string;
}

export interface PlanSize {
  schedules: number;
  recipients: number;
  steps: number;
}

/** Why the plan cannot be launched under the quota, and what to do; undefined when it fits. */
export function scheduleQuotaFinding(plan: PlanSize, quota: ScheduleQuota): string | undefined {
  if (plan.schedules <= quota.maxSchedules) return undefined;
  const n = (x: number) => x.toLocaleString("en-US");
  const perCampaign = Math.floor(quota.maxSchedules / Math.max(plan.steps, 1));
  const campaigns = perCampaign > 0 ? Math.ceil(plan.recipients / perCampaign) : undefined;
  const split = campaigns
    ? `split the list into ${n(campaigns)} campaigns of at most ${n(perCampaign)} recipients each`
    : "split the list";
  return (
    `Not launched: the plan has ${n(plan.schedules)} schedules (${n(plan.recipients)} recipients, ${plan.steps} step${plan.steps === 1 ? "" : "s"}), ` +
    `above the schedule quota of ${n(quota.maxSchedules)} (${quota.source}); pending schedules of other campaigns count against it too. ` +
    `Either ${split} and launch them one after another as earlier ones finish sending, or raise the EventBridge Scheduler ` +
    `schedules quota of the Region (Service Quotas) and pass the new value with --max-schedules.`
  );
}
