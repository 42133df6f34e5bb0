/**
 * The namespace default of `spec.podSecurityLevel` as a MutatingAdmissionPolicy (Kubernetes 1.36+, where it is GA),
 * for `webhooks.defaults: "policy"` and, where the cluster serves it, `"auto"`: the apiserver applies the same default the operator's
 * mutating webhook would (operator/admission/mutate.ts `defaultsFor`; an integration test holds the two to the
 * same results on a table of writes), in its own process. A write it defaults costs no call to the operator, about a third of what the
 * webhook costs (bench/RESULTS.md, admission), and instances still get their default while no replica runs.
 *
 * Which writes get it is webhooks.ts `namespaceDefaultsScope`, shared with the webhook: the binding's
 * namespaceSelector picks the namespaces, the policy's matchConditions the writes. What is added is one JSON patch
 * operation, as the webhook answers. `reinvocationPolicy: Never`: nothing else here sets the field.
 */
import { group, plural } from "../api/index.ts";
import type { MutatingAdmissionPolicyBindingManifest, MutatingAdmissionPolicyManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";
import { namespaceDefaultLevel, namespaceDefaultsScope } from "./webhooks.ts";

/**
 * The policy and its binding, or undefined when no policy may give the defaults (`"webhook"`, or the webhooks off).
 * With `"auto"` the caller installs them only on a cluster that serves them (my-app-operator.ts).
 */
export function namespaceDefaultsPolicy(
  settings: OperatorSettings,
): { policy: MutatingAdmissionPolicyManifest; binding: MutatingAdmissionPolicyBindingManifest } | undefined {
  if (!settings.webhooks.enabled || settings.webhooks.defaults === "webhook") return undefined;
  const name = operatorObjectNames(settings).defaultsPolicy;
  const scope = namespaceDefaultsScope(settings);
  return {
    policy: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingAdmissionPolicy",
      metadata: objectMeta(settings, name),
      spec: {
        // As the webhook's failurePolicy: an instance that should run at Baseline is never admitted without it.
        failurePolicy: "Fail",
        reinvocationPolicy: "Never",
        matchConstraints: {
          resourceRules: [
            { apiGroups: [group], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: [plural] },
          ],
        },
        matchConditions: scope.matchConditions,
        mutations: [
          {
            patchType: "JSONPatch",
            jsonPatch: {
              expression: `[JSONPatch{op: "add", path: "/spec/podSecurityLevel", value: "${namespaceDefaultLevel}"}]`,
            },
          },
        ],
      },
    },
    binding: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingAdmissionPolicyBinding",
      metadata: objectMeta(settings, name),
      spec: { policyName: name, matchResources: { namespaceSelector: scope.namespaceSelector } },
    },
  };
}
