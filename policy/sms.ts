/**
 * Texts (End User Messaging SMS): a role may send a text only from a named pool through a named configuration set,
 * and every SMS configuration set of the stack records its events (an event destination with the funnel's types), so
 * campaign-report can count what was delivered, what failed and why.
 */
import { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { SMS_SEND_ACTION } from "../infra/core/sms/sms-config";
import { allowedActions, describeStatement, permissionDocuments } from "./iam-document";
import { SMS_CONFIGURATION_SET, SMS_EVENT_DESTINATION } from "./resource-types";

/** A pool or a configuration set, named: no `*` or `?` (a phone number or sender ID would bypass the pool). */
const SMS_SEND_RESOURCE = /^arn:aws[a-z-]*:sms-voice:[a-z0-9-]+:\d{12}:(pool|configuration-set)\/[A-Za-z0-9_-]+$/;

const quote = (xs: string[]) => xs.map((x) => `"${x}"`).join(", ");

export const smsSendScoped: ResourceValidationPolicy = {
  name: "sms-send-scoped",
  description:
    "sms-voice:SendTextMessage is allowed only on named pool and configuration-set ARNs (no wildcard, NotAction or NotResource).",
  enforcementLevel: "mandatory",
  validateResource: (args, report) => {
    const fix =
      "list only the pool and the configuration set (arn:aws:sms-voice:<region>:<account>:pool/<id>, …:configuration-set/<name>)";
    for (const doc of permissionDocuments(args.type, args.name, args.props)) {
      doc.statements.forEach((s, i) => {
        if (!allowedActions(s, [SMS_SEND_ACTION]).length) return;
        const label = `${doc.where} ${describeStatement(s, i)}`;
        const say = (m: string) => report(m + (doc.hint ?? ""));
        if (s.notActions)
          return say(`${label} uses NotAction and so allows ${SMS_SEND_ACTION}: name the action and ${fix}`);
        if (s.notResources) return say(`${label} allows ${SMS_SEND_ACTION} with NotResource: ${fix}`);
        const resources = s.resources ?? [];
        const outside = resources.filter((r) => !SMS_SEND_RESOURCE.test(r));
        if (outside.length || !resources.length)
          return say(
            `${label} allows ${SMS_SEND_ACTION} on ${quote(outside.length ? outside : ["(no resource)"])}: ${fix}`,
          );
        for (const kind of ["pool", "configuration-set"])
          if (!resources.some((r) => r.includes(`:${kind}/`)))
            say(`${label} allows ${SMS_SEND_ACTION} without a ${kind} ARN: ${fix}`);
      });
    }
  },
};

/** What the funnel needs: a delivery and the failures (each class met by one of its types, or by TEXT_ALL / ALL). */
const FUNNEL = {
  delivered: ["TEXT_DELIVERED", "TEXT_SUCCESSFUL"],
  failed: ["TEXT_BLOCKED", "TEXT_CARRIER_BLOCKED", "TEXT_CARRIER_UNREACHABLE", "TEXT_INVALID", "TEXT_UNREACHABLE"],
};
const EVERY_TEXT = ["ALL", "TEXT_ALL"];

export const smsConfigurationSetEvents: StackValidationPolicy = {
  name: "sms-configuration-set-events",
  description:
    "Every SMS configuration set of the stack has an enabled event destination matching its delivered and failed texts (TEXT_DELIVERED or TEXT_SUCCESSFUL, and the failure types; or TEXT_ALL).",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    const destinations = args.resources.filter((r) => r.type === SMS_EVENT_DESTINATION && r.props.enabled !== false);
    for (const set of args.resources.filter((r) => r.type === SMS_CONFIGURATION_SET)) {
      const names = [set.props.name, set.props.arn].filter((n) => typeof n === "string");
      const own = destinations.filter((d) => names.includes(d.props.configurationSetName));
      const fix = `add an aws.pinpoint.Smsvoicev2EventDestination for it with matchingEventTypes ${JSON.stringify([...FUNNEL.delivered, ...FUNNEL.failed])} (or ["TEXT_ALL"])`;
      if (!own.length) {
        report(
          `SMS configuration set "${set.props.name ?? set.name}" has no enabled event destination: its texts' outcomes are never recorded; ${fix}`,
          set.urn,
        );
        continue;
      }
      const types = new Set(own.flatMap((d) => [d.props.matchingEventTypes ?? []].flat().map(String)));
      const every = EVERY_TEXT.some((t) => types.has(t));
      const missing = Object.entries(FUNNEL)
        .filter(([, wanted]) => !every && !wanted.some((t) => types.has(t)))
        .map(([what]) => what);
      if (missing.length)
        report(
          `SMS configuration set "${set.props.name ?? set.name}": its event destinations match ${quote([...types])}, no ${missing.join(" or ")} texts: ${fix}`,
          set.urn,
        );
    }
  },
};
