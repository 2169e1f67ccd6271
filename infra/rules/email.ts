/** Email address rules, shared by the stack config, the recipient reader, the importer and the journeys. */

// SES takes 7-bit ASCII addresses (no SMTPUTF8; an international domain must be given in Punycode): RFC 5322 atoms.
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** Whether SES takes `value` as an address (7-bit ASCII, RFC 5322 atoms, a dotted domain). */
export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value);
}
