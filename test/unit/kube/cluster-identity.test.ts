/** kube/cluster-identity.ts: the one shape of "which cluster" that the provider's state and the tools' files record. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clusterIdentity, recordedIdentity, sameCluster } from "../../../kube/cluster-identity.ts";
import { ForbiddenError, TransportError, type KubeClient } from "../../../kube/index.ts";

/** A client that answers the kube-system GET with `answer`, counting the calls. */
function fakeClient(server: string, answer: () => Promise<unknown>): { client: KubeClient; gets: () => number } {
  let gets = 0;
  const client = {
    config: { getCurrentCluster: () => ({ server }) },
    get: () => {
      gets++;
      return answer();
    },
  } as unknown as KubeClient;
  return { client, gets: () => gets };
}

describe("cluster identity", () => {
  it("is the server URL and the kube-system uid, read once per client", async () => {
    const { client, gets } = fakeClient("https://127.0.0.1:6443", async () => ({ metadata: { uid: "uid-1" } }));
    assert.deepEqual(await clusterIdentity(client), { server: "https://127.0.0.1:6443", uid: "uid-1" });
    await clusterIdentity(client);
    assert.equal(gets(), 1);
  });

  it("has no uid when the credentials may not read kube-system, and is asked again after any other failure", async () => {
    const forbidden = fakeClient("https://a", () => Promise.reject(new ForbiddenError(403, "forbidden")));
    assert.deepEqual(await clusterIdentity(forbidden.client), { server: "https://a", uid: "" });
    const down = fakeClient("https://b", () => Promise.reject(new TransportError(0, "connect ECONNREFUSED")));
    await assert.rejects(clusterIdentity(down.client), TransportError);
    await assert.rejects(clusterIdentity(down.client), TransportError);
    assert.equal(down.gets(), 2);
  });

  it("is never the same cluster as no identity, nor as a record of another shape", () => {
    const identity = { server: "https://127.0.0.1:6443", uid: "uid-1" };
    assert.equal(sameCluster(undefined, identity), false);
    assert.equal(sameCluster(identity, undefined), false);
    // The tools once wrote { server, kubeSystemUid }: such a file is no record (its cluster is trusted no more).
    assert.equal(recordedIdentity({ server: identity.server, kubeSystemUid: "uid-1" }), undefined);
    // A cluster recreated on the same port is another cluster.
    assert.equal(sameCluster(identity, { ...identity, uid: "uid-2" }), false);
  });
});
