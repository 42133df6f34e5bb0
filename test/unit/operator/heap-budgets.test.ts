/**
 * What one tenant's renders may make the operator keep (operator/heap-budgets.ts, chart/rendered-children.ts): a
 * chart may render up to the output limit each time, and a namespace's instances one after another would otherwise
 * fill the heap with their objects kept whole (a namespace of 37 instances rendering 14 MB each killed an operator
 * on the component's default heap). Past its namespace's share, or the whole budget, a render's objects are kept
 * as identities; the other namespaces keep theirs whole.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderableChartKinds } from "../../../api/index.ts";
import type { RenderedObject } from "../../../chart/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { isContentWithheld, keptBudget, RenderedChildren } from "../../../operator/chart/index.ts";
import { heapBudgets } from "../../../operator/heap-budgets.ts";
import { watchedOwnedKinds } from "../../../operator/watched-kinds.ts";

const mebibyte = 1024 * 1024;
const padding = "x".repeat(mebibyte);

/** A render of `count` ConfigMaps of 1 MiB each. */
function render(namespace: string, name: string, count: number): RenderedObject[] {
  return Array.from({ length: count }, (_, n) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `${name}-${n}`, namespace },
    data: { padding },
  }));
}

/** One of the render's ConfigMaps as the watch delivers it: labelled and controlled by its instance. */
function delivered(namespace: string, name: string, n: number): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${name}-${n}`,
      namespace,
      uid: `cm-${name}-${n}`,
      labels: { "app.kubernetes.io/managed-by": "myapp-operator", "myapp.example.com/chart-instance": name },
      ownerReferences: [
        { apiVersion: "example.com/v1", kind: "MyAppInstance", name, uid: `uid-${name}`, controller: true },
      ],
    },
    data: { padding },
  };
}

describe("heapBudgets", () => {
  it("gives renders a quarter of the heap (at most 128 MiB) and what is kept whole an eighth, shared by namespace", () => {
    // The component's default container: 1536Mi, less two renders and the threads, three quarters: 624 MiB.
    const component = heapBudgets(624 * mebibyte, 16 * mebibyte);
    assert.equal(component.renderCacheBytes, 128 * mebibyte);
    assert.equal(component.keptChildren.maxBytes, 78 * mebibyte);
    assert.equal(component.keptChildren.namespaceBytes, 19.5 * mebibyte);
    // A small heap: a render at the output limit still fits a namespace, never more than the whole.
    const small = heapBudgets(128 * mebibyte, 16 * mebibyte);
    assert.equal(small.renderCacheBytes, 32 * mebibyte);
    assert.deepEqual(small.keptChildren, { maxBytes: 16 * mebibyte, namespaceBytes: 16 * mebibyte });
  });

  it("lets a namespace keep a sixty-fourth of the heap per kind of objects kept in part, at 2 KiB each", () => {
    assert.equal(heapBudgets(624 * mebibyte, 16 * mebibyte).partialObjectsPerNamespace, 4992);
    assert.equal(heapBudgets(128 * mebibyte, 16 * mebibyte).partialObjectsPerNamespace, 1024);
  });
});

describe("RenderedChildren with a budget", () => {
  it("keeps one namespace's renders whole up to its share; past it, as identities; other namespaces alike", () => {
    // GIVEN a budget of 8 MiB, 4 MiB a namespace (renders at the output limit of 4 MiB)
    const budget = new RenderedChildren(keptBudget(8 * mebibyte, 4 * mebibyte));
    const transform = watchedOwnedKinds(renderableChartKinds, budget).find(
      (kind) => kind.kind === "ConfigMap",
    )?.transform;
    assert.ok(transform);
    const record = (namespace: string, name: string) =>
      budget.record({ namespace, name }, `uid-${name}`, render(namespace, name, 3));

    // WHEN a tenant's instances render 3 MiB each, one after another
    assert.equal(record("tenant", "fat-0"), true);
    assert.equal(record("tenant", "fat-1"), false, "past the namespace's 4 MiB");
    assert.equal(record("tenant", "fat-2"), false);
    // THEN the first's objects are kept whole, the others' as identities
    assert.equal(isContentWithheld(transform(delivered("tenant", "fat-0", 0))), false);
    assert.equal(isContentWithheld(transform(delivered("tenant", "fat-1", 0))), true);
    assert.ok(budget.chargedBytes("tenant") < 4 * mebibyte);

    // AND another namespace keeps its own whole, until the whole budget is spent
    assert.equal(record("other", "app"), true);
    assert.equal(isContentWithheld(transform(delivered("other", "app", 2))), false);
    assert.equal(record("third", "app"), false, "past the 8 MiB of all namespaces");

    // AND a render again of the same instance replaces its charge; a forgotten one frees it, and the cache is
    // told to let go of what it kept whole of it (no watch event may come: a finalizer holds the objects)
    const withdrawn: string[] = [];
    budget.whenWithdrawn(({ namespace, name }) => withdrawn.push(`${namespace}/${name}`));
    assert.equal(record("tenant", "fat-0"), true, "its own charge is not counted twice");
    budget.forget({ namespace: "tenant", name: "fat-0" });
    assert.equal(budget.chargedBytes("tenant"), 0);
    assert.deepEqual(withdrawn, ["tenant/fat-0"]);
    assert.equal(record("tenant", "fat-1"), true, "room again");
    assert.equal(isContentWithheld(transform(delivered("tenant", "fat-1", 0))), false);
    // AND a render that grows past the share releases the charge of the one before only as the cache lets go of it
    const grown = [...render("tenant", "fat-1", 3), ...render("tenant", "fat-1-more", 2)];
    assert.equal(budget.record({ namespace: "tenant", name: "fat-1" }, "uid-fat-1", grown), false);
    assert.deepEqual(withdrawn, ["tenant/fat-0", "tenant/fat-1"]);
    assert.equal(isContentWithheld(transform(delivered("tenant", "fat-1", 0))), true);
    // AND forgetting what was never kept whole tells the cache nothing
    budget.forget({ namespace: "tenant", name: "fat-2" });
    assert.deepEqual(withdrawn, ["tenant/fat-0", "tenant/fat-1"]);
  });
});
