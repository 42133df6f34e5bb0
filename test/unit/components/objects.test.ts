import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { metricsEndpoint, metricsService } from "../../../components/metrics-service.ts";
import { operatorNamespace, restrictedPodSecurityLabels } from "../../../components/namespace.ts";
import { operatorPodDisruptionBudget } from "../../../components/pod-disruption-budget.ts";
import { operatorServiceAccount } from "../../../components/service-account.ts";
import { settingsFor } from "./settings-fixture.ts";

describe("operatorNamespace", () => {
  it("enforces Pod Security 'restricted' and carries the user's labels", () => {
    const namespace = operatorNamespace(settingsFor({ namespace: "ops", labels: { team: "platform" } }));
    assert.equal(namespace?.metadata?.name, "ops");
    assert.equal(namespace?.metadata?.labels?.["pod-security.kubernetes.io/enforce"], "restricted");
    assert.equal(namespace?.metadata?.labels?.team, "platform");
    for (const [key, value] of Object.entries(restrictedPodSecurityLabels)) {
      assert.equal(namespace?.metadata?.labels?.[key], value, key);
    }
  });

  it("is not built for an existing namespace", () => {
    assert.equal(operatorNamespace(settingsFor({ createNamespace: false })), undefined);
  });
});

describe("operatorServiceAccount", () => {
  it("lives in the operator's namespace", () => {
    const account = operatorServiceAccount(settingsFor({ namespace: "ops" }));
    assert.deepEqual([account.metadata?.name, account.metadata?.namespace], ["myapp-operator", "ops"]);
  });
});

describe("metricsService", () => {
  it("points at the metrics port of the operator's pods (HTTPS), and names its in-cluster URL", () => {
    const settings = settingsFor();
    const service = metricsService(settings);
    assert.deepEqual(service?.spec?.ports, [
      { name: "metrics", port: 8080, targetPort: "metrics", protocol: "TCP", appProtocol: "https" },
    ]);
    assert.deepEqual(service?.spec?.selector, {
      "app.kubernetes.io/name": "myapp-operator",
      "app.kubernetes.io/instance": "myapp-operator",
    });
    assert.equal(metricsEndpoint(settings), "https://myapp-operator-metrics.myapp-system.svc:8080/metrics");
  });

  it("has neither Service nor URL for an external operator", () => {
    const settings = settingsFor({ operatorPlacement: "external" });
    assert.equal(metricsService(settings), undefined);
    assert.equal(metricsEndpoint(settings), undefined);
  });
});

describe("operatorPodDisruptionBudget", () => {
  it("keeps one replica of several; none for one replica, where it would block every drain", () => {
    assert.deepEqual(operatorPodDisruptionBudget(settingsFor({ replicas: 2 }))?.spec?.minAvailable, 1);
    assert.equal(operatorPodDisruptionBudget(settingsFor({ replicas: 1 })), undefined);
    assert.equal(operatorPodDisruptionBudget(settingsFor({ operatorPlacement: "external" })), undefined);
  });
});
