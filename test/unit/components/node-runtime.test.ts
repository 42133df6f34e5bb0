import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inClusterPlacementVerdict, isFakeNode, type NodeSummary } from "../../../components/node-runtime.ts";

/** A node as `kwokctl scale node` makes it (this repository's local cluster). */
const kwokNode = (name: string): NodeSummary => ({
  metadata: { name, annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" } },
  status: { nodeInfo: { kubeletVersion: "fake" } },
});
const realNode = (name: string): NodeSummary => ({
  metadata: { name, annotations: { "node.alpha.kubernetes.io/ttl": "0" } },
  status: { nodeInfo: { kubeletVersion: "v1.36.0" } },
});

describe("isFakeNode", () => {
  it("knows kwok's nodes by their annotation or by the kubelet version kwok reports", () => {
    assert.equal(isFakeNode(kwokNode("a")), true);
    assert.equal(isFakeNode({ metadata: { annotations: { "kwok.x-k8s.io/node": "fake" } } }), true);
    assert.equal(isFakeNode({ metadata: { name: "b" }, status: { nodeInfo: { kubeletVersion: "fake" } } }), true);
    assert.equal(isFakeNode(realNode("c")), false);
    // Another value of the annotation is not kwok's fake node.
    assert.equal(isFakeNode({ metadata: { annotations: { "kwok.x-k8s.io/node": "real" } } }), false);
  });
});

describe("inClusterPlacementVerdict", () => {
  it("refuses when every node is fake, naming them, the annotation and the local recipe", () => {
    // GIVEN the local cluster's three kwok nodes WHEN judged
    const verdict = inClusterPlacementVerdict('MyAppOperator "p"', ["n0", "n1", "n2"].map(kwokNode));
    // THEN refused, with what to do instead
    assert.equal(verdict.verdict, "refuse");
    const message = verdict.verdict === "refuse" ? verdict.message : "";
    assert.match(message, /^MyAppOperator "p": operatorPlacement "in-cluster" cannot run on this cluster/);
    assert.match(
      message,
      /all 3 of its nodes \(n0, n1, n2\) are kwok fake nodes \(annotation kwok.x-k8s.io\/node: fake\)/,
    );
    assert.match(message, /operatorPlacement: "external"/);
    // A project's own switch and process, and the dev stack's; never `npm run operator`, which serves the dev stack
    // alone (its namespaces), not a user's project.
    assert.match(message, /`pulumi config rm operatorImage`/);
    assert.match(message, /`npx --no-install myapp-operator` with the flags its externalOperatorFlags lists/);
    assert.match(message, /`npm run pulumi -- config rm operatorPlacement --stack dev`/);
    assert.doesNotMatch(message, /npm run operator/);
  });

  it("lists at most three node names", () => {
    const verdict = inClusterPlacementVerdict("x", ["a", "b", "c", "d", "e"].map(kwokNode));
    assert.equal(verdict.verdict, "refuse");
    assert.match(verdict.verdict === "refuse" ? verdict.message : "", /all 5 of its nodes \(a, b, c, \.\.\.\)/);
  });

  it("warns when some nodes are fake (the operator may land on one)", () => {
    const verdict = inClusterPlacementVerdict("x", [realNode("w1"), kwokNode("k1"), realNode("w2")]);
    assert.equal(verdict.verdict, "warn");
    assert.match(
      verdict.verdict === "warn" ? verdict.message : "",
      /^x: 1 of the cluster's 3 nodes \(k1\) are kwok fake/,
    );
  });

  it("carries on with real nodes only, and with no nodes at all (a cluster that scales up from zero)", () => {
    assert.deepEqual(inClusterPlacementVerdict("x", [realNode("w1"), realNode("w2")]), { verdict: "ok" });
    assert.deepEqual(inClusterPlacementVerdict("x", []), { verdict: "ok" });
  });
});
