/**
 * The name the operator gives an instance's Service. The provider may not import operator/ (layering), so this is
 * a copy of operator/desired/names.ts `serviceName`; test/unit/provider/service-name.test.ts pins the two together.
 */
import { createHash } from "node:crypto";

const maxLabelLength = 63;
const hashLength = 8;
const dns1035Label = /^[a-z](?:[-a-z0-9]*[a-z0-9])?$/;

/** The instance name when it is a valid Service name; otherwise a sanitised prefix plus a hash of the name. */
export function serviceNameFor(instanceName: string): string {
  if (instanceName.length <= maxLabelLength && dns1035Label.test(instanceName)) return instanceName;
  let head = instanceName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+/, "");
  if (!/^[a-z]/.test(head)) head = `x-${head}`;
  head = head.slice(0, maxLabelLength - hashLength - 1).replace(/-+$/, "");
  const hash = createHash("sha256").update(instanceName).digest("hex").slice(0, hashLength);
  return head ? `${head}-${hash}` : hash;
}
