import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { recordedIdentity, sameCluster } from "../../../kube/cluster-identity.ts";
import { WrongClusterError } from "../../../provider/cluster-identity.ts";

const platform = { server: "https://127.0.0.1:6443", uid: "uid-platform" };
const other = { server: "https://127.0.0.1:7443", uid: "uid-other" };

describe("cluster identity", () => {
  test("the kube-system uid decides, whatever URL reaches the cluster", () => {
    assert.equal(sameCluster(platform, { ...platform, server: "https://kubernetes.local:6443" }), true);
    assert.equal(sameCluster(platform, { ...other, server: platform.server }), false, "same URL, other cluster");
  });

  test("without a uid (no permission to read kube-system) the server URL decides", () => {
    assert.equal(sameCluster({ ...platform, uid: "" }, platform), true);
    assert.equal(sameCluster({ ...platform, uid: "" }, other), false);
  });

  test("state written before 0.2.0 has no identity: nothing to verify", () => {
    assert.equal(recordedIdentity(undefined), undefined);
    assert.equal(recordedIdentity({ server: 1 }), undefined);
    assert.deepEqual(recordedIdentity(platform), platform);
  });

  test("the error names both clusters, says nothing changed, and how to go on", () => {
    const error = new WrongClusterError(
      "refresh",
      { logicalName: "web", namespace: "shop", name: "web-1" },
      platform,
      other,
    );
    assert.match(error.message, /^Cannot refresh web \(MyAppInstance shop\/web-1\)/);
    assert.match(error.message, /lives in cluster https:\/\/127\.0\.0\.1:6443 \(kube-system uid uid-platform\)/);
    assert.match(error.message, /now reaches cluster https:\/\/127\.0\.0\.1:7443 \(kube-system uid uid-other\)/);
    assert.match(error.message, /Nothing was changed/);
    assert.match(
      error.message,
      /If the old cluster still runs, point the kubeconfig\/context .* back at https:\/\/127\.0\.0\.1:6443/,
    );
    assert.match(
      error.message,
      /If the old cluster is gone .*pulumi state delete '<urn>'.*pulumi stack --show-urns.*pulumi up/s,
    );
  });

  test("a local cluster made again at another address: the way out is the state delete, not the old address", () => {
    // GIVEN `npm run down` then `npm start`: the new local cluster answers on another port, with another uid
    const before = { server: "https://127.0.0.1:32758", uid: "uid-before" };
    const after = { server: "https://127.0.0.1:32764", uid: "uid-after" };
    const error = new WrongClusterError(
      "update",
      { logicalName: "db", namespace: "shop", name: "db-1" },
      before,
      after,
    );
    // THEN the error names both, and offers the recovery for an old cluster that no longer exists
    assert.match(
      error.message,
      /lives in cluster https:\/\/127\.0\.0\.1:32758 .* now reaches cluster https:\/\/127\.0\.0\.1:32764/,
    );
    assert.match(
      error.message,
      /If the old cluster is gone \(deleted, or made again at another address\), the instance and its volumes went with it/,
    );
    assert.match(
      error.message,
      /`pulumi state delete '<urn>'` \(`pulumi stack --show-urns` lists them\), then `pulumi up` creates it in this cluster\./,
    );
    // and pointing back at the old address is offered only for an old cluster that still runs
    assert.match(error.message, /If the old cluster still runs, point .* back at https:\/\/127\.0\.0\.1:32758/);
  });

  test("a cluster made again at the same address: not 'point back there', but how to drop what went with the old", () => {
    // GIVEN a local cluster deleted and made again on the same port: same URL, another kube-system uid
    const remade = { server: platform.server, uid: "uid-remade" };
    const error = new WrongClusterError(
      "update",
      { logicalName: "web", namespace: "shop", name: "web-1" },
      platform,
      remade,
    );
    // THEN the error says what happened and how the stack goes on, and does not send the user back where they are
    assert.match(error.message, /is not the one the instance was created in: it was deleted and made again/);
    assert.match(error.message, /pulumi state delete '<urn>'.*pulumi stack --show-urns.*pulumi up/s);
    assert.doesNotMatch(error.message, /back at/);
  });
});
