/**
 * Kubernetes name syntaxes (k8s.io/apimachinery/pkg/util/validation), as anchored pattern strings that read
 * the same in ECMAScript and Go RE2.
 */

/** RFC 1123 subdomain: object names, StorageClass names. */
export const dns1123SubdomainPattern = "^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$";

/** Longest RFC 1123 subdomain. */
export const maxDns1123SubdomainLength = 253;

/** RFC 1123 label: namespace names. */
export const dns1123LabelPattern = "^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$";

/** Longest RFC 1123 label. */
export const maxDns1123LabelLength = 63;

// A label value, or the name part of a qualified name: alphanumerics at both ends, '-', '_', '.' inside.
const qualifiedNamePart = "[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?";

/** A label value: empty, or at most 63 characters of a qualified name's name part. */
export const labelValuePattern = `^(?:${qualifiedNamePart})?$`;

const qualifiedNameRegExp = new RegExp(`^(?:([^/]+)/)?(${qualifiedNamePart})$`);
const dns1123SubdomainRegExp = new RegExp(dns1123SubdomainPattern);
const dns1123LabelRegExp = new RegExp(dns1123LabelPattern);

/** What an RFC 1123 subdomain is, for messages. */
export const dns1123SubdomainRule = `at most ${maxDns1123SubdomainLength} lower-case letters, digits, '-' and '.', starting and ending with a letter or digit`;

/** What an RFC 1123 label is, for messages. */
export const dns1123LabelRule = `at most ${maxDns1123LabelLength} lower-case letters, digits and '-', starting and ending with a letter or digit`;

/** An RFC 1123 subdomain, length included: object names (a Lease, a Secret, an issuer). */
export function isDns1123Subdomain(name: string): boolean {
  return name.length <= maxDns1123SubdomainLength && dns1123SubdomainRegExp.test(name);
}

/** An RFC 1123 label, length included: namespace names. */
export function isDns1123Label(name: string): boolean {
  return name.length <= maxDns1123LabelLength && dns1123LabelRegExp.test(name);
}

/** A label or annotation key: `[prefix/]name`, the prefix a DNS subdomain, the name at most 63 characters. */
export function isQualifiedName(key: string): boolean {
  const match = qualifiedNameRegExp.exec(key);
  if (!match) return false;
  const prefix = match[1];
  return prefix === undefined || isDns1123Subdomain(prefix);
}
