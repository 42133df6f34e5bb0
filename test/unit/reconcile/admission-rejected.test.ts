/**
 * A child that admission refuses (403 from a ValidatingAdmissionPolicy, a webhook, a quota) is a permanent
 * ChildRejected with admission's message, for the built-in template and for a chart; authorization's 403 (RBAC
 * still rolling out) stays transient. The errors come through kube/errors.ts's classifier as the client's would.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCondition, renderableChartKinds } from "../../../api/index.ts";
import { apiErrorFrom } from "../../../kube/index.ts";
import type { ChartRenderer } from "../../../chart/index.ts";
import { isTransientFailure } from "../../../operator/reconcile/errors.ts";
import { PermanentError, TransientError } from "../../../operator/reconcile/index.ts";
import { harness, type Harness } from "./setup.ts";

const denied = (message: string) => apiErrorFrom(403, { message, reason: "Forbidden", code: 403 }, "PATCH: HTTP 403");
const policyDenial = () =>
  denied(
    "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'pinned-images' with binding 'pinned-images' " +
      "denied request: images must be pinned by digest",
  );
const rbacDenial = () =>
  denied(
    'deployments.apps "web" is forbidden: User "system:serviceaccount:myapp-system:myapp-operator" cannot patch ' +
      'resource "deployments" in API group "apps" in the namespace "default"',
  );
const condition = (h: Harness, type: string) => findCondition(h.cluster.instance("web")?.status?.conditions, type);

describe("a child refused by admission", () => {
  it("built-in template: Degraded, reason ChildRejected, with the policy's message, and a PermanentError", async () => {
    // GIVEN an admission policy that refuses the instance's Deployment
    const h = harness();
    h.cluster.createInstance("web", { image: "nginx:1.27" });
    h.cluster.failNext("apply", policyDenial(), "Deployment");
    // WHEN reconciled THEN no retry with backoff: the runtime waits for a change of the instance
    await assert.rejects(
      h.run(),
      (error: unknown) => error instanceof PermanentError && error.reason === "ChildRejected",
    );
    assert.equal(condition(h, "Degraded")?.status, "True");
    assert.equal(condition(h, "Degraded")?.reason, "ChildRejected");
    assert.match(
      condition(h, "Degraded")?.message ?? "",
      /rejected a child .*ValidatingAdmissionPolicy 'pinned-images' .* images must be pinned by digest/,
    );
    assert.equal(condition(h, "Ready")?.status, "False");
  });

  it("chart: Degraded, reason ChildRejected, with the webhook's message", async () => {
    const h = harness();
    const renderer: ChartRenderer = {
      render: async () => ({
        manifest:
          "---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata: {}\n",
        hooks: [],
        crds: [],
      }),
    };
    Object.assign(h.deps, {
      chart: { renderer, fetchChart: async () => new Uint8Array([1]), allowedKinds: renderableChartKinds },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    h.cluster.failNext(
      "apply",
      denied('admission webhook "validate.kyverno.svc" denied the request: label team is required'),
      "ConfigMap",
    );
    await assert.rejects(
      h.run(),
      (error: unknown) => error instanceof PermanentError && error.reason === "ChildRejected",
    );
    assert.equal(condition(h, "Degraded")?.reason, "ChildRejected");
    assert.match(condition(h, "Degraded")?.message ?? "", /admission webhook "validate\.kyverno\.svc" denied/);
  });

  it("is never counted as transient, even wrapped by the reconcile; RBAC's 403 is", () => {
    assert.equal(isTransientFailure(new TransientError("reconcile default/web", { cause: policyDenial() })), false);
    assert.equal(isTransientFailure(new TransientError("reconcile default/web", { cause: rbacDenial() })), true);
  });
});

describe("a child refused by RBAC", () => {
  it("is retried (TransientError) and, once stalled, reported as TransientFailure, never Degraded", async () => {
    const h = harness();
    h.cluster.createInstance("web", { image: "nginx:1.27" });
    h.cluster.failNext("apply", rbacDenial(), "Deployment");
    const failure = await h.run().then(
      () => assert.fail("the reconcile should fail"),
      (error: unknown) => error,
    );
    assert.ok(failure instanceof TransientError, String(failure));
    assert.notEqual(condition(h, "Degraded")?.reason, "ChildRejected");
    await h.stalled(failure);
    assert.equal(condition(h, "Stalled")?.reason, "TransientFailure");
    assert.notEqual(condition(h, "Degraded")?.status, "True");
  });
});
