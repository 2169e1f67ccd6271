/**
 * A stack setting whose value is a JSON object (`sendtime:guardrails`, `sendtime:sms`): read it, refuse anything but an
 * object of the known keys, and name what is wrong and what is allowed in one line. Pure: no Pulumi, no SDK.
 */
import { InputError } from "../errors";

/** A setting's checker: `fail(why)` throws the one line `KEY = "raw" is not valid: why; expected ALLOWED`. */
export type Fail = (why: string) => never;

export function settingFailure(key: string, raw: string, allowed: string): Fail {
  return (why: string): never => {
    throw new InputError(`${key} = ${JSON.stringify(raw)} is not valid: ${why}; expected ${allowed}`);
  };
}

/** The object a setting's JSON holds, with only `keys` in it; any other value is one line through `fail`. */
export function jsonObjectSetting(raw: string, keys: readonly string[], fail: Fail): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return fail("not JSON");
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return fail("not an object");
  const o = v as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !keys.includes(k));
  if (unknown.length) fail(`unknown key ${unknown.join(", ")}`);
  return o;
}
