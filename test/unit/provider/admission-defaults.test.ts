import assert from "node:assert/strict";
import { test } from "node:test";
import { admissionDefaults } from "../../../provider/admission-defaults.ts";

test("admission's additions are named; the inputs' own fields and the CRD's defaults are not", () => {
  const desired = { spec: { image: "nginx:1.27", replicas: 2 } };
  const admitted = {
    spec: {
      image: "nginx:1.27",
      replicas: 2,
      port: 8080,
      storageReclaimPolicy: "Retain",
      podSecurityLevel: "Baseline",
    },
  };
  assert.deepEqual(admissionDefaults(desired, admitted), ['podSecurityLevel: "Baseline"']);
  assert.deepEqual(admissionDefaults(desired, { spec: { image: "nginx:1.27", port: 8080 } }), []);
  assert.deepEqual(admissionDefaults(desired, undefined), []);
});
