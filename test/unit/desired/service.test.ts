import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  controllerReference,
  desiredGoverningService,
  desiredService,
  desiredStatefulSet,
  isControlledBy,
} from "../../../operator/desired/index.ts";
import { instance, labels, owner, selector } from "./fixtures.ts";

describe("desiredService", () => {
  it("builds a ClusterIP Service from spec.port to the same target port", () => {
    // GIVEN an instance on port 9090
    // WHEN its Service is built
    const service = desiredService(instance({ port: 9090 }));

    // THEN it routes 9090 to 9090 on the instance's pods
    assert.deepEqual(service, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "shop", labels, ownerReferences: [owner] },
      spec: {
        type: "ClusterIP",
        selector,
        ports: [{ name: "app", port: 9090, targetPort: 9090, protocol: "TCP" }],
      },
    });
  });

  it("selects the same pods whether the instance has storage or not", () => {
    assert.deepEqual(
      desiredService(instance()).spec.selector,
      desiredService(instance({ storage: "1Gi" })).spec.selector,
    );
  });
});

describe("desiredGoverningService", () => {
  it("is a headless Service beside the ClusterIP one, governing the StatefulSet", () => {
    // GIVEN an instance with storage
    const input = instance({ storage: "1Gi", port: 9090 });
    // WHEN its governing Service is built
    const service = desiredGoverningService(input);
    // THEN it is headless, publishes starting pods, and is the StatefulSet's serviceName
    assert.deepEqual(service, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web-pods", namespace: "shop", labels, ownerReferences: [owner] },
      spec: {
        type: "ClusterIP",
        clusterIP: "None",
        publishNotReadyAddresses: true,
        selector,
        ports: [{ name: "app", port: 9090, targetPort: 9090, protocol: "TCP" }],
      },
    });
    assert.equal(desiredStatefulSet(input).spec.serviceName, service.metadata.name);
    assert.notEqual(service.metadata.name, desiredService(input).metadata.name);
  });

  it("stays a valid Service name for the longest instance names", () => {
    const name = desiredGoverningService(instance({ storage: "1Gi" }, "a".repeat(253))).metadata.name;
    assert.ok(name.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name), name);
  });
});

describe("controllerReference", () => {
  it("makes the instance the controller, blocking foreground deletion", () => {
    assert.deepEqual(controllerReference(instance().metadata), owner);
  });

  it("recognises a controller reference by uid", () => {
    const uid = instance().metadata.uid;
    assert.ok(isControlledBy([owner], uid));
    assert.ok(!isControlledBy([{ ...owner, controller: false }], uid), "an owner that is not the controller");
    assert.ok(!isControlledBy([{ ...owner, uid: "someone-else" }], uid));
    assert.ok(!isControlledBy(undefined, uid));
  });
});
