import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { claimName, desiredStatefulSet, isDataClaimOf } from "../../../operator/desired/index.ts";
import {
  defaultContainerResources,
  instance,
  labels,
  owner,
  restrictedContainer,
  restrictedPod,
  selector,
} from "./fixtures.ts";

describe("desiredStatefulSet", () => {
  it("builds the complete apply configuration for an instance with storage", () => {
    // GIVEN an instance with 1Gi of storage on the class "fast"
    const input = instance({ storage: "1Gi", storageClassName: "fast" });

    // WHEN the StatefulSet is built
    const sts = desiredStatefulSet(input);

    // THEN each replica gets a "data" claim mounted at /data, kept when the StatefulSet goes
    assert.deepEqual(sts, {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "web", namespace: "shop", labels, ownerReferences: [owner] },
      spec: {
        replicas: 3,
        serviceName: "web-pods",
        podManagementPolicy: "Parallel",
        persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
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
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: "data", labels },
            spec: {
              accessModes: ["ReadWriteOnce"],
              storageClassName: "fast",
              resources: { requests: { storage: "1Gi" } },
            },
          },
        ],
      },
    });
  });

  it("leaves storageClassName out so the cluster's default class applies", () => {
    const sts = desiredStatefulSet(instance({ storage: "5Gi" }));
    const template = sts.spec.volumeClaimTemplates[0];
    assert.equal(template?.spec.resources.requests.storage, "5Gi");
    assert.ok(template && !("storageClassName" in template.spec));
  });

  it("has no volumes of its own: the claim template provides 'data'", () => {
    const sts = desiredStatefulSet(instance({ storage: "1Gi" }));
    assert.equal(sts.spec.template.spec.volumes, undefined);
  });

  it("refuses a spec without storage, naming the instance and the right builder", () => {
    assert.throws(() => desiredStatefulSet(instance()), /shop\/web.*spec\.storage is not set; use desiredDeployment/);
  });
});

describe("data claim names", () => {
  it("are <template>-<statefulset>-<ordinal>", () => {
    assert.equal(claimName("web", 0), "data-web-0");
    assert.ok(isDataClaimOf("data-web-12", "web"));
    assert.ok(!isDataClaimOf("data-web-x", "web"));
    assert.ok(!isDataClaimOf("data-web-api-0", "web"), "another StatefulSet's claim with a longer name");
    assert.ok(!isDataClaimOf("logs-web-0", "web"));
  });
});
