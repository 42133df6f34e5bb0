import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pushDestinationProblem, skopeoCopyArgs } from "../../../tools/lib/image-push.ts";

describe("pushDestinationProblem", () => {
  it("takes REGISTRY/NAME:TAG with a registry host, a port or localhost", () => {
    for (const destination of [
      "registry.example.com/platform/myapp-operator:0.2.0",
      "127.0.0.1:5000/myapp/myapp-operator:0.2.0",
      "localhost/myapp-operator",
      "docker.io/someone/myapp-operator:1",
    ]) {
      assert.equal(pushDestinationProblem(destination), undefined, destination);
    }
  });

  it("refuses a scheme, a digest, an invalid reference, and a name without a registry (Docker Hub by accident)", () => {
    const cases: [string, RegExp][] = [
      ["docker://registry.example.com/op:1", /has a scheme/],
      ["https://registry.example.com/op:1", /has a scheme/],
      [`registry.example.com/op@sha256:${"a".repeat(64)}`, /has a digest/],
      ["registry.example.com/My-Operator:1", /is not an image reference/],
      ["myapp-operator:0.2.0", /names no registry host/],
      ["someone/myapp-operator:0.2.0", /names no registry host/],
    ];
    for (const [destination, problem] of cases) {
      const message = pushDestinationProblem(destination) ?? "";
      assert.match(message, problem, destination);
      assert.match(message, /REGISTRY\/NAME:TAG/, "says what to give");
    }
  });
});

describe("skopeoCopyArgs", () => {
  it("copies the layout to the registry, verifying TLS unless asked not to", () => {
    // GIVEN the cached layout and a destination WHEN the arguments are built, with and without TLS verification
    const verified = skopeoCopyArgs("/cache/myapp-operator-abc:0.2.0", "r.example/op:0.2.0", "/tmp/d", true);
    const plain = skopeoCopyArgs("/cache/myapp-operator-abc:0.2.0", "127.0.0.1:5000/op:0.2.0", "/tmp/d", false);
    // THEN the same copy, and --dest-tls-verify=false only when asked
    assert.deepEqual(verified, [
      "copy",
      "--quiet",
      "--digestfile",
      "/tmp/d",
      "oci:/cache/myapp-operator-abc:0.2.0",
      "docker://r.example/op:0.2.0",
    ]);
    assert.ok(!verified.some((arg) => arg.includes("tls-verify")));
    assert.ok(plain.includes("--dest-tls-verify=false"));
    assert.equal(plain.at(-1), "docker://127.0.0.1:5000/op:0.2.0");
  });
});
