/**
 * What a journey's enrolment takes and gives (journeys.ts decides): the event the rule target hands over, the stack's
 * settings, and the decision — the steps planned for a subscriber, an exit's deletes, or why they are rejected.
 */
import { CreateScheduleRequest, DeleteScheduleRequest, SchedulerTargetParameters } from "../plan/schedule-request";
import { ZoneStatus } from "../timing/send-time";
import type { JourneySmsSettings } from "./sms-steps";

export type EventKind = "trigger" | "exit";

/** What the rule target hands the enrolment handler: the journey, which of its rules matched, and the event. */
export interface JourneyInvocation {
  journey: string;
  kind: EventKind;
  event: JourneyEvent;
}

/** An EventBridge event as delivered; `detail.recipient` is the subscriber. */
export interface JourneyEvent {
  id?: string;
  source?: string;
  "detail-type"?: string;
  time?: string;
  detail?: { recipient?: Record<string, unknown> } & Record<string, unknown>;
}

/** How schedules are made: the stack's SES target and flexible window, and with SMS steps their templates. */
export interface EnrolmentSettings {
  target: SchedulerTargetParameters;
  windowMinutes: number;
  /** Present when a journey has an SMS step: the texts of its templates (the function has no templates folder). */
  sms?: JourneySmsSettings;
}

export type RejectReason =
  | "invalid-event"
  | "missing-id"
  | "missing-email"
  | "invalid-email"
  | "too-large"
  | "reserved-field"
  /** detail.recipient.timezone names several zones (`CST`: US Central, China, Cuba; zone-abbreviations.ts). */
  | "ambiguous-zone"
  /** No usable timezone, and latitude/longitude that are not decimal degrees in range, or one without the other. */
  | "invalid-coordinates"
  /** No usable timezone, and a postal_code not in its country's form (postal.ts). */
  | "invalid-postal-code"
  /** No usable timezone, and a phone that libphonenumber does not take as valid (phone.ts). */
  | "invalid-phone"
  /** A backlog CSV's own checks (scripts/enrol.ts). */
  | "duplicate-id"
  | "duplicate-email"
  | "wrong-field-count";

/** One step of one subscriber: its schedule, or why it is not created. */
export interface PlannedStep {
  step: number;
  schedule: string;
  template: string;
  utc: string;
  send_at: string;
  timezone: string;
  /**
   * planned: to create (`late` set when it was due before it could be created and is sent at once, in UTC);
   * passed: a backlog's step due before the run (an earlier run may have sent it), never created again;
   * late: due more than the journey's lateGraceMinutes before it could be created: not sent, reported;
   * dropped: within MIN_GAP_MINUTES of, or before, an earlier step kept: not created (`note` says which);
   * skipped: an SMS step that cannot be sent to this subscriber (no valid phone, a text over its message parts, no
   * legal time): not created, never sent as an email instead (`note` says why).
   */
  status: "planned" | "passed" | "late" | "dropped" | "skipped";
  /** `sms` for a text message step; absent for an email. */
  channel?: "sms";
  /** An SMS step's message parts and the end of its legal window (ISO, UTC: the text's Until). */
  segments?: number;
  until?: string;
  /** When a step sent late was due (ISO, UTC). */
  late?: string;
  /** Why a step is dropped, or moved. */
  note?: string;
  request?: CreateScheduleRequest;
}

/** How `decide` treats steps due before they can be created. */
export interface DueRule {
  /**
   * A backlog (enrol --recipients): such steps are `passed`, never sent late: a re-run with the same trigger time
   * must not send again what an earlier run created and Scheduler has sent since.
   */
  backlog?: boolean;
}

export type Rejection = {
  outcome: "rejected";
  journey: string;
  recipient?: string;
  reason: RejectReason;
  message: string;
};

/** The recipient is named by its schedule-name stem: the id when it is a valid name, else a hash (never an address). */
export type Decision =
  | {
      outcome: "enrol";
      journey: string;
      recipient: string;
      /** The trigger's id in the ledger (triggerId). */
      trigger: string;
      zone: string;
      zoneStatus: ZoneStatus;
      steps: PlannedStep[];
    }
  | { outcome: "exit"; journey: string; recipient: string; deletes: DeleteScheduleRequest[] }
  | Rejection;

export interface EnrolmentClaim {
  key: string;
  expiresAt: number;
}
