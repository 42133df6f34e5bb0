import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { controllerReference, desiredService, isControlledBy } from "../../../operator/desired/index.ts";
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
