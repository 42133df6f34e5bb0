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

/** A label or annotation key: `[prefix/]name`, the prefix a DNS subdomain, the name at most 63 characters. */
export function isQualifiedName(key: string): boolean {
  const match = qualifiedNameRegExp.exec(key);
  if (!match) return false;
  const prefix = match[1];
  return prefix === undefined || (prefix.length <= maxDns1123SubdomainLength && dns1123SubdomainRegExp.test(prefix));
}
