/**
 * The watch that wakes the certificate check when a webhook configuration changes: every event calls it, a watch
 * is watched by name, and one that fails is opened again after a backoff (never in a hot loop).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import type { KubeClient, KubeObject, WatchEvent, WatchOptions } from "../../../../kube/index.ts";
import { watchWebhookConfigurations } from "../../../../operator/admission/configuration-watch.ts";
import { FakeClock } from "../../runtime/fake-clock.ts";

const logger = pino({ level: "silent" });

/** A client whose watches are scripted: each call takes the next script (events, then an end or a failure). */
function scriptedClient(scripts: (WatchEvent<KubeObject>[] | Error)[]) {
  const calls: { kind: string; options: WatchOptions }[] = [];
  const client: Pick<KubeClient, "watch"> = {
    async *watch<T extends KubeObject>(_apiVersion: string, kind: string, options: WatchOptions = {}) {
      calls.push({ kind, options });
      const script = scripts.shift();
      if (script instanceof Error) throw script;
      if (script === undefined) {
        // No script left: an open watch that stays quiet until aborted.
        await new Promise<void>((resolve) => options.signal?.addEventListener("abort", () => resolve()));
        return;
      }
      for (const event of script) yield event as WatchEvent<T>;
    },
  };
  return { client, calls };
}

const event = (type: WatchEvent<KubeObject>["type"]): WatchEvent<KubeObject> => ({
  type,
  object: {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "c" },
  },
});

test("every added or modified configuration wakes the check; a failed watch is opened again after a backoff", async () => {
  const clock = new FakeClock();
  const stop = new AbortController();
  // GIVEN a first watch that sees the configuration and one change, then fails; a second that fails at once; a third
  // that stays open
  const { client, calls } = scriptedClient([[event("ADDED"), event("MODIFIED")], new Error("connection reset")]);
  let changes = 0;
  const watching = watchWebhookConfigurations({
    client,
    name: "myapp-operator",
    kinds: ["ValidatingWebhookConfiguration"],
    onChange: () => changes++,
    logger,
    clock,
    signal: stop.signal,
  });

  // THEN both events woke the check, and the watch was by name
  await clock.advance(0);
  assert.equal(changes, 2);
  assert.equal(calls[0]?.options.fieldSelector, "metadata.name=myapp-operator");
  assert.equal(calls.length, 1, "the next watch waits its backoff");

  // AND the watches are opened again after 1 s, then 2 s
  await clock.advance(1_000);
  assert.equal(calls.length, 2);
  await clock.advance(1_999);
  assert.equal(calls.length, 2);
  await clock.advance(1);
  assert.equal(calls.length, 3);

  // AND it ends when stopped
  stop.abort();
  await watching;
});
