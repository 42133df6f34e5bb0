import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { tokenKubeconfig } from "../../../components/service-account-kubeconfig.ts";

describe("tokenKubeconfig", () => {
  it("keeps the admin's server and CA, authenticates with the token only, and defaults to the SA's namespace", () => {
    // GIVEN the parts of a token kubeconfig
    const yaml = tokenKubeconfig({
      clusterName: "kwok-myapp",
      server: "https://127.0.0.1:32766",
      certificateAuthorityData: "Q0EtUEVN",
      namespace: "myapp-system",
      serviceAccount: "myapp-operator",
      token: "t0ken",
    });
    // WHEN client-node loads it
    const kc = new KubeConfig();
    kc.loadFromString(yaml);
    // THEN
    assert.deepEqual(
      { server: kc.getCurrentCluster()?.server, caData: kc.getCurrentCluster()?.caData },
      { server: "https://127.0.0.1:32766", caData: "Q0EtUEVN" },
    );
    const user = kc.getCurrentUser();
    assert.equal(user?.name, "system:serviceaccount:myapp-system:myapp-operator");
    assert.equal(user?.token, "t0ken");
    assert.equal(user?.certData, undefined, "no client certificate of the admin leaks in");
    assert.equal(user?.keyData, undefined);
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, "myapp-system");
  });
});
