/**
 * The component's node check against the real local cluster: its nodes are kwok's fake ones, so an in-cluster
 * operator is refused with the local recipe; a cluster that does not answer is skipped, not an error.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { readClusterNodes } from "../../components/cluster-nodes.ts";
import { inClusterPlacementVerdict, isFakeNode } from "../../components/node-runtime.ts";
import { adminClient } from "../support/cluster.ts";

describe("the cluster's nodes, as the component reads them", () => {
  it("on the local kwok cluster: every node is fake, and an in-cluster operator is refused", async () => {
    // GIVEN the connection a MyAppOperator on the local cluster has (the kubeconfig text, as ClusterProvider keeps it)
    const kubeconfig = readFileSync(process.env.KUBECONFIG!, "utf8");
    // WHEN it reads the nodes
    const read = await readClusterNodes({ kubeconfig, source: "the test's KUBECONFIG" });
    // THEN the same nodes the admin client lists, each one of kwok's fake nodes
    assert.ok("nodes" in read, "unavailable" in read ? read.unavailable : "");
    const listed = await adminClient().list("v1", "Node");
    assert.deepEqual(
      read.nodes.map((node) => node.metadata.name).sort(),
      listed.items.map((node) => node.metadata.name).sort(),
    );
    assert.ok(read.nodes.length > 0);
    assert.ok(read.nodes.every(isFakeNode), "kwokctl's nodes carry kwok.x-k8s.io/node: fake");
    // AND the verdict refuses, with the way out
    const verdict = inClusterPlacementVerdict('MyAppOperator "local"', read.nodes);
    assert.equal(verdict.verdict, "refuse");
    assert.match(verdict.verdict === "refuse" ? verdict.message : "", /operatorPlacement: "external"/);
  });

  it("a cluster that does not answer is skipped with a reason", async () => {
    const unreachable = stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "gone", cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "c", context: { cluster: "gone", user: "u" } }],
      "current-context": "c",
    });
    const read = await readClusterNodes({ kubeconfig: unreachable, source: "a test kubeconfig" });
    assert.ok("unavailable" in read, JSON.stringify(read));
    assert.deepEqual(await readClusterNodes({ kubeconfig: undefined, source: "the file /nope" }), {
      unavailable: "no kubeconfig (the file /nope)",
    });
  });
});
