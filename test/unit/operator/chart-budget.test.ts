/**
 * Namespace budgets held to what charts render: a render that would grow its instance past the namespace's
 * replicas or storage is refused naming the namespace, the limit, where it was set and what the others take;
 * one that does not grow costs no read; renders checked at once cannot both take the last room; and what a
 * render reserved counts for its instance until it is forgotten.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  instanceLabelValue,
  myAppInstanceSpecSchema,
  type MyAppInstanceObject,
  type MyAppInstanceSpecInput,
  type MyAppInstanceStatus,
} from "../../../api/index.ts";
import type { ClaimFacts } from "../../../operator/admission/kept-claims.ts";
import type { NamespaceFacts } from "../../../operator/admission/validate.ts";
import { openPolicy, type PlatformPolicy } from "../../../operator/admission/policy.ts";
import type { LiveUsage } from "../../../operator/admission/lookups.ts";
import { chartBudget } from "../../../operator/chart-budget.ts";

const gi = 2n ** 30n * 10n ** 9n;

function stored(
  name: string,
  spec: Partial<MyAppInstanceSpecInput> = {},
  status?: MyAppInstanceStatus,
): MyAppInstanceObject {
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: { name, namespace: "team-a", resourceVersion: "1" },
    spec: myAppInstanceSpecSchema.parse({ image: "nginx:1.27", ...spec }),
    ...(status ? { status } : {}),
  } as MyAppInstanceObject;
}

/** Lookups over a cache (`instances`, `labels`, `claims`), and what the apiserver has: the same, or `live`. */
function lookups(
  instances: MyAppInstanceObject[],
  labels: Record<string, string> = {},
  claims: ClaimFacts[] = [],
  live: { instances?: MyAppInstanceObject[]; labels?: Record<string, string> } = {},
) {
  const reads = { namespace: 0, fresh: 0 };
  return {
    reads,
    namespace: async (): Promise<NamespaceFacts> => {
      reads.namespace++;
      return { labels };
    },
    instancesIn: async () => instances,
    claimsIn: async () => claims,
    freshNamespace: async (): Promise<NamespaceFacts> => ({ labels: live.labels ?? labels }),
    liveUsageIn: async (_namespace: string, withClaims: boolean) => {
      reads.fresh++;
      // Listed after every write the cache shows: those are older than the list.
      return { instances: live.instances ?? instances, resourceVersion: "1000", claims: withClaims ? claims : [] };
    },
  };
}

const key = (name: string) => ({ namespace: "team-a", name });

describe("chartBudget", () => {
  test("refuses a render that would run more replicas than the namespace has left, naming the budget", async () => {
    const read = lookups([stored("web", { replicas: 2 }), stored("other", { replicas: 5 })], {
      "myapp.example.com/max-replicas": "10",
    });
    const budget = chartBudget(openPolicy, read);
    assert.deepEqual(await budget.reserve(key("web"), { replicas: 6n, storageNanos: 0n }), {
      reason: "ChartOverBudget",
      outsideSpec: true,
      message:
        "the chart runs up to 6 replicas (its workloads' spec.replicas, or their autoscalers' maxReplicas), and " +
        "namespace team-a may run at most 10 in total (the namespace's label myapp.example.com/max-replicas, in " +
        "place of --namespace-max-replicas); it runs 5 without this instance; render less (spec.replicas or " +
        "spec.values), or ask the platform owner for a larger budget",
    });
    assert.equal(await budget.reserve(key("web"), { replicas: 5n, storageNanos: 0n }), undefined);
  });

  test("refuses storage past the flag's budget, counting other chart instances by their last render", async () => {
    const policy: PlatformPolicy = { ...openPolicy, namespaceBudget: { storage: "100Gi" } };
    const chartDb = stored("db", { storage: "1Gi" }, { chartUsage: { replicas: 3, storage: "90Gi" } });
    const budget = chartBudget(policy, lookups([stored("web"), chartDb]));
    const refusal = await budget.reserve(key("web"), { replicas: 1n, storageNanos: 20n * gi });
    assert.equal(refusal?.reason, "ChartOverBudget");
    assert.match(
      refusal?.message ?? "",
      /claim 20Gi \(claim templates × replicas\), and namespace team-a may use at most 100Gi of storage in total \(--namespace-max-storage, or the namespace label myapp\.example\.com\/max-storage\); it uses 90Gi without this instance/,
    );
  });

  test("counts the built-in template's claims kept past their instances as used storage", async () => {
    // GIVEN 100Gi, of which a deleted instance's kept claim holds 90Gi
    const policy: PlatformPolicy = { ...openPolicy, namespaceBudget: { storage: "100Gi" } };
    const kept = [{ name: "data-gone-0", instance: instanceLabelValue("gone"), storage: "90Gi" }];
    const budget = chartBudget(policy, lookups([stored("web")], {}, kept));
    // WHEN a chart asks for 20Gi THEN it is refused: 90Gi in use without it
    const refusal = await budget.reserve(key("web"), { replicas: 1n, storageNanos: 20n * gi });
    assert.match(refusal?.message ?? "", /it uses 90Gi without this instance/);
  });

  test("counts a chart's claims of replicas scaled away, and an instance's own claims once", async () => {
    // GIVEN 10Gi, and chart instance "a" rendered at 5 replicas of 2Gi, then scaled to 1: its status counts 2Gi, and
    // its StatefulSet kept the claims of the 4 replicas scaled away
    const policy: PlatformPolicy = { ...openPolicy, namespaceBudget: { storage: "10Gi" } };
    const a = stored("a", { chart: { configMap: "c" } }, { chartUsage: { replicas: 1, storage: "2Gi" } });
    const claims: ClaimFacts[] = [0, 1, 2, 3, 4].map((ordinal) => ({
      name: `data-a-${ordinal}`,
      instance: "a",
      storage: "2Gi",
      chartInstance: "a",
    }));
    const budget = chartBudget(policy, lookups([a, stored("b", { chart: { configMap: "c" } })], {}, claims));
    // WHEN another chart instance asks for 4Gi THEN it is refused: the kept claims hold 10Gi
    const refusal = await budget.reserve(key("b"), { replicas: 2n, storageNanos: 4n * gi });
    assert.match(refusal?.message ?? "", /it uses 10Gi without this instance/);
    // WHEN "a" renders its 5 replicas again THEN it fits: its own claims count once, against its render
    assert.equal(await budget.reserve(key("a"), { replicas: 5n, storageNanos: 10n * gi }), undefined);
  });

  test("counts a deleted instance's claims when a chart instance takes its name and makes no such claims", async () => {
    // GIVEN 20Gi, all held by the claims "db" kept when deleted; "db" is now a chart instance whose chart makes none
    const policy: PlatformPolicy = { ...openPolicy, namespaceBudget: { storage: "20Gi" } };
    const kept = [0, 1].map((ordinal) => ({ name: `data-db-${ordinal}`, instance: "db", storage: "10Gi" }));
    const db = stored("db", { chart: { configMap: "c" } }, { chartUsage: { replicas: 1, storage: "0" } });
    const budget = chartBudget(policy, lookups([db, stored("web", { chart: { configMap: "c" } })], {}, kept));
    // WHEN another chart instance asks for 10Gi THEN it is refused: the kept claims still hold 20Gi
    const refusal = await budget.reserve(key("web"), { replicas: 1n, storageNanos: 10n * gi });
    assert.match(refusal?.message ?? "", /it uses 20Gi without this instance/);
  });

  test("a render that asks no more than the instance takes costs no Namespace read and is never refused", async () => {
    const read = lookups([stored("web", { replicas: 3 })], { "myapp.example.com/max-replicas": "0" });
    const budget = chartBudget(openPolicy, read);
    assert.equal(await budget.reserve(key("web"), { replicas: 3n, storageNanos: 0n }), undefined);
    assert.equal(read.reads.namespace, 0);
    // Shrinking below a budget lowered since is allowed too.
    assert.equal(await budget.reserve(key("web"), { replicas: 1n, storageNanos: 0n }), undefined);
  });

  test("renders checked at once cannot both take the last room; a forgotten reservation frees it", async () => {
    const read = lookups([stored("a"), stored("b")], { "myapp.example.com/max-replicas": "6" });
    const budget = chartBudget(openPolicy, read);
    const [a, b] = await Promise.all([
      budget.reserve(key("a"), { replicas: 4n, storageNanos: 0n }),
      budget.reserve(key("b"), { replicas: 4n, storageNanos: 0n }),
    ]);
    assert.deepEqual([a === undefined, b === undefined].sort(), [false, true]);
    budget.forget(a === undefined ? key("a") : key("b"));
    const retried = await budget.reserve(a === undefined ? key("b") : key("a"), { replicas: 4n, storageNanos: 0n });
    assert.equal(retried, undefined);
  });

  test("a namespace without a budget admits any render", async () => {
    const budget = chartBudget(openPolicy, lookups([stored("web")]));
    assert.equal(await budget.reserve(key("web"), { replicas: 10_000n, storageNanos: 10_000n * gi }), undefined);
  });

  test("refuses on what the apiserver has: a shrink or a label raised a moment before, not in the cache yet, fits", async () => {
    const budgetOf = (replicas: string) => ({ "myapp.example.com/max-replicas": replicas });
    // GIVEN the cache shows other at 5 of 8 replicas; the apiserver has it at 2
    const shrunk = lookups([stored("other", { replicas: 5 })], budgetOf("8"), [], {
      instances: [stored("other", { replicas: 2 })],
    });
    // WHEN web renders 6 THEN it fits (2 + 6), after one fresh read
    assert.equal(
      await chartBudget(openPolicy, shrunk).reserve(key("web"), { replicas: 6n, storageNanos: 0n }),
      undefined,
    );
    assert.equal(shrunk.reads.fresh, 1);
    // AND a label raised from 8 to 11 fits 5 + 6
    const raised = lookups([stored("other", { replicas: 5 })], budgetOf("8"), [], { labels: budgetOf("11") });
    assert.equal(
      await chartBudget(openPolicy, raised).reserve(key("web"), { replicas: 6n, storageNanos: 0n }),
      undefined,
    );
    // AND a render that fits the cache reads nothing afresh
    const fits = lookups([stored("other", { replicas: 1 })], budgetOf("8"));
    assert.equal(
      await chartBudget(openPolicy, fits).reserve(key("web"), { replicas: 6n, storageNanos: 0n }),
      undefined,
    );
    assert.equal(fits.reads.fresh, 0);
  });

  test("a render judged afresh still counts what another render reserved meanwhile, and what the cache shows since", async () => {
    // GIVEN a budget of 10 replicas; the cache still shows g (deleted) at 5; the fresh list is slow to come
    let listed: (() => void) | undefined;
    const read = {
      ...lookups([stored("g", { replicas: 5 })], { "myapp.example.com/max-replicas": "10" }),
      liveUsageIn: () =>
        new Promise<LiveUsage>((resolve) => {
          listed = () => resolve({ instances: [], resourceVersion: "1000", claims: [] });
        }),
    };
    const budget = chartBudget(openPolicy, read);
    // WHEN web's render of 6 waits for its fresh read, and b's render of 5 reserves meanwhile (its instance is new:
    // neither the cache nor the list shows it; 5 + 5 fits beside g)
    const web = budget.reserve(key("web"), { replicas: 6n, storageNanos: 0n });
    await new Promise((resolve) => setImmediate(resolve));
    const fresh = read.liveUsageIn;
    read.liveUsageIn = async () => ({ instances: [], resourceVersion: "1000", claims: [] });
    assert.equal(await budget.reserve(key("b"), { replicas: 5n, storageNanos: 0n }), undefined);
    read.liveUsageIn = fresh;
    listed!();
    // THEN web is refused: 6 + b's 5 > 10, though the list shows neither
    assert.equal((await web)?.reason, "ChartOverBudget");
  });
});
