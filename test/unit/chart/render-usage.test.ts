/**
 * What a render takes of its namespace's budget: each replicated workload's most replicas (its own, or an
 * autoscaler's ceiling aimed at it), and each StatefulSet's claims × those replicas. Other kinds take nothing.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseManifests, renderUsage } from "../../../chart/index.ts";

function objects(yaml: string) {
  return parseManifests(`---\n# Source: app/templates/x.yaml\n${yaml}`).map((manifest) => manifest.object);
}

const gi = 2n ** 30n * 10n ** 9n;

describe("renderUsage", () => {
  test("counts every workload's replicas, 1 where unset, and nothing for other kinds", () => {
    const render = objects(`apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec: { replicas: 3 }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: worker }
spec: {}
---
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { replicas: 99 }
`);
    assert.deepEqual(renderUsage(render), { replicas: 4n, storageNanos: 0n });
  });

  test("counts an autoscaler's maxReplicas for the workload it targets, when that is more", () => {
    const render = objects(`apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec: { replicas: 2 }
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: { name: web }
spec: { scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: web }, maxReplicas: 12 }
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: { name: elsewhere }
spec: { scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: not-rendered }, maxReplicas: 500 }
`);
    assert.equal(renderUsage(render).replicas, 12n);
  });

  test("counts a StatefulSet's claim templates once per replica, the autoscaled ceiling included", () => {
    const render = objects(`apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  replicas: 2
  volumeClaimTemplates:
    - { metadata: { name: data }, spec: { resources: { requests: { storage: 10Gi } } } }
    - { metadata: { name: logs }, spec: { resources: { requests: { storage: 1Gi } } } }
    - { metadata: { name: odd }, spec: { resources: { requests: { storage: lots } } } }
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: { name: db }
spec: { scaleTargetRef: { apiVersion: apps/v1, kind: StatefulSet, name: db }, maxReplicas: 3 }
`);
    assert.deepEqual(renderUsage(render), { replicas: 3n, storageNanos: 33n * gi });
  });
  test("counts a claim size written as a number, as the apiserver reads it", () => {
    const render = objects(`apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  replicas: 2
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { resources: { requests: { storage: 1073741824 } } }
`);
    assert.deepEqual(renderUsage(render), { replicas: 2n, storageNanos: 2n * gi });
  });
});
