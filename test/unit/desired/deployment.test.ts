import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { desiredDeployment, desiredWorkload, workloadKind } from "../../../operator/desired/index.ts";
import {
  defaultContainerResources,
  instance,
  labels,
  owner,
  restrictedContainer,
  restrictedPod,
  selector,
} from "./fixtures.ts";

describe("desiredDeployment", () => {
  it("builds the complete apply configuration for an instance without storage", () => {
    // GIVEN an instance with 3 replicas of nginx:1.27 on port 8080
    const input = instance();

    // WHEN the Deployment is built
    const deployment = desiredDeployment(input);

    // THEN it holds exactly the fields the operator owns
    assert.deepEqual(deployment, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "shop", labels, ownerReferences: [owner] },
      spec: {
        replicas: 3,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            securityContext: restrictedPod,
            containers: [
              {
                name: "app",
                image: "nginx:1.27",
                ports: [{ name: "app", containerPort: 8080, protocol: "TCP" }],
                volumeMounts: [{ name: "data", mountPath: "/data" }],
                readinessProbe: { tcpSocket: { port: "app" } },
                resources: defaultContainerResources,
                securityContext: restrictedContainer,
              },
            ],
            volumes: [{ name: "data", emptyDir: {} }],
          },
        },
      },
    });
  });

  it("follows replicas, image and port", () => {
    const deployment = desiredDeployment(
      instance({ replicas: 0, image: "registry.example.com/team/app:2", port: 9000 }),
    );
    const container = deployment.spec.template.spec.containers[0];
    assert.equal(deployment.spec.replicas, 0);
    assert.equal(container?.image, "registry.example.com/team/app:2");
    assert.equal(container?.ports[0]?.containerPort, 9000);
  });

  it("keeps the selector when the spec changes (a Deployment's selector is immutable)", () => {
    const before = desiredDeployment(instance());
    const after = desiredDeployment(instance({ image: "nginx:1.28", replicas: 7, port: 1234 }));
    assert.deepEqual(after.spec.selector, before.spec.selector);
  });

  it("is pure: the same input gives an equal object", () => {
    assert.deepEqual(desiredDeployment(instance()), desiredDeployment(instance()));
  });
});

describe("workloadKind", () => {
  it("is a Deployment without storage and a StatefulSet with it", () => {
    assert.equal(workloadKind(instance()), "Deployment");
    assert.equal(workloadKind(instance({ storage: "1Gi" })), "StatefulSet");
    assert.equal(desiredWorkload(instance()).kind, "Deployment");
    assert.equal(desiredWorkload(instance({ storage: "1Gi" })).kind, "StatefulSet");
  });
});
