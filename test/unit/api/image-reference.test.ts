import assert from "node:assert/strict";
import { once } from "node:events";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { isImageReference, maxImageReferenceLength } from "../../../api/index.ts";

const digest = `sha256:${"0123456789abcdef".repeat(4)}`;

describe("isImageReference follows distribution/reference", () => {
  const valid = [
    "nginx",
    "nginx:1.27",
    "library/nginx:latest",
    "registry.example.com/team/app:1.2.3",
    "registry.example.com:5000/team/sub/app:v1.2.3-rc.1",
    "localhost:5000/app",
    "localhost/app",
    "[::1]:5000/app",
    "[fd00::1]/app",
    "Registry.Example.COM/app",
    "my_org/my__app/my--app.v2:Tag_1",
    `nginx@${digest}`,
    `ghcr.io/org/app:v1@${digest}`,
    `app@sha512+b64u.x-y_z:${"f".repeat(128)}`,
    `nginx:${"t".repeat(128)}`,
  ];
  for (const reference of valid)
    test(`accepts ${reference.slice(0, 60)}`, () => assert.ok(isImageReference(reference)));

  const invalid = [
    "",
    "Nginx",
    "nginx:",
    ":latest",
    "nginx:-tag",
    `nginx:${"t".repeat(129)}`,
    "nginx@sha256:abc123",
    "https://registry.example.com/app",
    "nginx latest",
    "nginx:latest\n",
    " nginx",
    "ngïnx",
    "nginx:🚀",
    "a//b",
    "a/",
    "-a",
    "a_-b",
    "a___b",
    "registry.example.com:/app",
    "[::1/app",
    `app@${digest}:tag`,
    `${"a".repeat(256)}:v1`,
  ];
  for (const reference of invalid) {
    test(`rejects ${JSON.stringify(reference.slice(0, 60))}`, () => assert.equal(isImageReference(reference), false));
  }

  test("caps the total length", () => {
    const name = "a".repeat(200);
    const reference = (length: number) => `${name}@sha256:${"f".repeat(length - name.length - 8)}`;
    assert.ok(isImageReference(reference(maxImageReferenceLength)));
    assert.equal(isImageReference(reference(maxImageReferenceLength + 1)), false);
  });

  test("answers adversarial input (no catastrophic backtracking in ECMAScript)", async (t) => {
    // GIVEN inputs built to make a backtracking engine try every split, one character short of matching
    const units = ["a", "a-", "a.", "a__", "a-b.", "a/", "A-", "a.a-", "a:", "a/b.", "a0-a0."];
    const inputs = units.flatMap((unit) =>
      ["!", ":", "@", "/", "-", "."].map(
        (last) => unit.repeat(maxImageReferenceLength).slice(0, maxImageReferenceLength - 1) + last,
      ),
    );
    // WHEN a worker runs the regexp on each, under a deadline this thread keeps (a backtracking blow-up on 255
    // characters would hold the worker longer than the universe has; here the slowest takes ~0.01 ms, measured by
    // `npm run bench -- hostile-input`)
    const worker = new Worker(
      `import { parentPort, workerData } from "node:worker_threads";
       const { imageReferenceRegExp } = await import(workerData.module);
       parentPort.postMessage(workerData.inputs.map((input) => imageReferenceRegExp.test(input)));`,
      { eval: true, workerData: { inputs, module: new URL("../../../api/image-reference.ts", import.meta.url).href } },
    );
    t.after(() => worker.terminate());
    const verdicts = await Promise.race([
      once(worker, "message").then(([message]) => message as boolean[]),
      sleep(60_000, undefined, { ref: false }).then(() => assert.fail("the regexp ran for more than 60 s")),
    ]);
    // THEN every one is refused
    assert.deepEqual(
      verdicts,
      inputs.map(() => false),
    );
  });
});
