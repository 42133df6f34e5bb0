/**
 * A chart's volume claims, tied to the instance whose StatefulSet made them by the names the StatefulSet controller
 * gives them: `<claim template>-<StatefulSet>-<ordinal>`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { chartClaimInstance, chartClaimMakers } from "../../../../operator/admission/chart-claims.ts";
import type { ClaimMaker } from "../../../../operator/reconcile/claim-owners.ts";

const statefulSet = (name: string, templates: string[], controller?: string, chart = true): ClaimMaker => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: {
    name,
    namespace: "team-a",
    uid: `uid-${name}`,
    ...(chart && controller ? { labels: { "myapp.example.com/chart-instance": controller } } : {}),
    ...(controller
      ? {
          ownerReferences: [
            { apiVersion: "example.com/v1", kind: "MyAppInstance", name: controller, uid: "i", controller: true },
          ],
        }
      : {}),
  },
  spec: { volumeClaimTemplates: templates.map((template) => ({ metadata: { name: template } })) },
});

const claim = (name: string, ownerUid?: string): KubeObject => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: {
    name,
    namespace: "team-a",
    ...(ownerUid
      ? { ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "x", uid: ownerUid }] }
      : {}),
  },
});

describe("chartClaimInstance", () => {
  const makers = chartClaimMakers([
    statefulSet("db", ["data", "logs"], "shop"),
    statefulSet("db-2", ["data"], "other"),
    statefulSet("cache", ["data"]),
    // The built-in template's: its claims carry their instance's labels, and are counted as its.
    statefulSet("web", ["data"], "web", false),
  ]);

  it("names the instance controlling the StatefulSet that made a claim, by template, StatefulSet and ordinal", () => {
    assert.equal(chartClaimInstance(claim("data-db-0"), makers), "shop");
    assert.equal(chartClaimInstance(claim("logs-db-17"), makers), "shop");
    // The ordinal is the last segment: "data-db-2-0" is db-2's, "data-db-2" is db's replica 2.
    assert.equal(chartClaimInstance(claim("data-db-2-0"), makers), "other");
    assert.equal(chartClaimInstance(claim("data-db-2"), makers), "shop");
  });

  it("ties no claim to a StatefulSet no instance controls as its chart's, nor one of another name or owner", () => {
    assert.equal(chartClaimInstance(claim("data-cache-0"), makers), undefined);
    assert.equal(chartClaimInstance(claim("data-web-0"), makers), undefined);
    assert.equal(chartClaimInstance(claim("data-db"), makers), undefined);
    assert.equal(chartClaimInstance(claim("data-db-x"), makers), undefined);
    assert.equal(chartClaimInstance(claim("other-db-0"), makers), undefined);
    // A look-alike name that another StatefulSet owns is that one's.
    assert.equal(chartClaimInstance(claim("data-db-0", "uid-elsewhere"), makers), undefined);
    assert.equal(chartClaimInstance(claim("data-db-0", "uid-db"), makers), "shop");
  });
});
