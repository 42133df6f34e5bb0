/**
 * ClusterProvider under pulumi.runtime.setMocks in preview mode: the connection a MyAppOperator hands its
 * instances is known in a preview when the provider is a ClusterProvider, and unknown (the context output has no
 * value) when it is a plain k8s.Provider. No engine, no cluster.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as pulumi from "@pulumi/pulumi";

pulumi.runtime.setMocks(
  {
    // As the engine: a provider's outputs are the inputs it was given, and nothing for what it was not given.
    newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs as Record<string, unknown> }),
    call: (args) => args.inputs as Record<string, unknown>,
  },
  "myapp",
  "unit",
  true, // a preview
);

// Loaded after setMocks, so no resource can be created against a real engine.
const k8s = await import("@pulumi/kubernetes");
const { ClusterProvider } = await import("../../../components/cluster-provider.ts");
const { clusterConnectionOf } = await import("../../../components/cluster-connection.ts");

const kubeconfig = "apiVersion: v1\nkind: Config\nclusters: []\n";

/** Whether `output` is known, and its value if so (Output keeps both as internal promises). */
async function settle<T>(output: pulumi.Output<T>): Promise<{ known: boolean; value: T | undefined }> {
  const internal = output as unknown as { isKnown: Promise<boolean>; promise(): Promise<T> };
  const known = await internal.isKnown;
  return { known, value: known ? await internal.promise() : undefined };
}

describe("ClusterProvider", () => {
  it("is a k8s.Provider that keeps the kubeconfig and context it was given", () => {
    // GIVEN a ClusterProvider WHEN built THEN it is a plain provider for everything else, plus its inputs
    const provider = new ClusterProvider("c1", { kubeconfig, context: "ctx" });
    assert.ok(provider instanceof k8s.Provider);
    assert.deepEqual(provider.connectionInputs, { kubeconfig, context: "ctx" });
  });

  it("hands a preview a known connection, where a plain provider's context is unknown", async () => {
    // GIVEN two providers with the same kubeconfig and no context
    const remembered = clusterConnectionOf(new ClusterProvider("c2", { kubeconfig }));
    const plain = clusterConnectionOf(new k8s.Provider("p2", { kubeconfig }));
    // THEN in a preview only the ClusterProvider's connection is known, and it is a secret either way
    assert.deepEqual(await settle(remembered), {
      known: true,
      value: { kubeconfig, source: "the provider's kubeconfig text" },
    });
    assert.equal((await settle(plain)).known, false);
    assert.equal(await pulumi.isSecret(remembered), true);
  });
});
