/**
 * Large reviews parsed on their own thread (a real one, from its data: URL module): the handlers judge what comes
 * back exactly as they judge the whole review, and the event loop keeps turning while a heavy body is parsed.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { maxSpecFields } from "../../../../api/validate.ts";
import type { AdmissionLookups } from "../../../../operator/admission/lookups.ts";
import { openPolicy } from "../../../../operator/admission/policy.ts";
import { ReviewParseThread, ReviewSyntaxError } from "../../../../operator/admission/review-parse-thread.ts";
import { admissionHandlers } from "../../../../operator/admission/review.ts";

const lookups: AdmissionLookups = {
  namespace: () => Promise.resolve({ labels: {} }),
  storageClass: () => Promise.resolve(undefined),
  defaultStorageClass: () => Promise.resolve(undefined),
  chartConfigMap: () => Promise.resolve(undefined),
  instancesIn: () => Promise.resolve([]),
  claimsIn: () => Promise.resolve([]),
  instance: () => Promise.resolve(undefined),
  liveInstance: () => Promise.resolve(undefined),
  freshNamespace: () => Promise.resolve({ labels: {} }),
  liveUsageIn: () => Promise.resolve({ instances: [], resourceVersion: "1", claims: [] }),
};
const logger = { debug: () => {}, info: () => {}, warn: () => {} } as never;
const policy = { ...openPolicy, maxValuesKiB: 1 };
const { validate } = admissionHandlers(policy, lookups, logger);

const review = (request: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "u-1", operation: "CREATE", namespace: "team-a", name: "web", ...request },
});
const instance = (spec: unknown) => ({
  apiVersion: "example.com/v1",
  kind: "MyAppInstance",
  metadata: { name: "web", namespace: "team-a", managedFields: [{ manager: "kubectl", fieldsV1: { "f:spec": {} } }] },
  spec,
});
const chart = { oci: "oci://ghcr.io/team-a/web", version: "1.0.0" };
/** The keys and items in `value`: what the event loop's side of the thread pays for. */
const nodes = (value: unknown): number =>
  typeof value === "object" && value !== null
    ? Object.values(value).reduce((sum: number, child) => sum + 1 + nodes(child), 0)
    : 0;
const manyKeys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

describe("ReviewParseThread", () => {
  const thread = new ReviewParseThread(policy.maxValuesKiB);
  after(() => thread.close());
  const onThread = (body: unknown) => thread.parse(Buffer.from(JSON.stringify(body)));

  it("gives back only what the handlers read, and they judge it as the whole review", async () => {
    const reviews = [
      review({ object: instance({ image: "nginx", replicas: 2 }) }),
      // Too many fields outside spec.values, as only a forged review has (the apiserver prunes unknown ones).
      review({ object: instance({ image: "nginx", ...manyKeys(50_000) }) }),
      review({ object: instance({ image: "nginx", chart, values: manyKeys(5_000) }) }),
      // An UPDATE that shrinks values already over the limit: judged by their sizes, both kept.
      review({
        operation: "UPDATE",
        object: instance({ image: "nginx", chart, values: manyKeys(4_000) }),
        oldObject: instance({ image: "nginx", chart, values: manyKeys(5_000) }),
      }),
      review({ operation: "UPDATE", subResource: "scale", object: { spec: { replicas: 3 } } }),
      review({ dryRun: true, object: [1, 2], name: { not: "a name" } }),
    ];
    for (const body of reviews) {
      const slim = await onThread(body);
      assert.ok(nodes(slim) < 1_000, "what comes back has few keys, whatever was sent");
      assert.deepEqual(
        await validate(slim).catch((error: Error) => error.message),
        await validate(body).catch((error: Error) => error.message),
        JSON.stringify(body).slice(0, 200),
      );
    }
    // An object where a string belongs comes back empty: still refused, without quoting what was sent.
    await assert.rejects(
      validate(await onThread({ apiVersion: "admission.k8s.io/v1", kind: { big: "x".repeat(100_000) } })),
      /not an AdmissionReview .*kind \{\}\)$/,
    );
    const slim = (await onThread(reviews[1])) as { request: { object: { spec: object; metadata: object } } };
    assert.equal(Object.keys(slim.request.object.spec).length, maxSpecFields + 1);
    assert.deepEqual(slim.request.object.metadata, { name: "web" });
  });

  it("gives back values nested thousands deep as a small stand-in with the same verdict", async () => {
    // GIVEN values 9,000 levels deep within the size limit (the event loop's structured clone of them overflows its
    // stack, which left the review to the deadline); written by hand, as JSON.stringify would overflow too
    const deepThread = new ReviewParseThread(undefined);
    const { validate: validateOpen } = admissionHandlers(openPolicy, lookups, logger);
    const values = `${'{"a":'.repeat(9_000)}1${"}".repeat(9_000)}`;
    const text = JSON.stringify(review({ object: instance({ image: "nginx", chart, values: "VALUES" }) })).replace(
      '"VALUES"',
      values,
    );
    try {
      // WHEN it is parsed on the thread
      const slim = await deepThread.parse(Buffer.from(text));
      // THEN what comes back is small, and refused for its depth as the whole review is
      assert.ok(nodes(slim) < 1_000);
      const verdict = (body: unknown) => validateOpen(body).catch((error: Error) => error.message);
      assert.deepEqual(await verdict(slim), await verdict(JSON.parse(text)));
      assert.match(JSON.stringify(await verdict(slim)), /at most 100 levels deep/);
      // AND nested past JSON.stringify's stack and over the size limit, they are counted as the event loop counts
      // them: the same size verdict
      const deeper = text.replace(values, `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`);
      const sized = (body: unknown) => validate(body).catch((error: Error) => error.message);
      const onSizedThread = await thread.parse(Buffer.from(deeper));
      assert.deepEqual(await sized(onSizedThread), await sized(JSON.parse(deeper)));
      assert.match(JSON.stringify(await sized(onSizedThread)), /is 586\.\d KiB as JSON/);
    } finally {
      await deepThread.close();
    }
  });

  it("refuses what is not JSON, and the event loop turns while a heavy body is parsed", async () => {
    await assert.rejects(thread.parse(Buffer.from("{nope")), ReviewSyntaxError);
    const heavy = Buffer.from(JSON.stringify(review({ object: instance({ image: "nginx", ...manyKeys(250_000) }) })));
    let turns = 0;
    let parsed = false;
    const parsing = thread.parse(heavy).then(() => (parsed = true));
    // Parsed here, the body would hold the loop for its whole parse: not one turn until it is done.
    while (!parsed) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
    }
    await parsing;
    assert.ok(turns > 10, `${turns} turns of the event loop during the parse`);
  });
});
