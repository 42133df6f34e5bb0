/**
 * Deterministic names for the children of an instance (the operator builds them; the provider reports them). Kubernetes limits most names and label values to 63
 * characters; an instance name may have 253. A name that does not fit is cut and gets a short hash of the full
 * name, so two long names that share a prefix still get different children (cdk8s's habit).
 */
import { createHash } from "node:crypto";

/** Longest DNS-1123 label: Service names, label values. */
export const maxLabelLength = 63;

/**
 * Longest workload name. A StatefulSet's pods carry the label `controller-revision-hash: <name>-<hash>`, whose
 * value must fit 63 characters with a hash of up to 10, so the apiserver accepts longer names that then fail.
 */
export const maxWorkloadNameLength = 52;

const hashLength = 8;
const dns1123Label = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const dns1035Label = /^[a-z](?:[-a-z0-9]*[a-z0-9])?$/;
const labelValuePattern = /^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** The first 8 hex digits of the SHA-256 of `text`: short, stable across releases and platforms. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, hashLength);
}

/** The Deployment or StatefulSet of an instance: both kinds share one name (they only coexist during a move). */
export function workloadName(instanceName: string): string {
  return boundedName(instanceName, maxWorkloadNameLength, false);
}

/** The Service of an instance: a DNS-1035 label, because Service names must start with a letter. */
export function serviceName(instanceName: string): string {
  return boundedName(instanceName, maxLabelLength, true);
}

/**
 * Where the instance answers inside the cluster: its Service's DNS name and port, `<service>.<namespace>.svc:<port>`
 * (`status.endpoint`, and the provider's `endpoint` output).
 */
export function serviceEndpoint(instanceName: string, namespace: string, port: number): string {
  return `${serviceName(instanceName)}.${namespace}.svc:${port}`;
}

/** Longest {@link serviceEndpoint}: a 63-character Service name and namespace, `.svc:` and a 5-digit port. */
export const maxServiceEndpointLength = 63 + 1 + 63 + ".svc:".length + 5;

/**
 * The headless Service that governs an instance's StatefulSet and gives each pod a DNS name
 * (`<pod>.<governing service>.<namespace>.svc`). Beside the instance's ClusterIP Service, which clients use; a
 * Service cannot become headless in place (clusterIP is immutable).
 */
export function governingServiceName(instanceName: string): string {
  return boundedName(`${instanceName}-pods`, maxLabelLength, true);
}

/** `text` as a label value (at most 63 characters, alphanumeric at both ends). */
export function labelValue(text: string): string {
  if (text.length <= maxLabelLength && labelValuePattern.test(text)) return text;
  const head = text
    .replace(/[^-A-Za-z0-9_.]+/g, "-")
    .slice(0, maxLabelLength - hashLength - 1)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return head ? `${head}-${shortHash(text)}` : shortHash(text);
}

/**
 * `text` when it is already a valid DNS label within `maxLength`; otherwise a lower-cased, sanitised prefix plus
 * `-<hash of text>`. Anything rewritten gets the hash, so a name used verbatim equals it only when chosen to, in
 * the same namespace: the live children of the other are then refused as not its own (ChildOwnedElsewhere); claims
 * kept from a deleted one would be found by that name, as they would by the same name.
 */
function boundedName(text: string, maxLength: number, startsWithLetter: boolean): string {
  const pattern = startsWithLetter ? dns1035Label : dns1123Label;
  if (text.length <= maxLength && pattern.test(text)) return text;
  let head = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+/, "");
  // "x-" keeps a name like "1st-app" readable where only a letter may come first.
  if (startsWithLetter && !/^[a-z]/.test(head)) head = `x-${head}`;
  head = head.slice(0, maxLength - hashLength - 1).replace(/-+$/, "");
  const hash = shortHash(text);
  return head ? `${head}-${hash}` : hash;
}
