/**
 * Instances with large `spec.values`. Instances are the one kind the operator must cache whole, and `spec.values`
 * the one field of theirs no schema bounds (etcd takes ~1.5 MiB an object). The webhook refuses values over
 * `--render-values` (128 KiB by default), but instances stored while the webhooks were off or the limit was higher
 * are still listed and watched: the cache keeps them without their values (operator/instance-as-read.ts), and they
 * turn Degraded, reason ValuesTooLarge, until their values shrink.
 *
 * The real cluster and operator process, without webhooks, on a heap smaller than the tenant's values
 * (`--max-old-space-size=128`): 110 instances with 1 MiB of values before it starts (its first list) and 40 while it
 * runs (its watch), 150 MiB in all. Kept whole, they kill it with "JavaScript heap out of memory". Then an instance
 * beside them is Ready, a large one says why it is not, and once its values shrink it is Ready too.
 *
 * Values nested 9,000 levels deep (the apiserver stores up to ~10,000; JavaScript's recursive walks overflow at a
 * few thousand) are refused as InvalidSpec, in the first list and on the watch, while every other instance is
 * served.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test, type TestContext } from "node:test";
import { adminClient, kubectl, testNamespace } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  exitOf,
  isReadyAtSpec,
  startOperator,
  waitForInstance,
} from "../support/operator.ts";

const client = adminClient();
/** `{"blob":"xxx…"}`: 1 MiB of JSON. */
const largeValues = { blob: "x".repeat(1024 * 1024 - 11) };
/** Instances with 1 MiB of values before the operator starts (its first list) and while it runs. */
const before = 110;
const after = 40;

/** `count` instances named `prefix-N` with 1 MiB of values each, two at a time. */
async function createLarge(namespace: string, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 2) {
    await Promise.all(
      [i, i + 1].map((n) =>
        createInstance(client, namespace, `${prefix}-${n}`, { image: "nginx:1.27", values: largeValues }),
      ),
    );
  }
}

/**
 * An instance whose values nest `depth` objects deep, made with kubectl from text: the test's own client writes
 * JSON with `JSON.stringify`, which cannot go that deep.
 */
async function createDeep(t: TestContext, namespace: string, name: string, depth: number): Promise<void> {
  const values = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  const dir = mkdtempSync(path.join(os.tmpdir(), "deep-values-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    `{"apiVersion":"example.com/v1","kind":"MyAppInstance","metadata":{"name":"${name}","namespace":"${namespace}"},` +
      `"spec":{"image":"nginx:1.27","values":${values}}}`,
  );
  await kubectl("create", "-f", file);
}

test(
  "instances with more values than the operator's heap cost it their size only, and say why they wait",
  { timeout: 10 * 60_000 },
  async (t) => {
    const namespace = await testNamespace(t, client, "values");
    await createLarge(namespace, "before", before);
    await createDeep(t, namespace, "deep-before", 9000);

    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: false,
      env: { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1" },
    });
    const exited = exitOf(operator);
    exited.catch(() => {}); // the test stops it in the end
    /** `work`, unless the operator exits first. */
    const alive = <T>(work: Promise<T>) => Promise.race([work, exited]);
    await alive(createLarge(namespace, "after", after));
    await alive(createDeep(t, namespace, "deep-after", 9000));

    await createInstance(client, namespace, "web", { image: "nginx:1.27", values: { small: true } });
    await alive(waitForInstance(client, namespace, "web", "Ready", isReadyAtSpec, 180_000));

    for (const name of ["before-0", `after-${after - 1}`]) {
      const degraded = await alive(
        waitForInstance(
          client,
          namespace,
          name,
          "Degraded for its values",
          (instance) => conditionOf(instance, "Degraded")?.reason === "ValuesTooLarge",
          180_000,
        ),
      );
      assert.equal(
        conditionOf(degraded, "Degraded")?.message,
        "spec.values is 1024 KiB as JSON; the platform allows at most 128 KiB (--render-values); nothing is " +
          "rendered or changed until they are smaller",
      );
    }

    for (const name of ["deep-before", "deep-after"]) {
      const invalid = await alive(
        waitForInstance(
          client,
          namespace,
          name,
          "InvalidSpec for its depth",
          (instance) => conditionOf(instance, "Degraded")?.reason === "InvalidSpec",
          180_000,
        ),
      );
      assert.match(
        conditionOf(invalid, "Degraded")?.message ?? "",
        /spec\.values: must nest objects and arrays at most 100 levels deep/,
      );
    }

    // Smaller values: the instance is read whole again and reconciled.
    await client.mergePatch("example.com/v1", "MyAppInstance", "before-0", namespace, {
      spec: { values: { blob: null, small: true } },
    });
    await alive(waitForInstance(client, namespace, "before-0", "Ready once its values shrank", isReadyAtSpec, 180_000));
  },
);
