/**
 * The Kubernetes name of an instance whose args leave `name` out. Pulumi's usual auto-name is the resource name
 * plus a random suffix; ours derives the suffix from the stack and the resource name instead, so `pulumi preview`
 * shows the very name `pulumi up` will create, and two stacks that declare the same resource in one namespace
 * still get different objects. Once created, the name is kept in state (see check.ts), so it never drifts.
 */
import { createHash } from "node:crypto";

const suffixLength = 8;
// At most 52 characters in all: the operator then names the workload, Service and pods after the instance
// verbatim (it hashes longer names), so `kubectl get pods` shows the name users see in Pulumi.
const maxNameLength = 52;
const maxPrefixLength = maxNameLength - suffixLength - 1;

/** `<sanitised logical name>-<8 hex digits of sha256(owner/logicalName)>`: a DNS-1035 label of at most 52. */
export function autoName(logicalName: string, owner: string): string {
  const suffix = createHash("sha256").update(`${owner}/${logicalName}`).digest("hex").slice(0, suffixLength);
  let prefix = logicalName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^[^a-z]+/, "");
  prefix = prefix.slice(0, maxPrefixLength).replace(/-+$/, "");
  return prefix ? `${prefix}-${suffix}` : `myapp-${suffix}`;
}
