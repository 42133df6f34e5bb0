import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as pulumi from "@pulumi/pulumi";
import { instanceLabelValue } from "../../../api/index.ts";
import { guardNamespace } from "../../../components/kept-claims-guard.ts";
import { keptClaims, keptClaimsMessage, type ClaimSummary } from "../../../components/kept-claims.ts";
import type { ClusterConnection } from "../../../components/cluster-connection.ts";

const claim = (name: string, instance: string, extra: Partial<ClaimSummary> = {}): ClaimSummary => ({
  metadata: {
    name,
    labels: { "app.kubernetes.io/instance": instance, "app.kubernetes.io/managed-by": "myapp-operator" },
  },
  spec: { resources: { requests: { storage: "1Gi" } } },
  ...extra,
});

describe("kept claims", () => {
  it("keeps the claims of Retain instances and of instances gone, not of Delete ones or claims being deleted", () => {
    const kept = keptClaims(
      [
        claim("data-db-0", "db", { status: { capacity: { storage: "10Gi" } } }),
        claim("data-cache-0", "cache"),
        claim("data-old-0", "old"),
        claim("data-db-1", "db", { metadata: { name: "data-db-1", deletionTimestamp: "2026-12-01T00:00:00Z" } }),
        claim("data-tmp-0", "tmp"),
      ],
      [
        { metadata: { name: "db" }, spec: { storageReclaimPolicy: "Retain" } },
        { metadata: { name: "cache" }, spec: {} },
        { metadata: { name: "tmp" }, spec: { storageReclaimPolicy: "Delete", storage: "1Gi" } },
      ],
    );
    assert.deepEqual(kept, [
      { name: "data-cache-0", size: "1Gi", instance: "cache" },
      { name: "data-db-0", size: "10Gi", instance: "db" },
      { name: "data-old-0", size: "1Gi" },
    ]);
  });

  it("keeps a claim the operator did not label (a chart's, one made by hand): the namespace would take it too", () => {
    // GIVEN a chart's claim (the chart's labels) and one made by hand, beside a Delete instance's own
    const kept = keptClaims(
      [
        { metadata: { name: "data-web-0", labels: { "app.kubernetes.io/name": "myapp" } } },
        { metadata: { name: "scratch" }, spec: { resources: { requests: { storage: "5Gi" } } } },
        claim("data-tmp-0", "tmp"),
      ],
      [{ metadata: { name: "tmp" }, spec: { storageReclaimPolicy: "Delete", storage: "1Gi" } }],
    );
    // THEN both are kept, said to be no built-in template's, and the Delete instance's is left to the operator
    assert.deepEqual(kept, [
      { name: "data-web-0", size: "", foreign: true },
      { name: "scratch", size: "5Gi", foreign: true },
    ]);
    assert.match(keptClaimsMessage("shop", kept, true), /data-web-0 \(not the built-in template's\)/);
  });

  it("keeps the claims of a namesake gone before a Delete instance without volumes (nothing would delete them)", () => {
    const kept = keptClaims(
      [claim("data-tmp-0", "tmp")],
      [{ metadata: { name: "tmp" }, spec: { storageReclaimPolicy: "Delete" } }],
    );
    assert.deepEqual(kept, [{ name: "data-tmp-0", size: "1Gi", instance: "tmp" }]);
  });

  it("matches an instance with a long name by its hashed label value", () => {
    const long = `db-${"x".repeat(80)}`;
    assert.notEqual(instanceLabelValue(long), long);
    const kept = keptClaims(
      [claim("data-0", instanceLabelValue(long)), claim("data-1", long.slice(0, 63))],
      [{ metadata: { name: long }, spec: { storageReclaimPolicy: "Delete", storage: "1Gi" } }],
    );
    assert.deepEqual(
      kept.map((item) => item.name),
      ["data-1"],
      "the Delete instance's claim is matched; a lookalike label is not",
    );
  });

  it("says what would be lost, each claim, and both ways out", () => {
    const kept = [
      { name: "data-db-0", size: "10Gi", instance: "db" },
      { name: "data-old-0", size: "" },
    ];
    const warning = keptClaimsMessage("shop", kept, false);
    assert.match(warning, /^Deleting namespace shop would delete its data: it holds 2 volume claims/);
    assert.match(warning, /data-db-0 \(10Gi, instance db\), data-old-0 \(its instance is gone\)/);
    assert.match(warning, /retainOnDelete: true/);
    assert.match(warning, /kubectl delete pvc -n shop data-db-0 data-old-0/);
    assert.match(
      keptClaimsMessage("shop", kept.slice(0, 1), true),
      /^Refusing to delete namespace shop: it holds 1 volume claim /,
    );
  });
});

describe("the kept-claims guard's hook", () => {
  const connection: Promise<ClusterConnection> = Promise.resolve({ kubeconfig: "k", source: "test" });
  const args = { urn: "urn", id: "shop", name: "shop", type: "kubernetes:core/v1:Namespace" };
  const holding = async () => ({ claims: [claim("data-db-0", "db")], instances: [] });
  const empty = async () => ({ claims: [], instances: [] });
  const unreachable = async () => ({ unavailable: "connect ECONNREFUSED" });

  it("refuses the delete of a namespace holding kept claims, outside a preview", async () => {
    await assert.rejects(
      guardNamespace({ ...args, oldOutputs: { metadata: { name: "shop" } } }, connection, holding, false),
      /Refusing to delete namespace shop: it holds 1 volume claim .*data-db-0/,
    );
  });

  it("only warns in a preview, and lets a namespace without kept claims go", async (t) => {
    const warn = t.mock.method(pulumi.log, "warn", () => Promise.resolve());
    await guardNamespace(args, connection, holding, true);
    assert.equal(warn.mock.callCount(), 1);
    assert.match(
      String(warn.mock.calls[0]?.arguments[0]),
      /^Deleting namespace shop would delete its data: it holds 1 volume claim .*data-db-0/,
    );
    await guardNamespace(args, connection, empty, false);
    await guardNamespace(args, connection, empty, true);
    assert.equal(warn.mock.callCount(), 1, "no warning without kept claims");
  });

  it("does not take an unreadable cluster for permission: refuses outside a preview", async () => {
    await assert.rejects(
      guardNamespace(args, connection, unreachable, false),
      /Refusing to delete namespace shop: could not check for volume claims the platform keeps \(connect ECONNREFUSED\)/,
    );
    await guardNamespace(args, connection, unreachable, true);
  });

  it("reads the namespace named by the Namespace's outputs, else its ID", async () => {
    const asked: string[] = [];
    const reader = async (_: ClusterConnection, namespace: string) => {
      asked.push(namespace);
      return { claims: [], instances: [] };
    };
    await guardNamespace({ ...args, oldOutputs: { metadata: { name: "named" } } }, connection, reader, false);
    await guardNamespace(args, connection, reader, false);
    assert.deepEqual(asked, ["named", "shop"]);
  });
});
