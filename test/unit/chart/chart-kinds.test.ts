import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { defaultChartKinds } from "../../../api/index.ts";
import { chartKindRules, chartKindsFlag, resolveChartKinds } from "../../../components/chart-kinds.ts";
import { operatorRbac } from "../../../components/roles.ts";
import { resolveSettings } from "../../../components/settings.ts";

describe("the chart kind allow-list", () => {
  test("grants read, apply and prune per allowed kind; Secrets create and patch only; ConfigMap get for sources", () => {
    const kinds = resolveChartKinds(["apps/v1/Deployment", "v1/Secret", "autoscaling/v2/HorizontalPodAutoscaler"]);
    assert.ok(kinds.ok);
    assert.deepEqual(chartKindRules(kinds.kinds), [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch", "create", "patch", "delete"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["create", "patch"] },
      {
        apiGroups: ["autoscaling"],
        resources: ["horizontalpodautoscalers"],
        verbs: ["get", "list", "watch", "create", "patch", "delete"],
      },
    ]);
    assert.deepEqual(chartKindsFlag(kinds.kinds), [
      "--chart-kinds=apps/v1/Deployment,v1/Secret,autoscaling/v2/HorizontalPodAutoscaler",
    ]);
    assert.deepEqual(chartKindsFlag(defaultChartKinds), []);
  });

  test("a kind charts cannot render is a settings error naming it and the choices", () => {
    const result = resolveSettings("op", { chartKinds: ["rbac.authorization.k8s.io/v1/ClusterRole"] });
    assert.ok(!result.ok);
    assert.equal(result.issues[0]?.field, "chartKinds");
    assert.match(
      result.issues[0]?.message ?? "",
      /"rbac.authorization.k8s.io\/v1\/ClusterRole" cannot be rendered by charts; choose from apps\/v1\/Deployment/,
    );
  });

  test("a narrowed list narrows the operator's Role in every watched namespace", () => {
    const result = resolveSettings("op", { watchNamespaces: ["team-a"], chartKinds: ["v1/ConfigMap"] });
    assert.ok(result.ok);
    const rules = operatorRbac(result.settings).watchedNamespaceGrants[0]?.role.rules ?? [];
    assert.ok(rules.some((rule) => rule.resources?.includes("configmaps") && rule.verbs?.includes("create")));
    assert.ok(!rules.some((rule) => rule.resources?.includes("secrets")));
    assert.ok(!rules.some((rule) => rule.resources?.includes("ingresses")));
  });
});

describe("the default chart setting", () => {
  test("is checked with the api's chart rules and passed as --default-chart", async () => {
    const { operatorFlags } = await import("../../../components/operator-flags.ts");
    const good = resolveSettings("op", { defaultChart: { oci: "oci://r.example.com/charts/app", version: "1.0.0" } });
    assert.ok(good.ok);
    assert.ok(
      operatorFlags(good.settings).includes(
        '--default-chart={"oci":"oci://r.example.com/charts/app","version":"1.0.0"}',
      ),
    );
    const bad = resolveSettings("op", { defaultChart: { oci: "oci://r.example.com/charts/app" } });
    assert.ok(!bad.ok);
    assert.match(bad.issues[0]?.message ?? "", /defaultChart.version: needs spec.chart.version/);
  });
});
