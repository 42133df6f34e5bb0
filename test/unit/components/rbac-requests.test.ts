import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { authorizedRequest, grantLines } from "../../support/rbac-requests.ts";

describe("authorizedRequest: URLs as RBAC reads them", () => {
  const of = (method: string, path: string, status = 200) => authorizedRequest({ method, path, status });

  it("reads verbs from method, name and ?watch", () => {
    assert.deepEqual(of("GET", "/apis/apps/v1/namespaces/a/deployments/web")?.verbs, ["get"]);
    assert.deepEqual(of("GET", "/apis/apps/v1/namespaces/a/deployments?labelSelector=x")?.verbs, ["list"]);
    assert.deepEqual(of("GET", "/apis/apps/v1/deployments?watch=true&resourceVersion=1")?.verbs, ["watch"]);
    assert.deepEqual(of("PATCH", "/api/v1/namespaces/a/services/web?fieldManager=m")?.verbs, ["patch"]);
    assert.deepEqual(of("PATCH", "/api/v1/namespaces/a/services/web", 201)?.verbs, ["patch", "create"]);
    assert.deepEqual(of("PUT", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l")?.verbs, ["update"]);
    assert.deepEqual(of("DELETE", "/api/v1/namespaces/a/persistentvolumeclaims/c")?.verbs, ["delete"]);
  });

  it("reads group, resource, subresource and namespace; cluster-scoped objects have none", () => {
    assert.deepEqual(of("PATCH", "/apis/example.com/v1/namespaces/a/myappinstances/web/status"), {
      verbs: ["patch"],
      group: "example.com",
      resource: "myappinstances/status",
      namespace: "a",
      name: "web",
    });
    const storageClass = of("GET", "/apis/storage.k8s.io/v1/storageclasses/standard");
    assert.equal(storageClass?.namespace, undefined);
    assert.equal(storageClass?.resource, "storageclasses");
    assert.equal(of("GET", "/api/v1/namespaces/a")?.resource, "namespaces");
    assert.equal(of("GET", "/version"), undefined);
  });

  it("lists each grant once, sorted", () => {
    const requests = [of("GET", "/api/v1/namespaces/a/events"), of("GET", "/api/v1/namespaces/b/events")];
    assert.deepEqual(grantLines(requests.filter((r) => r !== undefined)), ["core/events list"]);
  });
});
