/**
 * The validating webhook's verdicts, rule by rule: each refuses what breaks it with a message that names the
 * field, the rule's flag or label and the limit, allows what keeps to it, and never refuses an UPDATE for
 * what it does not change or grow.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  formatBytes,
  instanceLabelValue,
  myAppInstanceSpecSchema,
  type MyAppInstanceObject,
  type MyAppInstanceSpecInput,
} from "../../../../api/index.ts";
import { chartSource, ChartFetchError } from "../../../../chart/sources.ts";
import { hasBudget } from "../../../../operator/admission/namespace-budget.ts";
import { openPolicy, type PlatformPolicy } from "../../../../operator/admission/policy.ts";
import {
  factsNeeded,
  validateInstance,
  type AdmissionFacts,
  type AdmittedInstance,
} from "../../../../operator/admission/validate.ts";

function instance(spec: Partial<MyAppInstanceSpecInput> = {}, name = "web", namespace = "team-a"): AdmittedInstance {
  return { name, namespace, spec: myAppInstanceSpecSchema.parse({ image: "nginx:1.27", ...spec }) };
}

function stored(name: string, spec: Partial<MyAppInstanceSpecInput>, deleting = false): MyAppInstanceObject {
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: { name, namespace: "team-a", ...(deleting ? { deletionTimestamp: "2025-01-01T00:00:00Z" } : {}) },
    spec: myAppInstanceSpecSchema.parse({ image: "nginx:1.27", ...spec }),
  } as MyAppInstanceObject;
}

function policy(overrides: Partial<PlatformPolicy>): PlatformPolicy {
  return { ...openPolicy, ...overrides };
}

const messages = (violations: readonly { message: string }[]) => violations.map((violation) => violation.message);

describe("validateInstance: the open policy", () => {
  it("admits anything the CRD admits, and needs no lookup", () => {
    const big = instance({ replicas: 500, storage: "10Ti", image: "evil.io/x/y:1" });
    assert.deepEqual(validateInstance(big, undefined, {}, openPolicy), []);
    assert.deepEqual(factsNeeded(big, undefined, openPolicy), {
      namespace: true,
      instances: true,
      claims: true,
      storageClass: undefined,
      defaultStorageClass: false,
      chartConfigMap: undefined,
    });
    assert.equal(hasBudget({ labels: {} }, openPolicy), false);
  });
});

describe("allowed registries", () => {
  const only = policy({ allowedRegistries: ["docker.io/library", "ghcr.io/acme"] });

  it("refuses another registry, naming the field, the normalised name, the list and the flag", () => {
    const violations = validateInstance(instance({ image: "acme/app:1" }), undefined, {}, only);
    assert.deepEqual(violations, [
      {
        field: "spec.image",
        rule: "allowedRegistries",
        message:
          "spec.image: acme/app:1 (docker.io/acme/app) is not from a registry the platform allows (only " +
          "docker.io/library, ghcr.io/acme, --allowed-registries); use an image from one of them",
      },
    ]);
    assert.equal(validateInstance(instance({ image: "ghcr.io/acme-evil/app" }), undefined, {}, only).length, 1);
  });

  it("allows listed registries", () => {
    assert.deepEqual(validateInstance(instance({ image: "nginx" }), undefined, {}, only), []);
    assert.deepEqual(validateInstance(instance({ image: "ghcr.io/acme/app:2" }), undefined, {}, only), []);
  });

  it("an UPDATE that keeps an image no longer allowed is admitted; one that changes it is judged", () => {
    const old = instance({ image: "quay.io/x/app:1" });
    assert.deepEqual(validateInstance(instance({ image: "quay.io/x/app:1", replicas: 3 }), old, {}, only), []);
    assert.equal(validateInstance(instance({ image: "quay.io/x/app:2" }), old, {}, only).length, 1);
  });
});

describe("per-instance maxima", () => {
  const limits = policy({ maxReplicas: 10, maxStorage: "100Gi" });

  it("refuses more replicas than --max-replicas, in the words the platform asked for", () => {
    assert.deepEqual(messages(validateInstance(instance({ replicas: 12 }), undefined, {}, limits)), [
      "spec.replicas: 12 is more than the platform allows per instance (at most 10, --max-replicas)",
    ]);
    assert.deepEqual(validateInstance(instance({ replicas: 10 }), undefined, {}, limits), []);
  });

  it("refuses a larger volume than --max-storage", () => {
    const violations = validateInstance(instance({ storage: "101Gi" }), undefined, {}, limits);
    assert.deepEqual(violations, [
      {
        field: "spec.storage",
        rule: "maxStorage",
        message: "spec.storage: 101Gi is more than the platform allows per volume (at most 100Gi, --max-storage)",
      },
    ]);
    assert.deepEqual(validateInstance(instance({ storage: "100Gi" }), undefined, {}, limits), []);
    // Another notation of the same size is the same size.
    assert.deepEqual(validateInstance(instance({ storage: "107374182400" }), undefined, {}, limits), []);
  });

  it("a maximum lowered after the fact refuses growth only", () => {
    const old = instance({ replicas: 12, storage: "200Gi" });
    // Same or fewer replicas, same storage, another image: admitted although both are over the maxima now.
    assert.deepEqual(
      validateInstance(instance({ replicas: 12, storage: "200Gi", image: "nginx:2" }), old, {}, limits),
      [],
    );
    assert.deepEqual(validateInstance(instance({ replicas: 11, storage: "200Gi" }), old, {}, limits), []);
    // Growing is judged.
    assert.deepEqual(
      validateInstance(instance({ replicas: 13, storage: "300Gi" }), old, {}, limits).map(
        (violation) => violation.rule,
      ),
      ["maxReplicas", "maxStorage"],
    );
  });
});

describe("chart sources", () => {
  const oci = { oci: "oci://evil.io/charts/web", version: "1.0.0" };

  it("refuses a source --chart-sources does not cover, in the chart engine's own words", async () => {
    const violations = validateInstance(
      instance({ chart: oci }),
      undefined,
      {},
      policy({ chartSources: ["oci://ghcr.io/acme/"] }),
    );
    assert.equal(violations.length, 1);
    assert.equal(violations[0]?.field, "spec.chart.oci");
    assert.equal(violations[0]?.rule, "chartSources");
    // The operator would later refuse it with exactly these words (Degraded, ChartSourceNotAllowed).
    const fetch = chartSource({
      readConfigMap: () => Promise.resolve(undefined),
      allowedSources: ["oci://ghcr.io/acme/"],
    });
    const refusal = await fetch(instance({ chart: oci }).spec.chart!, "team-a").then(
      () => assert.fail("fetched"),
      (error: unknown) => error as ChartFetchError,
    );
    assert.equal(violations[0]?.message, `spec.chart.oci: ${refusal.message}`);
    assert.match(
      refusal.message,
      /oci:\/\/evil\.io\/charts\/web:1\.0\.0 is not an allowed chart source: the platform allows oci:\/\/ghcr\.io\/acme\/ \(--chart-sources\)/,
    );
  });

  it("with no sources listed, only ConfigMap charts are allowed; a repo is named by its field", () => {
    const repo = { repo: "https://charts.example.com/", name: "web", version: "1.0.0" };
    assert.deepEqual(messages(validateInstance(instance({ chart: repo }), undefined, {}, openPolicy)), [
      "spec.chart.repo: chart web 1.0.0 from https://charts.example.com/ is not an allowed chart source: the " +
        "platform allows ConfigMap charts only (--chart-sources); use a chart in a ConfigMap, or ask the platform " +
        "to add the source",
    ]);
  });

  it("allows covered sources, and an UPDATE keeping a source that is no longer listed", () => {
    const allowed = policy({ chartSources: ["oci://evil.io/charts/"] });
    assert.deepEqual(validateInstance(instance({ chart: oci }), undefined, {}, allowed), []);
    const old = instance({ chart: oci });
    assert.deepEqual(validateInstance(instance({ chart: { ...oci, version: "1.1.0" } }), old, {}, openPolicy), []);
  });
});

describe("a namespace's chart sources", () => {
  const platform = policy({ chartSources: ["oci://ghcr.io/"] });
  const teamB = { oci: "oci://ghcr.io/team-b/web", version: "1.0.0" };
  const narrowed = { namespace: { labels: {}, chartSources: "oci://ghcr.io/team-a/" } };

  it("reads the Namespace when a change names a new remote source the platform could allow", () => {
    // (A create reads it for the budgets anyway; an UPDATE that grows nothing shows the rule alone.)
    const before = instance();
    assert.equal(factsNeeded(instance({ chart: teamB }), before, platform).namespace, true);
    assert.equal(factsNeeded(instance({ chart: teamB }), instance({ chart: teamB }), platform).namespace, false);
    assert.equal(factsNeeded(instance({ chart: { configMap: "c" } }), before, platform).namespace, false);
    // Nothing to narrow: every remote source is refused anyway.
    assert.equal(factsNeeded(instance({ chart: teamB }), before, openPolicy).namespace, false);
  });

  it("refuses a source the platform allows but the namespace's annotation does not, in the chart engine's words", async () => {
    const violations = validateInstance(instance({ chart: teamB }), undefined, narrowed, platform);
    const fetch = chartSource({
      readConfigMap: () => Promise.resolve(undefined),
      allowedSources: platform.chartSources,
      namespaceSources: () => Promise.resolve(narrowed.namespace.chartSources),
    });
    const refusal = await fetch(teamB, "team-a").then(
      () => assert.fail("fetched"),
      (error: unknown) => error as ChartFetchError,
    );
    assert.deepEqual(messages(violations), [`spec.chart.oci: ${refusal.message}`]);
    assert.match(
      refusal.message,
      /in namespace team-a: its annotation myapp\.example\.com\/chart-sources allows oci:\/\/ghcr\.io\/team-a\//,
    );
  });

  it("allows what it names, the platform's own chart, and an UPDATE keeping its source", () => {
    const teamA = { oci: "oci://ghcr.io/team-a/web", version: "1.0.0" };
    assert.deepEqual(validateInstance(instance({ chart: teamA }), undefined, narrowed, platform), []);
    const withDefault = policy({ chartSources: ["oci://ghcr.io/"], defaultChart: { ...teamB, version: "0.9.0" } });
    assert.deepEqual(validateInstance(instance({ chart: teamB }), undefined, narrowed, withDefault), []);
    const old = instance({ chart: teamB });
    assert.deepEqual(
      validateInstance(instance({ chart: { ...teamB, version: "2.0.0" } }), old, narrowed, platform),
      [],
    );
    // No annotation: the platform's list.
    assert.deepEqual(
      validateInstance(instance({ chart: teamB }), undefined, { namespace: { labels: {} } }, platform),
      [],
    );
  });
});

describe("chart ConfigMaps", () => {
  const chart = { configMap: "web-chart" };

  it("is looked up on create, and when the name changes", () => {
    assert.equal(factsNeeded(instance({ chart }), undefined, openPolicy).chartConfigMap, "web-chart");
    assert.equal(factsNeeded(instance({ chart }), instance({ chart }), openPolicy).chartConfigMap, undefined);
    assert.equal(
      factsNeeded(instance({ chart: { configMap: "web-chart-2" } }), instance({ chart }), openPolicy).chartConfigMap,
      "web-chart-2",
    );
  });

  it("refuses a missing ConfigMap, and one without the chart key, saying how to make it", () => {
    assert.deepEqual(validateInstance(instance({ chart }), undefined, {}, openPolicy), [
      {
        field: "spec.chart.configMap",
        rule: "chartConfigMap",
        message:
          "spec.chart.configMap: ConfigMap team-a/web-chart does not exist; create it before the instance " +
          "(kubectl create configmap web-chart --from-file=chart.tgz=./chart.tgz)",
      },
    ]);
    assert.deepEqual(
      messages(
        validateInstance(instance({ chart }), undefined, { chartConfigMap: { keys: ["other.tgz"] } }, openPolicy),
      ),
      [
        "spec.chart.configMap: ConfigMap team-a/web-chart has no binaryData key chart.tgz, so it holds no chart; " +
          "create it with kubectl create configmap web-chart --from-file=chart.tgz=./chart.tgz",
      ],
    );
  });

  it("admits a ConfigMap that holds a chart, and an UPDATE that keeps the name", () => {
    assert.deepEqual(
      validateInstance(instance({ chart }), undefined, { chartConfigMap: { keys: ["chart.tgz"] } }, openPolicy),
      [],
    );
    assert.deepEqual(validateInstance(instance({ chart, replicas: 2 }), instance({ chart }), {}, openPolicy), []);
  });
});

describe("StorageClasses", () => {
  const withClass = { storage: "1Gi", storageClassName: "fast" };
  const expandable = policy({ requireExpandableStorage: true });

  it("refuses a class that does not exist", () => {
    assert.equal(factsNeeded(instance(withClass), undefined, openPolicy).storageClass, "fast");
    assert.deepEqual(validateInstance(instance(withClass), undefined, {}, openPolicy), [
      {
        field: "spec.storageClassName",
        rule: "storageClassExists",
        message:
          'spec.storageClassName: StorageClass "fast" does not exist in the cluster; name one that does ' +
          "(kubectl get storageclass), or leave storageClassName out for the cluster's default class",
      },
    ]);
    assert.deepEqual(
      validateInstance(instance(withClass), undefined, { storageClass: { name: "fast" } }, openPolicy),
      [],
    );
  });

  it("with --require-expandable-storage, refuses a class that cannot expand", () => {
    const rigid = { storageClass: { name: "fast", allowVolumeExpansion: false } };
    assert.deepEqual(messages(validateInstance(instance(withClass), undefined, rigid, expandable)), [
      'spec.storageClassName: StorageClass "fast" does not allow volume expansion, and the platform requires ' +
        "classes that do (--require-expandable-storage); name a class with allowVolumeExpansion: true",
    ]);
    assert.deepEqual(
      validateInstance(instance(withClass), undefined, { storageClass: { name: "fast" } }, expandable).length,
      1,
    );
    const flexible = { storageClass: { name: "fast", allowVolumeExpansion: true } };
    assert.deepEqual(validateInstance(instance(withClass), undefined, flexible, expandable), []);
    // Without the flag a rigid class is fine.
    assert.deepEqual(validateInstance(instance(withClass), undefined, rigid, openPolicy), []);
  });

  it("with --require-expandable-storage, judges the default class volumes without a class would get", () => {
    const noClass = instance({ storage: "1Gi" });
    assert.equal(factsNeeded(noClass, undefined, expandable).defaultStorageClass, true);
    assert.equal(factsNeeded(noClass, undefined, openPolicy).defaultStorageClass, false);
    assert.equal(factsNeeded(instance(), undefined, expandable).defaultStorageClass, false);
    const rigidDefault = { defaultStorageClass: { name: "standard", allowVolumeExpansion: false } };
    assert.deepEqual(messages(validateInstance(noClass, undefined, rigidDefault, expandable)), [
      `spec.storageClassName: the cluster's default StorageClass "standard" does not allow volume expansion, and ` +
        "the platform requires classes that do (--require-expandable-storage); name a class with " +
        "allowVolumeExpansion: true",
    ]);
    // No default class at all: nothing to judge (the claim waits, and the operator says so).
    assert.deepEqual(validateInstance(noClass, undefined, {}, expandable), []);
  });

  it("an UPDATE of an instance whose volumes exist does not judge its class again", () => {
    const old = instance(withClass);
    assert.equal(factsNeeded(instance({ ...withClass, replicas: 2 }), old, expandable).storageClass, undefined);
    assert.deepEqual(validateInstance(instance({ ...withClass, replicas: 2 }), old, {}, expandable), []);
    // Storage added to an instance that had none: the volumes are about to be made, so the class is judged.
    assert.equal(factsNeeded(instance(withClass), instance(), openPolicy).storageClass, "fast");
    assert.equal(factsNeeded(instance({ storage: "1Gi" }), instance(), expandable).defaultStorageClass, true);
  });
});

describe("the size of spec.values", () => {
  const limited = policy({ maxValuesKiB: 1 });
  // {"blob":"xxx…"}: 11 bytes of JSON around the string.
  const values = (bytes: number) => ({ blob: "x".repeat(bytes - 11) });

  it("refuses values over --render-values, naming the field, their size, the limit and the flag", () => {
    assert.deepEqual(validateInstance(instance({ values: values(2048) }), undefined, {}, limited), [
      {
        field: "spec.values",
        rule: "maxValuesSize",
        message: "spec.values: is 2 KiB as JSON; the platform allows at most 1 KiB (--render-values)",
      },
    ]);
    // One byte over is over, and says so.
    assert.match(
      messages(validateInstance(instance({ values: values(1025) }), undefined, {}, limited)).join(),
      /is 1\.1 KiB as JSON/,
    );
  });

  it("allows values up to the limit, and needs no lookup for them", () => {
    assert.deepEqual(validateInstance(instance({ values: values(1024) }), undefined, {}, limited), []);
    assert.deepEqual(factsNeeded(instance({ values: values(4096) }), instance(), limited), {
      namespace: false,
      instances: false,
      claims: false,
      storageClass: undefined,
      defaultStorageClass: false,
      chartConfigMap: undefined,
    });
  });

  it("a limit lowered after the fact refuses growth only", () => {
    const old = instance({ values: values(4096) });
    assert.deepEqual(validateInstance(instance({ values: values(4096) }), old, {}, limited), []);
    assert.deepEqual(validateInstance(instance({ values: values(3000), replicas: 3 }), old, {}, limited), []);
    assert.equal(validateInstance(instance({ values: values(5000) }), old, {}, limited).length, 1);
  });

  it("the open policy measures nothing", () => {
    assert.deepEqual(validateInstance(instance({ values: values(1 << 20) }), undefined, {}, openPolicy), []);
  });
});

describe("namespace budgets", () => {
  const budgets = policy({ namespaceBudget: { instances: 3, replicas: 20, storage: "100Gi" } });
  const namespace = { labels: {} };

  it("refuses replicas beyond the namespace's total, counting the others", () => {
    const facts: AdmissionFacts = {
      namespace,
      instances: [stored("a", { replicas: 10 }), stored("b", { replicas: 8 })],
    };
    assert.deepEqual(validateInstance(instance({ replicas: 4 }), undefined, facts, budgets), [
      {
        field: "spec.replicas",
        rule: "namespaceMaxReplicas",
        message:
          "spec.replicas: namespace team-a may run at most 20 replicas in total (--namespace-max-replicas, or the " +
          "namespace label myapp.example.com/max-replicas); it runs 18 without this instance, which asks for 4",
      },
    ]);
    assert.deepEqual(validateInstance(instance({ replicas: 2 }), undefined, facts, budgets), []);
  });

  it("counts a chart instance by what its last render runs, where that is more than its spec", () => {
    const chart = { configMap: "app-chart" };
    const rendered = (name: string, replicas: number, storage: string) => ({
      ...stored(name, { chart, replicas: 1 }),
      status: { chartUsage: { replicas, storage } },
    });
    const facts: AdmissionFacts = { namespace, instances: [rendered("a", 12, "0"), rendered("b", 0, "95Gi")] };
    assert.deepEqual(messages(validateInstance(instance({ replicas: 8, storage: "6Gi" }), undefined, facts, budgets)), [
      "spec.replicas: namespace team-a may run at most 20 replicas in total (--namespace-max-replicas, or the " +
        "namespace label myapp.example.com/max-replicas); it runs 13 without this instance, which asks for 8",
      "spec.storage: namespace team-a may use at most 100Gi of storage in total (--namespace-max-storage, or the " +
        "namespace label myapp.example.com/max-storage); it uses 95Gi without this instance, which asks for " +
        "48Gi (6Gi for each of 8 replicas)",
    ]);
  });

  it("refuses an instance beyond the namespace's count", () => {
    const facts: AdmissionFacts = { namespace, instances: [stored("a", {}), stored("b", {}), stored("c", {})] };
    assert.deepEqual(messages(validateInstance(instance(), undefined, facts, budgets)), [
      "metadata.namespace: namespace team-a may have at most 3 instances (--namespace-max-instances, or the " +
        "namespace label myapp.example.com/max-instances); it has 3 without this one",
    ]);
  });

  it("counts storage as the volume size times the replicas", () => {
    const facts: AdmissionFacts = { namespace, instances: [stored("a", { storage: "30Gi", replicas: 3 })] };
    assert.deepEqual(messages(validateInstance(instance({ storage: "6Gi", replicas: 2 }), undefined, facts, budgets)), [
      "spec.storage: namespace team-a may use at most 100Gi of storage in total (--namespace-max-storage, or the " +
        "namespace label myapp.example.com/max-storage); it uses 90Gi without this instance, which asks for " +
        "12Gi (6Gi for each of 2 replicas)",
    ]);
    assert.deepEqual(validateInstance(instance({ storage: "5Gi", replicas: 2 }), undefined, facts, budgets), []);
  });

  it("does not count the instance itself (an UPDATE)", () => {
    const facts: AdmissionFacts = {
      namespace,
      instances: [stored("web", { replicas: 15 }), stored("a", { replicas: 5 })],
    };
    const old = instance({ replicas: 15 });
    assert.deepEqual(validateInstance(instance({ replicas: 15 }), old, facts, budgets), []);
    assert.deepEqual(
      validateInstance(instance({ replicas: 16 }), old, facts, budgets).map((violation) => violation.rule),
      ["namespaceMaxReplicas"],
    );
  });

  it("counts instances being deleted: a finalizer can hold one, its pods running, for as long as it likes", () => {
    // GIVEN a namespace whose 3 instances include one being deleted (held by a tenant's finalizer), 15 replicas
    const facts: AdmissionFacts = {
      namespace,
      instances: [stored("held", { replicas: 15 }, true), stored("a", { replicas: 5 }), stored("b", {})],
    };
    // WHEN another instance is created THEN it is refused on both counts, saying the deleted one still counts
    assert.deepEqual(messages(validateInstance(instance({ replicas: 1 }), undefined, facts, budgets)), [
      "metadata.namespace: namespace team-a may have at most 3 instances (--namespace-max-instances, or the " +
        "namespace label myapp.example.com/max-instances); it has 3 without this one; that counts 1 being deleted: an " +
        "instance counts until it is gone, as its workload runs until then",
      "spec.replicas: namespace team-a may run at most 20 replicas in total (--namespace-max-replicas, or the " +
        "namespace label myapp.example.com/max-replicas); it runs 21 without this instance, which asks for 1; " +
        "that counts 1 being deleted: an instance counts until it is gone, as its workload runs until then",
    ]);
    // AND a limit the instance being deleted takes no part of does not name it (deleting it would free nothing)
    const storageFull: AdmissionFacts = {
      namespace,
      instances: [stored("held", { replicas: 1 }, true), stored("a", { replicas: 1, storage: "100Gi" })],
    };
    assert.deepEqual(messages(validateInstance(instance({ storage: "1Gi" }), undefined, storageFull, budgets)), [
      "spec.storage: namespace team-a may use at most 100Gi of storage in total (--namespace-max-storage, or the " +
        "namespace label myapp.example.com/max-storage); it uses 100Gi without this instance, which asks for " +
        "1Gi (1Gi for each of 1 replicas)",
    ]);
  });

  it("counts the volume claims kept past their instances (deleted, scaled down) against the storage budget", () => {
    // GIVEN 100Gi of storage: instance a runs 1 replica of 40Gi after a scale-down from 3 (claims 1 and 2 kept),
    // and instance gone was deleted, its 30Gi claim kept
    const claim = (name: string, owner: string, storage: string) => ({
      name,
      instance: instanceLabelValue(owner),
      storage,
    });
    const facts: AdmissionFacts = {
      namespace,
      instances: [stored("a", { replicas: 1, storage: "40Gi" })],
      claims: [
        claim("data-a-0", "a", "40Gi"),
        claim("data-a-1", "a", "40Gi"),
        claim("data-a-2", "a", "40Gi"),
        claim("data-gone-0", "gone", "30Gi"),
      ],
    };
    // WHEN a new instance asks for 1Gi THEN it is refused: 40 in use, 110 kept, and the message says how to free it
    assert.deepEqual(messages(validateInstance(instance({ storage: "1Gi" }), undefined, facts, budgets)), [
      "spec.storage: namespace team-a may use at most 100Gi of storage in total (--namespace-max-storage, or the " +
        "namespace label myapp.example.com/max-storage); it uses 150Gi without this instance, which asks for 1Gi " +
        "(1Gi for each of 1 replicas); that counts 3 volume claims (110Gi: data-a-1, data-a-2, data-gone-0) kept " +
        "from deleted or scaled-down instances, which hold their data until deleted (kubectl delete pvc)",
    ]);
    // AND a namesake without storage counts none of them: they stay kept
    const namesake: AdmissionFacts = { ...facts, instances: [stored("gone", { replicas: 3 })] };
    assert.equal(validateInstance(instance({ storage: "1Gi" }), undefined, namesake, budgets).length, 1);
    // AND a chart instance counts those its chart's StatefulSet made (taken over from the template) by its usage,
    // not kept twice; those it does not make (its chart has no such StatefulSet) are kept, as a deleted instance's
    const charted: AdmissionFacts = {
      namespace,
      instances: [stored("a", { replicas: 2, storage: "40Gi", chart: { configMap: "c" } })],
      claims: facts.claims!.slice(0, 2).map((made) => ({ ...made, chartInstance: "a" })),
    };
    assert.deepEqual(validateInstance(instance({ storage: "20Gi" }), undefined, charted, budgets), []);
    const notMade: AdmissionFacts = { ...charted, claims: facts.claims!.slice(0, 2) };
    assert.match(
      messages(validateInstance(instance({ storage: "20Gi" }), undefined, notMade, budgets)).join(),
      /it uses 160Gi without this instance.*\(80Gi: data-a-0, data-a-1\)/s,
    );
    // AND a smaller recreation gets its old claim back whole: 120Gi on disk whatever the new spec asks
    const bigger: AdmissionFacts = { namespace, instances: [], claims: [claim("data-gone-0", "gone", "120Gi")] };
    assert.match(
      messages(validateInstance(instance({ storage: "10Gi" }, "gone"), undefined, bigger, budgets)).join(),
      /it uses 110Gi without this instance.*\(110Gi: data-gone-0\)/s,
    );
    // AND the instance gone, created again, gets its claim back: counted once, by its spec (with a's kept 80Gi,
    // 40 + 80 + 30 > 100; without them 40 + 30)
    assert.equal(validateInstance(instance({ storage: "30Gi" }), undefined, facts, budgets).length, 1);
    const fewer: AdmissionFacts = {
      ...facts,
      claims: facts.claims!.filter((c) => c.name === "data-a-0" || c.name === "data-gone-0"),
    };
    assert.deepEqual(validateInstance(instance({ storage: "30Gi" }, "gone"), undefined, fewer, budgets), []);
    // AND a scaled back up to 2 reuses its kept claim data-a-1, counted once (by its spec: 80Gi of 100)
    const mine: AdmissionFacts = { ...facts, instances: [], claims: facts.claims!.slice(0, 2) };
    const old = instance({ replicas: 1, storage: "40Gi" }, "a");
    assert.deepEqual(validateInstance(instance({ replicas: 2, storage: "40Gi" }, "a"), old, mine, budgets), []);
  });

  it("a budget lowered after the fact never refuses what does not grow", () => {
    const crowded: AdmissionFacts = {
      namespace,
      instances: [stored("a", { replicas: 30, storage: "100Gi" }), stored("b", {}), stored("c", {}), stored("d", {})],
    };
    const old = instance({ replicas: 4, storage: "10Gi" });
    for (const change of [
      instance({ replicas: 4, storage: "10Gi", image: "nginx:2" }),
      instance({ replicas: 1, storage: "10Gi" }),
    ]) {
      assert.deepEqual(validateInstance(change, old, crowded, budgets), []);
    }
    assert.deepEqual(factsNeeded(instance({ replicas: 3, storage: "10Gi" }), old, budgets).namespace, false);
    // Growing storage (a larger volume) in the crowded namespace is judged.
    assert.deepEqual(
      validateInstance(instance({ replicas: 4, storage: "11Gi" }), old, crowded, budgets).map(
        (violation) => violation.rule,
      ),
      ["namespaceMaxStorage"],
    );
  });

  it("the namespace's labels replace the flags' budgets, and say so", () => {
    const labelled = { labels: { "myapp.example.com/max-replicas": "4", "myapp.example.com/max-instances": "0" } };
    assert.equal(hasBudget(labelled, openPolicy), true);
    const facts: AdmissionFacts = { namespace: labelled, instances: [stored("a", { replicas: 2 })] };
    assert.deepEqual(messages(validateInstance(instance({ replicas: 3 }), undefined, facts, budgets)), [
      "metadata.namespace: namespace team-a may have at most 0 instances (the namespace's label " +
        "myapp.example.com/max-instances, in place of --namespace-max-instances); it has 1 without this one",
      "spec.replicas: namespace team-a may run at most 4 replicas in total (the namespace's label " +
        "myapp.example.com/max-replicas, in place of --namespace-max-replicas); it runs 2 without this instance, " +
        "which asks for 3",
    ]);
    // A larger budget by label admits what the flag would refuse.
    const generous = { labels: { "myapp.example.com/max-replicas": "100" } };
    const many: AdmissionFacts = { namespace: generous, instances: [stored("a", { replicas: 30 })] };
    assert.deepEqual(validateInstance(instance({ replicas: 30 }), undefined, many, budgets), []);
  });

  it("a bad label refuses growth with a message naming the label", () => {
    const bad = { labels: { "myapp.example.com/max-replicas": "lots", "myapp.example.com/max-storage": "1TB" } };
    const violations = validateInstance(
      instance({ storage: "1Gi" }),
      undefined,
      { namespace: bad, instances: [] },
      openPolicy,
    );
    assert.deepEqual(messages(violations), [
      'metadata.namespace: the namespace\'s label myapp.example.com/max-replicas is "lots", not a whole ' +
        "number of replicas; the platform owner must fix it before instances here can grow",
      'metadata.namespace: the namespace\'s label myapp.example.com/max-storage is "1TB", not a storage ' +
        "quantity such as 500Gi; the platform owner must fix it before instances here can grow",
    ]);
    assert.deepEqual(
      violations.map((violation) => violation.rule),
      ["namespaceBudgetLabel", "namespaceBudgetLabel"],
    );
    // An UPDATE that does not grow is not refused for it.
    const old = instance({ storage: "1Gi" });
    assert.deepEqual(
      validateInstance(instance({ storage: "1Gi", image: "nginx:2" }), old, { namespace: bad }, openPolicy),
      [],
    );
  });
});

describe("every violation at once", () => {
  it("lists each broken rule, in field order", () => {
    const strict = policy({
      allowedRegistries: ["ghcr.io/acme"],
      maxReplicas: 2,
      maxStorage: "1Gi",
      namespaceBudget: { instances: 1 },
    });
    const facts: AdmissionFacts = { namespace: { labels: {} }, instances: [stored("a", {})] };
    const violations = validateInstance(
      instance({ replicas: 3, storage: "2Gi", chart: { configMap: "c" } }),
      undefined,
      facts,
      strict,
    );
    assert.deepEqual(
      violations.map((violation) => `${violation.field} ${violation.rule}`),
      [
        "spec.image allowedRegistries",
        "spec.replicas maxReplicas",
        "spec.storage maxStorage",
        "spec.chart.configMap chartConfigMap",
        "metadata.namespace namespaceMaxInstances",
      ],
    );
  });
});

describe("formatBytes", () => {
  it("writes the shortest exact quantity", () => {
    const nanos = (bytes: bigint) => bytes * 10n ** 9n;
    assert.equal(formatBytes(0n), "0");
    assert.equal(formatBytes(nanos(90n * 2n ** 30n)), "90Gi");
    assert.equal(formatBytes(nanos(2n * 10n ** 12n)), "2T");
    assert.equal(formatBytes(nanos(1500n * 10n ** 6n)), "1500M");
    assert.equal(formatBytes(nanos(1025n)), "1025");
  });
});
