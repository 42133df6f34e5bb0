import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { apiErrorFrom, InvalidError, isTransient, ServerError } from "../../../kube/errors.ts";

describe("apiErrorFrom", () => {
  it("maps 422 to a rejection that names the fields", () => {
    const error = apiErrorFrom(
      422,
      {
        message: 'Deployment.apps "web" is invalid',
        reason: "Invalid",
        details: { causes: [{ field: "spec.replicas", message: "must be greater than or equal to 0" }] },
      },
      "fallback",
    );
    assert.ok(error instanceof InvalidError);
    assert.equal(isTransient(error), false);
    assert.deepEqual(error.causes, [{ field: "spec.replicas", message: "must be greater than or equal to 0" }]);
  });

  it("takes a server-side apply that does not fit the kind's schema (500, typed patch) for a rejection", () => {
    // As kube-apiserver 1.36.3 answers a chart's ConfigMap rendered with `data.x: true`
    const error = apiErrorFrom(
      500,
      {
        message:
          "failed to create typed patch object (/v1, Kind=ConfigMap): .data.x: expected string, got " +
          "&value.valueUnstructured{Value:true}",
        reason: "InternalError",
      },
      "fallback",
    );
    assert.ok(error instanceof InvalidError);
    assert.equal(isTransient(error), false);
    // AND any other 500 is the server's, retried
    assert.equal(isTransient(apiErrorFrom(500, { message: "etcdserver: request timed out" }, "fallback")), true);
  });

  it("retries a Service the IP allocator could not serve (etcd away): 422 on spec.clusterIPs", () => {
    const error = apiErrorFrom(
      422,
      {
        message: 'Service "web" is invalid: spec.clusterIPs: Invalid value: []: failed to allocate IP: etcdserver: ...',
        reason: "Invalid",
        details: {
          causes: [{ field: "spec.clusterIPs", message: "failed to allocate IP: etcdserver: request timed out" }],
        },
      },
      "fallback",
    );
    assert.ok(error instanceof ServerError);
    assert.equal(error.status, 422);
    assert.equal(isTransient(error), true);
  });

  it("retries it in the shape the apiserver sends: the cause's message is the field error's body", () => {
    // As kube-apiserver 1.36.3 answered while etcd restarted (the chaos smoke, CI)
    const error = apiErrorFrom(
      422,
      {
        message:
          'Service "app-005" is invalid: spec.clusterIPs: Invalid value: [""]: failed to allocate IP: rpc error: ' +
          "code = Unavailable desc = error reading from server: EOF",
        reason: "Invalid",
        details: {
          causes: [
            {
              reason: "FieldValueInvalid",
              field: "spec.clusterIPs",
              message:
                'Invalid value: [""]: failed to allocate IP: rpc error: code = Unavailable desc = error reading from ' +
                "server: EOF",
            },
          ],
        },
      },
      "fallback",
    );
    assert.ok(error instanceof ServerError);
    assert.equal(isTransient(error), true);
  });

  it("keeps a refused chosen IP a rejection in the apiserver's shape too", () => {
    const error = apiErrorFrom(
      422,
      {
        message: 'Service "web" is invalid',
        details: {
          causes: [
            {
              reason: "FieldValueInvalid",
              field: "spec.clusterIPs",
              message: 'Invalid value: ["10.0.0.9"]: failed to allocate IP 10.0.0.9: provided IP is already allocated',
            },
          ],
        },
      },
      "fallback",
    );
    assert.ok(error instanceof InvalidError);
  });

  it("keeps a refused chosen IP a rejection", () => {
    const error = apiErrorFrom(
      422,
      {
        message: 'Service "web" is invalid',
        details: {
          causes: [
            { field: "spec.clusterIPs", message: "failed to allocate IP 10.0.0.9: provided IP is already allocated" },
          ],
        },
      },
      "fallback",
    );
    assert.ok(error instanceof InvalidError);
  });
});
