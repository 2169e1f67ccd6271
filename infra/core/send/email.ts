/** Email address rules, shared by the stack config, the recipient reader, the importer and the journeys. */

// SES takes 7-bit ASCII addresses (no SMTPUTF8; an international domain must be given in Punycode): RFC 5322 atoms.
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** Whether SES takes `value` as an address (7-bit ASCII, RFC 5322 atoms, a dotted domain). */
export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value);
}

/**
 * The address of a mailbox as a header writes it (RFC 5322 name-addr): `"Ann" <ann@example.com>` → `ann@example.com`,
 * a bare address as it is (trimmed). The address is in the last `<…>`: a quoted display name may hold `<`, an address
 * of atoms cannot. What comes back is not checked: isEmailAddress says whether it is an address.
 */
export function mailboxAddress(mailbox: string): string {
  const text = mailbox.trim();
  const open = text.lastIndexOf("<");
  return text.endsWith(">") && open >= 0 ? text.slice(open + 1, -1).trim() : text;
}
