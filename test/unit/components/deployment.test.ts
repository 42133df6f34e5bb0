import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { operatorDeployment, operatorUid } from "../../../components/deployment.ts";
import { selectorLabels } from "../../../components/metadata.ts";
import { operatorFlags } from "../../../components/operator-flags.ts";
import { settingsFor } from "./settings-fixture.ts";

function podSpecOf(args: Parameters<typeof settingsFor>[0] = {}) {
  const deployment = operatorDeployment(settingsFor(args));
  assert.ok(deployment?.spec?.template.spec, "an in-cluster operator has a Deployment");
  return deployment.spec.template.spec;
}

describe("operatorDeployment", () => {
  it("meets every check of the Pod Security 'restricted' level", () => {
    // GIVEN the default settings WHEN the pod spec is built
    const pod = podSpecOf();
    // THEN the pod and each container satisfy restricted (v1.36): non-root, no escalation, no capabilities,
    // RuntimeDefault seccomp, no host namespaces, ports or hostPath volumes.
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.equal(pod.securityContext?.runAsUser, operatorUid);
    assert.notEqual(pod.securityContext?.runAsUser, 0);
    assert.equal(pod.securityContext?.seccompProfile?.type, "RuntimeDefault");
    assert.equal(pod.hostNetwork ?? false, false);
    assert.equal(pod.hostPID ?? false, false);
    assert.equal(pod.hostIPC ?? false, false);
    for (const volume of pod.volumes ?? []) assert.equal(volume.hostPath, undefined, volume.name);
    for (const container of pod.containers) {
      const sc = container.securityContext;
      assert.equal(sc?.allowPrivilegeEscalation, false);
      assert.equal(sc?.privileged ?? false, false);
      assert.equal(sc?.readOnlyRootFilesystem, true);
      assert.deepEqual(sc?.capabilities, { drop: ["ALL"] });
      for (const port of container.ports ?? []) assert.equal(port.hostPort, undefined);
    }
  });

  it("probes the operator's health endpoints and exposes metrics", () => {
    const [container] = podSpecOf().containers;
    assert.deepEqual(container?.livenessProbe?.httpGet, { path: "/healthz", port: "health" });
    assert.deepEqual(container?.readinessProbe?.httpGet, { path: "/readyz", port: "health" });
    assert.deepEqual(
      container?.ports?.map((port) => [port.name, port.containerPort]),
      [
        ["metrics", 8080],
        ["health", 8081],
        ["webhook", 9443],
      ],
    );
  });

  it("passes the operator's flags, and runs as the component's ServiceAccount", () => {
    const settings = settingsFor({ watchNamespaces: ["a", "b"], logLevel: "debug", concurrency: 4 });
    const pod = operatorDeployment(settings)?.spec?.template.spec;
    assert.equal(pod?.serviceAccountName, "myapp-operator");
    assert.deepEqual(pod?.containers[0]?.args, [
      "--namespaces=a,b",
      "--metrics-bind-address=:8080",
      "--metrics-secure",
      "--health-probe-bind-address=:8081",
      "--log-level=debug",
      "--concurrency=4",
      "--webhook-bind-address=:9443",
      "--webhook-cert-secret=myapp-system/myapp-operator-webhook-cert",
      "--webhook-configuration=myapp-operator",
      "--webhook-hosts=myapp-operator-webhook.myapp-system.svc,myapp-operator-webhook.myapp-system.svc.cluster.local",
    ]);
  });

  it("with 2 replicas: leader election, rolling updates and spreading; with 1: Recreate, no election", () => {
    // GIVEN two replicas
    const ha = operatorDeployment(settingsFor({ replicas: 2 }));
    // THEN
    assert.deepEqual(ha?.spec?.template.spec?.containers[0]?.args?.slice(0, 3), [
      "--leader-elect",
      "--leader-election-namespace=myapp-system",
      "--leader-election-id=myapp-operator-leader",
    ]);
    assert.equal(ha?.spec?.strategy?.type, "RollingUpdate");
    assert.equal(ha?.spec?.template.spec?.topologySpreadConstraints?.length, 1);
    // GIVEN one replica
    const single = operatorDeployment(settingsFor({ replicas: 1 }));
    // THEN two operators never overlap during an update
    assert.equal(single?.spec?.strategy?.type, "Recreate");
    assert.ok(!single?.spec?.template.spec?.containers[0]?.args?.includes("--leader-elect"));
  });

  it("selects its pods with labels the user cannot override, and carries the user's extra metadata", () => {
    const settings = settingsFor({ labels: { team: "platform" }, annotations: { "example.com/owner": "ops" } });
    const deployment = operatorDeployment(settings);
    assert.deepEqual(deployment?.spec?.selector.matchLabels, selectorLabels(settings));
    assert.equal(deployment?.metadata?.labels?.team, "platform");
    assert.equal(deployment?.spec?.template.metadata?.labels?.team, "platform");
    assert.equal(deployment?.metadata?.annotations?.["example.com/owner"], "ops");
  });

  it("sizes the V8 heap from the memory limit less K helm renders: 3/4 of the rest for the old generation, small semi-spaces", () => {
    const env = (resources?: NonNullable<Parameters<typeof settingsFor>[0]>["resources"]) =>
      podSpecOf(resources ? { resources } : {}).containers[0]?.env?.find((e) => e.name === "NODE_OPTIONS")?.value;
    const always = "--max-semi-space-size=1 --disable-proto=throw";
    assert.equal(
      env(),
      `--max-old-space-size=624 ${always}`,
      "the default 1536Mi limit, less 2 renders of 256 MiB, the parsing thread's 128 MiB and the review thread's 64",
    );
    assert.equal(env({ limits: { memory: "2Gi" } }), `--max-old-space-size=1008 ${always}`);
    assert.equal(env({ limits: { memory: "1500M" } }), `--max-old-space-size=544 ${always}`);
    assert.equal(
      env({ requests: { memory: "512Mi" } }),
      always,
      "no limit: Node sizes the old generation from the node",
    );
  });

  it("runs Node with two malloc arenas, not one per thread", () => {
    const env = podSpecOf({}).containers[0]?.env ?? [];
    assert.deepEqual(
      env.filter((e) => e.name === "MALLOC_ARENA_MAX"),
      [{ name: "MALLOC_ARENA_MAX", value: "2" }],
    );
  });

  it("is not built when the operator runs outside the cluster", () => {
    assert.equal(operatorDeployment(settingsFor({ operatorPlacement: "external" })), undefined);
  });
});

describe("operatorFlags", () => {
  it("lets a local process choose its own bind addresses", () => {
    const flags = operatorFlags(settingsFor(), {
      metricsBindAddress: "127.0.0.1:18080",
      healthProbeBindAddress: "127.0.0.1:18081",
    });
    assert.ok(flags.includes("--metrics-bind-address=127.0.0.1:18080"));
    assert.ok(flags.includes("--health-probe-bind-address=127.0.0.1:18081"));
    assert.ok(!flags.some((flag) => flag.startsWith("--namespaces")), "cluster-wide passes no namespace list");
    assert.ok(flags.includes("--metrics-secure"), "in-cluster settings: /metrics behind TokenReview + SAR");
  });

  it("secures /metrics in-cluster only, unless told otherwise", () => {
    assert.ok(!operatorFlags(settingsFor({ operatorPlacement: "external" })).includes("--metrics-secure"));
    assert.ok(!operatorFlags(settingsFor(), { metricsSecure: false }).includes("--metrics-secure"));
  });
});
