/**
 * A function's role and every statement its documents allow, for the policies that hold one function's role to an
 * allow-list (public-endpoints.ts, opt-out-events.ts): the role's own inline and managed documents, and every
 * RolePolicy or attachment naming it.
 */
import { PolicyResource } from "@pulumi/policy";
import { LocatedDocument, permissionDocuments, Statement } from "./iam-document";

const ROLE = "aws:iam/role:Role";

/** A log group's streams: the one trailing wildcard logging needs. */
export const LOG_STREAMS = /^arn:aws[a-z-]*:logs:[a-z0-9-]+:\d{12}:log-group:[^*?]+:\*$/;

export const quote = (xs: string[]) => xs.map((x) => `"${x}"`).join(", ");

const roleNameOf = (arn: unknown) => (typeof arn === "string" ? arn.slice(arn.lastIndexOf("/") + 1) : undefined);

/** The role `fn` (a Lambda function) runs as, among `resources`. */
export function roleOfFunction(resources: PolicyResource[], fn: PolicyResource): PolicyResource | undefined {
  return resources.find(
    (r) => r.type === ROLE && (r.props.arn === fn.props.role || r.props.name === roleNameOf(fn.props.role)),
  );
}

/** Every statement of the documents attached to `role`, with the resource that holds it and where in it. */
export function roleStatements(
  resources: PolicyResource[],
  role: PolicyResource,
): { resource: PolicyResource; doc: LocatedDocument; statement: Statement; index: number }[] {
  const roleName = role.props.name ?? role.name;
  const attached = resources.filter(
    (r) =>
      r === role ||
      (r.type !== ROLE && [r.props.role, r.props.roleName].some((x) => x === roleName || roleNameOf(x) === roleName)),
  );
  return attached.flatMap((resource) =>
    permissionDocuments(resource.type, resource.name, resource.props).flatMap((doc) =>
      doc.statements.map((statement, index) => ({ resource, doc, statement, index })),
    ),
  );
}
