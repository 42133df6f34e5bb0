/**
 * A quiet informer on the real apiserver: a watch with no events is known to be connected (the apiserver's 200
 * arrives before any event, and KubeClient.watch reports it), so an informer on an empty namespace counts as
 * connected and ready, while nothing at all is heard from it. The unit tests (test/unit/runtime/informer.test.ts)
 * cover the hour of silence and the failing watch with a fake clock; this proves the signal they rely on is real.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`). Works in a throwaway namespace.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { informerReadiness } from "../../operator/runtime/health-server.ts";
import { Informer } from "../../operator/runtime/informer.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { captureLogger } from "../unit/runtime/capture-logger.ts";

const client = adminClient();

test("a watch with no events reports it is open; an informer on an empty namespace is connected", async (t) => {
  const namespace = await testNamespace(t, client, "quiet");
  // GIVEN an empty namespace and a watch of its ConfigMaps without bookmarks, from the list's resourceVersion
  const list = await client.list("v1", "ConfigMap", { namespace, labelSelector: "quiet-test=yes" });
  const abort = new AbortController();
  let openedAt: number | undefined;
  const events: string[] = [];
  const started = performance.now();
  const consume = (async () => {
    for await (const event of client.watch("v1", "ConfigMap", {
      namespace,
      labelSelector: "quiet-test=yes",
      resourceVersion: list.metadata.resourceVersion,
      timeoutSeconds: 60,
      signal: abort.signal,
      onOpen: () => (openedAt = performance.now()),
    })) {
      events.push(event.type);
    }
  })();
  // WHEN nothing happens in it
  // THEN the apiserver's answer is reported, with no event at all: well inside the watch's 60 s, so a report that
  // came only when the apiserver ends the watch could not pass (how soon is reported, not judged)
  await waitFor("the watch to open", async () => openedAt, { timeoutMs: 30_000 });
  t.diagnostic(`opened after ${Math.round(openedAt! - started)} ms`);
  abort.abort();
  await consume;
  assert.deepEqual(events, []);

  // AND an informer on the same empty namespace is connected and ready once synced
  const informer = new Informer({
    client,
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace,
    labelSelector: "quiet-test=yes",
    logger: captureLogger().logger,
  });
  t.after(() => informer.stop());
  informer.start();
  await informer.waitForSync();
  // (within 30 s: before the apiserver's first bookmark, about a minute into a watch, could count as hearing from it)
  await waitFor("the informer's watch to open", async () => (informer.disconnectedFor() === 0 ? true : undefined), {
    timeoutMs: 30_000,
  });
  const { ok, detail } = informerReadiness(informer).check();
  assert.equal(ok, true);
  assert.match(detail, /^watching, heard \d+s ago$/);
  assert.equal(informer.store.size, 0);
});
