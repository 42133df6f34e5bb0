/**
 * The two 403s: authorization's (RBAC still rolling out: retried) and admission's (a policy refused the object:
 * permanent). The messages are the apiserver's own wording (k8s.io/apiserver's forbiddenMessage, the
 * ValidatingAdmissionPolicy and webhook dispatchers, the ResourceQuota, PodSecurity and NamespaceLifecycle plugins).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdmissionDeniedError, apiErrorFrom, ForbiddenError, isTransient } from "../../../kube/errors.ts";

/** A 403 as the apiserver sends it: a metav1.Status with reason Forbidden and the object's details. */
function forbidden(message: string, causes?: { reason: string; message: string }[]) {
  const status = {
    kind: "Status",
    status: "Failure",
    message,
    reason: "Forbidden",
    code: 403,
    details: { name: "web", group: "apps", kind: "deployments", ...(causes ? { causes } : {}) },
  };
  return apiErrorFrom(403, status, "PATCH /apis/apps/v1/namespaces/shop/deployments/web: HTTP 403");
}

describe("a 403 from authorization", () => {
  for (const [what, message] of [
    [
      "RBAC, a namespaced resource",
      'deployments.apps "web" is forbidden: User "system:serviceaccount:myapp-system:myapp-operator" cannot patch ' +
        'resource "deployments" in API group "apps" in the namespace "shop"',
    ],
    [
      "RBAC, cluster scope, with the authorizer's reason",
      'storageclasses.storage.k8s.io is forbidden: User "system:serviceaccount:a:b" cannot list resource ' +
        '"storageclasses" in API group "storage.k8s.io" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
    ],
    ["a non-resource URL", 'forbidden: User "system:anonymous" cannot get path "/metrics"'],
    [
      "OwnerReferencesPermissionEnforcement, which quotes authorization",
      'deployments.apps "web" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource ' +
        'you can\'t set finalizers on: User "system:serviceaccount:a:b" cannot update resource ' +
        '"myappinstances/finalizers" in API group "example.com" in the namespace "shop", <nil>',
    ],
  ] as const) {
    it(`is a ForbiddenError, not admission's: ${what}`, () => {
      const error = forbidden(message);
      assert.ok(error instanceof ForbiddenError);
      assert.ok(!(error instanceof AdmissionDeniedError));
      assert.equal(error.message, message);
    });
  }

  it("is assumed for a 403 without a Status (a proxy's): nothing says admission refused the object", () => {
    const error = apiErrorFrom(403, undefined, "GET /api/v1/namespaces: HTTP 403");
    assert.ok(error instanceof ForbiddenError);
    assert.ok(!(error instanceof AdmissionDeniedError));
  });

  it("and NamespaceLifecycle's 403 for a namespace being deleted is not a verdict on the object", () => {
    const error = forbidden(
      'deployments.apps "web" is forbidden: unable to create new content in namespace shop because it is being terminated',
      [{ reason: "NamespaceTerminating", message: "namespace shop is being terminated" }],
    );
    assert.ok(!(error instanceof AdmissionDeniedError));
  });
});

describe("a 403 from admission", () => {
  for (const [what, message] of [
    [
      "a ValidatingAdmissionPolicy",
      "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest' denied " +
        "request: images must be pinned",
    ],
    [
      "a webhook",
      'admission webhook "validate.kyverno.svc" denied the request: policy require-labels: label app is required',
    ],
    [
      "a ResourceQuota",
      'persistentvolumeclaims "data-web-0" is forbidden: exceeded quota: storage, requested: requests.storage=2Gi, ' +
        "used: requests.storage=9Gi, limited: requests.storage=10Gi",
    ],
    [
      "PodSecurity",
      'pods "web-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container ' +
        '"app" must set securityContext.runAsNonRoot=true)',
    ],
    ["a LimitRange", 'pods "web-0" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi'],
  ] as const) {
    it(`is an AdmissionDeniedError with the admission's message, and not transient: ${what}`, () => {
      const error = forbidden(message);
      assert.ok(error instanceof AdmissionDeniedError);
      assert.ok(error instanceof ForbiddenError, "still a 403 Forbidden for those who only ask that");
      assert.equal(error.status, 403);
      assert.equal(error.message, message);
      assert.equal(isTransient(error), false);
    });
  }
});
