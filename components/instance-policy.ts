/**
 * The platform policy's rules that need nothing but the instance itself, as a ValidatingAdmissionPolicy: allowed
 * image registries, the largest replicas and the largest volume of one instance. The apiserver evaluates them in
 * its own process, so a write they judge costs no call to the operator's webhook (webhooks.ts calls it only for
 * what CEL cannot see: a StorageClass, a chart, a namespace's budget), and they hold while no operator replica runs.
 * The operator's webhook judges the same rules when it is called (operator/admission/validate.ts), in words that
 * also quote the value; the e2e test holds the two to the same verdicts on a table of image references.
 *
 * A policy and its binding per installation, with the webhooks' scope (webhooks.ts `instanceAdmissionScope`):
 * the same namespaces, not the operator's own writes nor kube-system's (but for the autoscaler's scale writes), only
 * writes that change `spec` (and `kubectl scale`). Not CRD validation rules, although those would cost less per
 * write: the CRD is shared by every installation on the cluster, a policy is not. An UPDATE is judged only on what it changes: an image it
 * keeps, replicas it does not raise, a volume size it keeps pass a policy tightened since. No rule set, no policy.
 */
import { group, plural } from "../api/index.ts";
import { allowedImagesPattern } from "./allowed-images-pattern.ts";
import type { ValidatingAdmissionPolicyBindingManifest, ValidatingAdmissionPolicyManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";
import { allOf, instanceAdmissionScope } from "./webhooks.ts";
import { celString } from "../api/cel-string.ts";

/** The policy and its binding, or undefined when the platform sets none of these rules (or has no webhooks). */
export function instancePolicy(
  settings: OperatorSettings,
): { policy: ValidatingAdmissionPolicyManifest; binding: ValidatingAdmissionPolicyBindingManifest } | undefined {
  const policy = settings.policy;
  if (!settings.webhooks.enabled || !policy) return undefined;
  const validations = [
    ...(policy.allowedRegistries.length > 0 ? [registryRule(policy.allowedRegistries)] : []),
    ...(policy.maxReplicas !== undefined ? [replicasRule(policy.maxReplicas)] : []),
    ...(policy.maxStorage !== undefined ? [storageRule(policy.maxStorage)] : []),
  ];
  if (validations.length === 0) return undefined;
  const names = operatorObjectNames(settings);
  const scope = instanceAdmissionScope(settings);
  // What a policy costs a write is mostly the apiserver's, per program and per filter: it builds an activation (the
  // request and namespace converted by reflection) for the matchConditions, the validations and the messages alike,
  // and evaluates every messageExpression on every write, refused or not. So the scope is in each rule rather than a
  // matchCondition, and the messages are static (the webhook's name the value too; these name the field, rule and limit).
  const inScope = allOf("in-scope", scope.clauses).expression;
  return {
    policy: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: objectMeta(settings, names.instancePolicy),
      spec: {
        // A rule that cannot be evaluated refuses: a policy is no policy if an odd value slips past it.
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [group],
              apiVersions: ["v1"],
              operations: ["CREATE", "UPDATE"],
              resources: [plural, `${plural}/scale`],
            },
          ],
        },
        // The rule first: a write it admits, the common case, never evaluates the scope.
        validations: validations.map((rule) => ({ ...rule, expression: `${rule.expression} || !(${inScope})` })),
      },
    },
    binding: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: objectMeta(settings, names.instancePolicy),
      spec: {
        policyName: names.instancePolicy,
        validationActions: ["Deny"],
        matchResources: { namespaceSelector: scope.namespaceSelector },
      },
    },
  };
}

/** A write of the instance itself (a Scale has no image or storage); the apiserver leaves the field out when empty. */
const isInstance = "(!has(request.subResource) || request.subResource == '')";
/** An UPDATE, with the stored version's spec to compare against (of the instance or its Scale). */
const updating = "request.operation == 'UPDATE' && oldObject != null && has(oldObject.spec)";

/** A string literal for CEL (single-quoted, escaped). */

/** `entries`: normalised as the operator normalises its flag (platform-policy.ts reads both alike). */
function registryRule(entries: readonly string[]) {
  // One match against a pattern compiled with the policy, not a normalisation of the name in CEL.
  const { pattern, hub } = allowedImagesPattern(entries);
  const image = "object.spec.image";
  const allows = [
    ...(pattern !== undefined ? [`${image}.matches(${celRawString(pattern)})`] : []),
    ...(hub !== undefined ? [`(!${image}.startsWith('localhost/') && ${image}.matches(${celRawString(hub)}))`] : []),
  ];
  return {
    expression:
      `!(${isInstance}) || (${updating} && has(oldObject.spec.image) && has(object.spec.image) && ` +
      `oldObject.spec.image == ${image}) || ` +
      `(has(object.spec) && has(${image}) && (${allows.length > 0 ? allows.join(" || ") : "false"}))`,
    message:
      "spec.image is not from a registry the platform allows (only " +
      `${entries.join(", ")}, --allowed-registries; names as Docker reads them: nginx is docker.io/library/nginx); ` +
      "use an image from one of them",
    reason: "Forbidden",
  };
}

/** A raw string literal for CEL (no escapes: a pattern's backslashes stay as they are). */
function celRawString(text: string): string {
  if (text.includes("'")) throw new Error(`a pattern with a quote cannot be a raw CEL string: ${text}`);
  return `r'${text}'`;
}

function replicasRule(max: number) {
  return {
    expression:
      `!has(object.spec) || !has(object.spec.replicas) || object.spec.replicas <= ${max} || ` +
      `(${updating} && has(oldObject.spec.replicas) && object.spec.replicas <= oldObject.spec.replicas)`,
    message: `spec.replicas is more than the platform allows per instance (at most ${max}, --max-replicas)`,
    reason: "Forbidden",
  };
}

function storageRule(max: string) {
  return {
    expression:
      `!(${isInstance}) || !has(object.spec) || !has(object.spec.storage) || ` +
      `quantity(object.spec.storage).compareTo(quantity(${celString(max)})) <= 0 || ` +
      `(${updating} && has(oldObject.spec.storage) && oldObject.spec.storage == object.spec.storage)`,
    message: `spec.storage is more than the platform allows per volume (at most ${max}, --max-storage)`,
    reason: "Forbidden",
  };
}
