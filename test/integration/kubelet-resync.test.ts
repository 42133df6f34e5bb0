/**
 * The chaos harness's stand-in for a kubelet's sync (test/chaos/kubelet-resync.ts) against the real local cluster:
 * kwok drops a pod write that failed with anything but a refused connection, a timeout, a 503 or a 429, and acts on
 * the pod again only once the pod changes. Here kwok's delete of a terminating pod is refused once (a
 * ValidatingAdmissionPolicy on deletes without a grace period, as kwok's are), so the pod stays; the resync's
 * annotation is what gets it deleted.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { it } from "node:test";
import { KubeletResync, type NodePod } from "../chaos/kubelet-resync.ts";
import { adminClient, kubectl, testNamespace, waitFor } from "../support/cluster.ts";

const client = adminClient();

it("a terminating pod kwok failed to delete is deleted once the resync touches it", async (t) => {
  // GIVEN forced deletes (kwok's) of this test's pods refused, and a pod Running on a node
  const run = randomBytes(3).toString("hex");
  const label = { "kubelet-resync-test": run };
  const policy = `kubelet-resync-test-${run}`;
  const namespace = await testNamespace(t, client, "resync");
  const pod = (name: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: label },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: "app", image: "nginx:1.27" }] },
  });
  const getPod = (name: string) => client.find<NodePod>("v1", "Pod", name, namespace);
  const unbind = async () => {
    await client.delete("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", policy);
    await client.delete("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", policy);
  };
  t.after(async () => {
    await unbind();
    // Whatever happened, nothing may keep the namespace Terminating.
    await kubectl("delete", "pod", "--all", "-n", namespace, "--grace-period=0", "--force").catch(() => undefined);
  });
  // A forced delete of the probe pod, dry-run: refused while the policy is in effect.
  await client.create(pod("probe"));
  const forcedDeleteRefused = () =>
    kubectl("delete", "pod", "probe", "-n", namespace, "--grace-period=0", "--force", "--dry-run=server").then(
      () => false,
      () => true,
    );
  const bind = async () => {
    await client.create({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: policy },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["pods"] }],
          objectSelector: { matchLabels: label },
        },
        validations: [
          {
            expression:
              "!has(request.options) || !has(request.options.gracePeriodSeconds) || " +
              "request.options.gracePeriodSeconds != 0",
            message: "refused for the test: a forced delete",
          },
        ],
      },
    });
    await client.create({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name: policy },
      spec: { policyName: policy, validationActions: ["Deny"] },
    });
    await waitFor("the policy in effect", async () => ((await forcedDeleteRefused()) ? true : undefined));
  };
  // How often the apiserver has refused a request by the policy (the probe's dry-runs so far), from its metrics
  const refusals = async () => {
    const metrics = await client.raw("/metrics");
    const series = metrics
      .split("\n")
      .find(
        (line) =>
          line.startsWith("apiserver_validating_admission_policy_check_duration_seconds_count{") &&
          line.includes('enforcement_action="deny"') &&
          line.includes(`policy="${policy}"`),
      );
    return Number(series?.split(" ").at(-1) ?? 0);
  };
  /**
   * A pod kwok was refused deleting, still there a sync period past its deadline, or undefined when kwok deleted it
   * after all (it acts on a pod again when the pod changes, and a status write of its own can land after the
   * refusal: a race this test does not control, so the setup is tried again with a new pod).
   */
  const stuckPod = async (name: string): Promise<string | undefined> => {
    await bind();
    const refusedBefore = await refusals();
    await client.create(pod(name));
    await waitFor("the pod Running", async () =>
      (await getPod(name))?.status?.phase === "Running" ? true : undefined,
    );
    // WHEN it is deleted: kwok's delete is refused ...
    await client.delete("v1", "Pod", name, namespace);
    const deadline = Date.parse((await getPod(name))?.metadata.deletionTimestamp ?? "");
    assert.ok(!Number.isNaN(deadline), "the pod is terminating");
    await waitFor("kwok's delete refused", async () => ((await refusals()) > refusedBefore ? true : undefined));
    // ... and then allowed again
    await unbind();
    await waitFor("the policy out of effect", async () => ((await forcedDeleteRefused()) ? undefined : true));
    // THEN the pod stays: kwok does not try again by itself ...
    await waitFor("a sync period past the deadline", async () => (Date.now() > deadline + 2_000 ? true : undefined));
    return (await getPod(name)) ? name : undefined;
  };
  let stuck: string | undefined;
  for (let attempt = 1; attempt <= 3 && stuck === undefined; attempt++) stuck = await stuckPod(`stuck-${attempt}`);
  assert.ok(stuck, "in three tries, a pod kwok failed to delete stayed there");

  // ... until the resync touches it: then kwok deletes it
  const resync = new KubeletResync(client, { syncMs: 1_000, namespace });
  await resync.round();
  assert.equal(resync.touched, 1, "the one waiting pod touched, not the running probe");
  await waitFor("the touched pod deleted", async () => ((await getPod(stuck)) === undefined ? true : undefined));
});
