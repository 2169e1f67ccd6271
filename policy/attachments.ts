/**
 * Managed policy attachments. An attachment names a policy by ARN only; the IAM guards check what a known AWS managed
 * policy grants (managed-policies.ts) and an aws.iam.Policy's document where it is written. Anything else could grant
 * anything (scheduler:*, ses:*, iam:PassRole on every role) without the pack seeing it, so it is refused: the pack
 * cannot tell which of the stack's roles Scheduler, the fan-out or the journeys use once they are passed around, and
 * every role in this stack exists to schedule or send.
 */
import { StackValidationPolicy } from "@pulumi/policy";
import { attachmentOf, shortType } from "./iam-document";
import { awsManagedDocument } from "./managed-policies";
import { POLICY } from "./resource-types";

export const attachedPoliciesReadable: StackValidationPolicy = {
  name: "attached-policies-readable",
  description:
    "Every managed policy the stack attaches is one the pack can read: a known AWS managed policy, or an aws.iam.Policy of this stack.",
  enforcementLevel: "mandatory",
  validateStack: (args, report) => {
    const policies = args.resources.filter((r) => r.type === POLICY);
    // By ARN, or by name while the ARN is not known yet (`arn:…:policy/<path><name>`).
    const inStack = (arn: string) =>
      policies.some((p) =>
        typeof p.props.arn === "string" ? p.props.arn === arn : p.props.name && arn.endsWith(`/${p.props.name}`),
      );
    for (const r of args.resources) {
      const attachment = attachmentOf(r.type, r.props);
      if (!attachment) continue;
      const to =
        attachment.roles
          .filter((x) => typeof x === "string")
          .map((x) => `"${x}"`)
          .join(", ") || "a role not known yet";
      for (const arn of attachment.policyArns) {
        // An ARN not known yet (preview) is checked on the next preview or at `pulumi up`.
        if (typeof arn !== "string" || awsManagedDocument(arn) || inStack(arn)) continue;
        report(
          `${shortType(r.type)} "${r.name}" attaches ${arn} to ${to}, and the policy pack cannot read what it grants: grant what the role needs inline (aws.iam.RolePolicy) or in an aws.iam.Policy of this stack`,
          r.urn,
        );
      }
    }
  },
};
