/**
 * `webhooks.defaults: "policy"` through the real apiserver: the MutatingAdmissionPolicy and binding the component
 * installs (components/defaults-policy.ts) give every write the same `spec.podSecurityLevel` the operator's
 * mutating webhook would (operator/admission/mutate.ts `defaultsFor`), on a table of namespaces, stored instances
 * and writes; no operator runs, so the apiserver alone gave what is seen.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it, type TestContext } from "node:test";
import { apiVersion, kind } from "../../api/index.ts";
import { namespaceDefaultsPolicy } from "../../components/defaults-policy.ts";
import { resolveSettings } from "../../components/settings.ts";
import type { KubeObject } from "../../kube/index.ts";
import { defaultsFor } from "../../operator/admission/mutate.ts";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { ensureCrd, type Instance } from "../support/operator.ts";

const client = adminClient();
const podSecurity = "pod-security.kubernetes.io/enforce";
type Spec = Record<string, unknown>;

const instance = (namespace: string, name: string, spec: Spec): Instance =>
  ({ apiVersion, kind, metadata: { name, namespace }, spec }) as Instance;
const base: Spec = { replicas: 1, image: "nginx:1.27", port: 80 };

/** The namespace labels of each case's namespace. */
const namespaceLabels = {
  baseline: { [podSecurity]: "baseline" },
  privileged: { [podSecurity]: "privileged" },
  restricted: { [podSecurity]: "restricted" },
  unlabelled: {},
} as const;
type NamespaceKind = keyof typeof namespaceLabels;

interface Case {
  readonly name: string;
  readonly namespace: NamespaceKind;
  /** The stored instance's spec before the write (created before the policy exists); none: the write creates. */
  readonly stored?: Spec;
  /** The spec the write sends (a replace of the whole object). */
  readonly written: Spec;
}

const cases: readonly Case[] = [
  { name: "create-baseline", namespace: "baseline", written: base },
  { name: "create-privileged", namespace: "privileged", written: base },
  { name: "create-restricted-ns", namespace: "restricted", written: base },
  { name: "create-unlabelled", namespace: "unlabelled", written: base },
  { name: "create-chosen", namespace: "baseline", written: { ...base, podSecurityLevel: "Restricted" } },
  // Re-applying a manifest that never names the level keeps the default it was given...
  {
    name: "keeps-default",
    namespace: "baseline",
    stored: { ...base, podSecurityLevel: "Baseline" },
    written: { ...base, image: "nginx:1.28" },
  },
  // ...but an instance stored without it (or with another level) is not rolled to Baseline by some other change.
  { name: "stored-without", namespace: "baseline", stored: base, written: { ...base, image: "nginx:1.28" } },
  {
    name: "stored-restricted",
    namespace: "privileged",
    stored: { ...base, podSecurityLevel: "Restricted" },
    written: { ...base, replicas: 2 },
  },
  { name: "update-unlabelled", namespace: "unlabelled", stored: base, written: { ...base, replicas: 2 } },
];

/** What the operator's webhook would store: the written spec with its JSON patch applied. */
function webhookVerdict(test: Case): unknown {
  const written = { spec: test.written };
  const patch = defaultsFor(written, namespaceLabels[test.namespace], test.stored && { spec: test.stored });
  return patch.length > 0 ? patch[0]?.value : test.written.podSecurityLevel;
}

/** Installs the component's policy and binding for `namespaces`, removed when the test ends. */
async function installPolicy(t: TestContext, namespaces: readonly string[]): Promise<void> {
  const resolved = resolveSettings(`defaults-${randomBytes(3).toString("hex")}`, {
    namespace: "default",
    createNamespace: false,
    operatorPlacement: "external",
    watchNamespaces: [...namespaces],
    webhooks: { url: "https://127.0.0.1:9443", defaults: "policy" },
  });
  assert.ok(resolved.ok, JSON.stringify(resolved));
  const built = namespaceDefaultsPolicy(resolved.settings);
  assert.ok(built);
  const objects = [built.policy, built.binding] as unknown as KubeObject[];
  t.after(async () => {
    for (const object of objects.toReversed())
      await client.delete(object.apiVersion, object.kind, object.metadata.name ?? "").catch(() => undefined);
  });
  for (const object of objects) await client.apply(object, { fieldManager: "myapp-test", force: true });
}

/** The apiserver picks a new policy up from its informers: waits until a dry-run create in `namespace` has it. */
async function policyInEffect(namespace: string): Promise<void> {
  await waitFor(
    "the policy to give its default",
    async () => {
      const probe = await client.create(instance(namespace, "probe", base), { dryRun: true });
      return probe.spec.podSecurityLevel === "Baseline" || undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

describe("the namespace defaults as a MutatingAdmissionPolicy", { timeout: 5 * 60_000 }, () => {
  it("gives each write the level the mutating webhook would, and nothing else", async (t) => {
    await ensureCrd(client);
    const namespaces = {} as Record<NamespaceKind, string>;
    for (const [which, labels] of Object.entries(namespaceLabels) as [NamespaceKind, Record<string, string>][]) {
      namespaces[which] = await testNamespace(t, client, `defaults-${which}`);
      if (Object.keys(labels).length > 0)
        await client.mergePatch("v1", "Namespace", namespaces[which], undefined, { metadata: { labels } });
    }
    // The stored instances first: before the policy exists, so they are stored exactly as written.
    for (const test of cases)
      if (test.stored) await client.create(instance(namespaces[test.namespace], test.name, test.stored));

    await installPolicy(t, Object.values(namespaces));
    await policyInEffect(namespaces.baseline);

    for (const test of cases) {
      const namespace = namespaces[test.namespace];
      let written: Instance;
      if (test.stored) {
        const stored = await client.get<Instance>(apiVersion, kind, test.name, namespace);
        written = await client.replace({ ...stored, spec: test.written } as Instance);
      } else {
        written = await client.create(instance(namespace, test.name, test.written));
      }
      assert.equal(written.spec.podSecurityLevel, webhookVerdict(test), test.name);
      const { podSecurityLevel: _level, ...rest } = written.spec as unknown as Spec;
      const { podSecurityLevel: _sent, ...sent } = test.written;
      assert.deepEqual(
        Object.fromEntries(Object.keys(sent).map((key) => [key, rest[key]])),
        sent,
        `${test.name}: nothing else changed`,
      );
    }
    // The verdicts are not all the same: the table exercises both answers.
    assert.deepEqual(new Set(cases.map(webhookVerdict)), new Set(["Baseline", "Restricted", undefined]));
  });

  it("gives the default to a server-side apply, and keeps it when the same manifest is applied again", async (t) => {
    await ensureCrd(client);
    const namespace = await testNamespace(t, client, "defaults-ssa");
    await client.mergePatch("v1", "Namespace", namespace, undefined, {
      metadata: { labels: { [podSecurity]: "baseline" } },
    });
    await installPolicy(t, [namespace]);
    await policyInEffect(namespace);
    const apply = (image: string) =>
      client.apply<Instance>(instance(namespace, "rooted", { ...base, image }), { fieldManager: "tenant" });
    assert.equal((await apply("nginx:1.27")).spec.podSecurityLevel, "Baseline");
    const again = await apply("nginx:1.28");
    assert.equal(again.spec.podSecurityLevel, "Baseline", "re-applying the manifest keeps the level");
    assert.equal(again.spec.image, "nginx:1.28");
  });
});
