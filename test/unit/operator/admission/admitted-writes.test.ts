import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MyAppInstanceObject, MyAppInstanceSpec } from "../../../../api/index.ts";
import { AdmittedWrites } from "../../../../operator/admission/admitted-writes.ts";

const spec = (replicas: number) => ({ image: "nginx", replicas }) as MyAppInstanceSpec;
const cached = (name: string, replicas: number) =>
  ({ metadata: { name, namespace: "shop" }, spec: spec(replicas) }) as MyAppInstanceObject;
const names = (instances: readonly MyAppInstanceObject[]) =>
  instances.map((instance) => `${instance.metadata.name}:${instance.spec.replicas}`);

describe("AdmittedWrites", () => {
  it("counts an admitted create beside the cache, and an admitted change in place of the cached version", () => {
    let now = 0;
    const writes = new AdmittedWrites({ rememberMs: 30_000, clock: { monotonicMs: () => now } });
    writes.record({ name: "new", namespace: "shop", spec: spec(1) });
    writes.record({ name: "old", namespace: "shop", spec: spec(5) });
    assert.deepEqual(names(writes.merge("shop", [cached("old", 2)])), ["old:5", "new:1"]);
    assert.deepEqual(names(writes.merge("other", [cached("x", 1)])), ["x:1"]);
    // Once remembered long enough, the cache's word is all there is.
    now = 30_000;
    assert.deepEqual(names(writes.merge("shop", [cached("old", 2)])), ["old:2"]);
  });

  it("never counts a change smaller than the cached version: a forged shrink cannot free a budget", () => {
    const writes = new AdmittedWrites();
    writes.record({ name: "web", namespace: "shop", spec: { ...spec(0), storage: "1Gi" } });
    writes.record({ name: "db", namespace: "shop", spec: { ...spec(1), storage: "20Gi" } });
    const [web, db] = writes.merge("shop", [
      { ...cached("web", 5), spec: { ...spec(5), storage: "10Gi" } },
      { ...cached("db", 3), spec: { ...spec(3), storage: "2Gi" } },
    ]);
    assert.deepEqual([web?.spec.replicas, web?.spec.storage], [5, "10Gi"]);
    assert.deepEqual([db?.spec.replicas, db?.spec.storage], [3, "20Gi"]);
  });

  it("forgets expired writes as new ones come, keeps at most maxRemembered, and only what budgets read", () => {
    let now = 0;
    const writes = new AdmittedWrites({ rememberMs: 30_000, maxRemembered: 3, clock: { monotonicMs: () => now } });
    const values = { blob: "x".repeat(100_000) };
    for (let i = 0; i < 5; i++) {
      writes.record({ name: `a${i}`, namespace: `ns-${i}`, spec: { ...spec(1), storage: "1Gi", values } });
    }
    assert.equal(writes.size, 3);
    assert.deepEqual(names(writes.merge("ns-0", [])), []);
    const [kept] = writes.merge("ns-4", []);
    assert.deepEqual(kept?.spec, { replicas: 1, storage: "1Gi" });
    // No merge needed to forget: the next record drops what expired.
    now = 30_000;
    writes.record({ name: "late", namespace: "ns-9", spec: spec(1) });
    assert.equal(writes.size, 1);
  });

  it("keeps the cached status of a changed instance (what its chart's render takes of the budget)", () => {
    const writes = new AdmittedWrites();
    writes.record({ name: "old", namespace: "shop", spec: spec(5) });
    const status = { chartUsage: { replicas: 9, storage: "0" } };
    const [merged] = writes.merge("shop", [{ ...cached("old", 2), status }]);
    assert.deepEqual(merged?.status, status);
    assert.equal(merged?.spec.replicas, 5);
  });

  it("runs the judgements of one namespace one after another, failed ones included", async () => {
    const writes = new AdmittedWrites();
    const order: string[] = [];
    const slow =
      (label: string, fail = false) =>
      async () => {
        order.push(`${label} start`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`${label} end`);
        if (fail) throw new Error(label);
        return label;
      };
    const results = await Promise.allSettled([
      writes.serially("shop", slow("a", true)),
      writes.serially("shop", slow("b")),
      writes.serially("other", slow("c")),
    ]);
    assert.deepEqual(
      results.map((result) => result.status),
      ["rejected", "fulfilled", "fulfilled"],
    );
    assert.ok(order.indexOf("a end") < order.indexOf("b start"), order.join(", "));
    assert.ok(order.indexOf("c start") < order.indexOf("a end"), "another namespace does not wait");
  });

  it("caps each namespace on its own: a flood under one name, or under many fresh ones, keeps another's writes", () => {
    const writes = new AdmittedWrites({ maxRemembered: 10, maxPerNamespace: 4 });
    writes.record({ name: "web", namespace: "shop", spec: spec(2) });
    writes.record({ name: "db", namespace: "shop", spec: spec(1) });
    for (let i = 0; i < 20; i++) writes.record({ name: `ghost-${i}`, namespace: "shop-b", spec: spec(7) });
    assert.deepEqual(names(writes.merge("shop-b", [])), ["ghost-16:7", "ghost-17:7", "ghost-18:7", "ghost-19:7"]);
    for (let i = 0; i < 6; i++) writes.record({ name: "ghost", namespace: `fresh-${i}`, spec: spec(7) });
    // Beyond the cap, the namespace remembering the most forgets first.
    assert.equal(writes.size, 10);
    assert.deepEqual(names(writes.merge("shop", [])), ["web:2", "db:1"]);
    assert.deepEqual(names(writes.merge("shop-b", [])), ["ghost-18:7", "ghost-19:7"]);
    assert.deepEqual(names(writes.merge("fresh-5", [])), ["ghost:7"]);
  });

  it("names the unconfirmed writes the cache does not show, and forgets those the apiserver does not have", async () => {
    let now = 0;
    const writes = new AdmittedWrites({ settleMs: 1_000, clock: { monotonicMs: () => now } });
    writes.record({ name: "ghost", namespace: "shop", spec: spec(7) });
    writes.record({ name: "real", namespace: "shop", spec: spec(2) });
    writes.record({ name: "shown", namespace: "shop", spec: spec(1) });
    const asOf = writes.recorded;
    now = 10;
    writes.record({ name: "later", namespace: "shop", spec: spec(1) });
    const cache = [cached("shown", 1)];
    const suspects = writes.suspects("shop", cache, asOf);
    assert.deepEqual(
      suspects.map((suspect) => `${suspect.name}@${suspect.settledAt}`),
      ["ghost@1000", "real@1000"],
    );
    const reads: string[] = [];
    const live = (answer: { replicas: number } | undefined) => () => {
      reads.push("read");
      return Promise.resolve(answer);
    };
    await Promise.all([
      writes.confirm(suspects[0]!, live(undefined)),
      writes.confirm(suspects[0]!, live(undefined)),
      writes.confirm(suspects[1]!, live({ replicas: 2 })),
    ]);
    assert.equal(reads.length, 2, "one read per write");
    await writes.confirm(suspects[1]!, live({ replicas: 2 }));
    assert.equal(reads.length, 2, "none for a write answered already");
    assert.deepEqual(names(writes.merge("shop", cache)), ["shown:1", "real:2", "later:1"]);
    assert.deepEqual(names(writes.merge("shop", cache, { unconfirmed: false })), ["shown:1", "real:2"]);
    assert.deepEqual(writes.suspects("shop", cache), [{ namespace: "shop", name: "later", settledAt: 1_010 }]);
  });
});
