/** The cluster's version set as Helm builds it from discovery: group versions plus `group/version/Kind`. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  apiVersionsFromAggregated,
  apiVersionsFromResourceLists,
  type AggregatedDiscovery,
} from "../../../kube/index.ts";

describe("apiVersionsFromAggregated", () => {
  test("every group version, and the kind of every resource and subresource under the listing group version", () => {
    // GIVEN /api and /apis as aggregated discovery (apidiscovery.k8s.io/v2) answers them
    const core: AggregatedDiscovery = {
      kind: "APIGroupDiscoveryList",
      items: [
        {
          metadata: { name: "" },
          versions: [
            {
              version: "v1",
              resources: [
                { responseKind: { kind: "ConfigMap" } },
                { responseKind: { kind: "Pod" }, subresources: [{ responseKind: { kind: "Eviction" } }] },
              ],
            },
          ],
        },
      ],
    };
    const groups: AggregatedDiscovery = {
      kind: "APIGroupDiscoveryList",
      items: [
        {
          metadata: { name: "apps" },
          versions: [
            {
              version: "v1",
              resources: [
                {
                  responseKind: { kind: "Deployment" },
                  // The scale subresource answers autoscaling/v1 Scale, listed under apps/v1 as Helm lists it.
                  subresources: [{ responseKind: { kind: "Scale" } }, { responseKind: null }],
                },
              ],
            },
          ],
        },
        {
          metadata: { name: "metrics.example.com" },
          versions: [{ version: "v1beta1", freshness: "Stale", resources: [{ responseKind: { kind: "Gone" } }] }],
        },
      ],
    };

    // WHEN the version set is built
    const versions = apiVersionsFromAggregated([core, groups]);

    // THEN it holds what helm install's GetVersionSet would (a stale group version without its kinds), sorted
    assert.deepEqual(versions, [
      "apps/v1",
      "apps/v1/Deployment",
      "apps/v1/Scale",
      "metrics.example.com/v1beta1",
      "v1",
      "v1/ConfigMap",
      "v1/Eviction",
      "v1/Pod",
    ]);
  });
});

describe("apiVersionsFromResourceLists", () => {
  test("classic discovery gives the same set", () => {
    const versions = apiVersionsFromResourceLists(
      ["v1", "apps/v1"],
      [
        { groupVersion: "v1", resources: [{ kind: "ConfigMap" }, { kind: "Pod" }, { kind: "Eviction" }] },
        { groupVersion: "apps/v1", resources: [{ kind: "Deployment" }, { kind: "Scale" }, { kind: "Deployment" }] },
      ],
    );
    assert.deepEqual(versions, [
      "apps/v1",
      "apps/v1/Deployment",
      "apps/v1/Scale",
      "v1",
      "v1/ConfigMap",
      "v1/Eviction",
      "v1/Pod",
    ]);
  });
});
