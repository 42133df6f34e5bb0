/**
 * Admission's 403 is a verdict, not a blip: a ValidatingAdmissionPolicy of the cluster (not the operator's) that
 * refuses an instance's Deployment makes the instance Degraded at once, reason ChildRejected, with the policy's
 * own message, and `pulumi up`'s wait ends on it instead of running out its timeout (provider/waiting/readiness.ts
 * fails on Degraded). An instance the policy admits in the same namespace is unaffected.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AdmissionDeniedError, type KubeObject } from "../../kube/index.ts";
import type { LiveInstance } from "../../provider/manifest.ts";
import { assessReadiness } from "../../provider/waiting/readiness.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  isCurrent,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();

test("a child refused by a cluster's admission policy is Degraded with ChildRejected and the policy's message", async (t) => {
  const namespace = await testNamespace(t, client, "op-admission");
  const name = `deny-unapproved-${namespace}`.slice(0, 63);
  const policy = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"] },
        ],
      },
      validations: [
        {
          expression: "object.spec.template.spec.containers.all(c, !c.image.startsWith('registry.example/unapproved'))",
          message: "images from registry.example/unapproved are not approved in this cluster",
          reason: "Forbidden",
        },
      ],
    },
  } as unknown as KubeObject;
  const binding = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ["Deny"],
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } } },
    },
  } as unknown as KubeObject;
  await client.create(policy);
  t.after(() => client.delete(policy.apiVersion, policy.kind, name).then(() => undefined));
  await client.create(binding);
  t.after(() => client.delete(binding.apiVersion, binding.kind, name).then(() => undefined));
  // The apiserver picks a new policy up within a moment: wait until it refuses a dry-run.
  const probe = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "probe", namespace },
    spec: {
      selector: { matchLabels: { app: "probe" } },
      template: {
        metadata: { labels: { app: "probe" } },
        spec: { containers: [{ name: "app", image: "registry.example/unapproved:1" }] },
      },
    },
  } as unknown as KubeObject;
  const refusal = await waitFor(
    "the policy to refuse a dry-run",
    () =>
      client.create(probe, { dryRun: true }).then(
        () => undefined,
        (error: unknown) => (error instanceof AdmissionDeniedError ? error : Promise.reject(error)),
      ),
    { timeoutMs: 60_000 },
  );
  assert.equal(refusal.status, 403);
  t.diagnostic(`the apiserver's 403: ${JSON.stringify({ reason: refusal.reason, message: refusal.message })}`);

  const operator = await startOperator(t, { namespaces: [namespace], leaderElection: false });
  await createInstance(client, namespace, "approved", { image: "registry.example/approved:1" });
  const started = Date.now();
  await createInstance(client, namespace, "refused", { image: "registry.example/unapproved:1" });

  const refused = await waitForInstance(
    client,
    namespace,
    "refused",
    "Degraded with ChildRejected",
    (instance) => isCurrent(instance) && conditionOf(instance, "Degraded")?.reason === "ChildRejected",
    60_000,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${operator.logTail()}`);
  });
  t.diagnostic(`Degraded ${((Date.now() - started) / 1000).toFixed(1)} s after create`);
  const degraded = conditionOf(refused, "Degraded");
  assert.equal(degraded?.status, "True");
  assert.match(
    degraded?.message ?? "",
    new RegExp(
      `ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: images from registry\\.example/unapproved are not approved`,
    ),
  );
  assert.equal(conditionOf(refused, "Stalled")?.reason, "ChildRejected", "a permanent verdict, not TransientFailure");
  // What the provider's wait makes of it: failed, with the reason (pulumi up ends here, not at its timeout).
  const verdict = assessReadiness(refused as unknown as LiveInstance, refused.metadata.generation ?? 0);
  assert.equal(verdict.state, "failed");
  assert.ok(verdict.state === "failed" && verdict.reason === "ChildRejected");

  await waitForInstance(client, namespace, "approved", "Ready", isReadyAtSpec, 120_000);
});
