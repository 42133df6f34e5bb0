/** The operator's identity: every permission in rbac-rules.ts is bound to this ServiceAccount. */
import type { ServiceAccountManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";

export function operatorServiceAccount(settings: OperatorSettings): ServiceAccountManifest {
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: objectMeta(settings, operatorObjectNames(settings).serviceAccount, settings.namespace),
    // The operator needs its token to reach the apiserver; Pod Security "restricted" does not forbid that.
    automountServiceAccountToken: true,
  };
}
