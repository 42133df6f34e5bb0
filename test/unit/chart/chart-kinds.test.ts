import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { chartKindName, defaultChartKinds, renderableChartKinds } from "../../../api/index.ts";
import { chartKindRules, chartKindsFlag, resolveChartKinds } from "../../../components/chart-kinds.ts";
import { operatorRbac } from "../../../components/rbac-objects.ts";
import { resolveSettings } from "../../../components/settings.ts";
import { parseOptions } from "../../../operator/options.ts";

describe("the chart kind allow-list", () => {
  test("grants read, apply and prune per allowed kind; Secrets create and patch only; ConfigMap get for sources", () => {
    const kinds = resolveChartKinds(["apps/v1/Deployment", "v1/Secret", "autoscaling/v2/HorizontalPodAutoscaler"]);
    assert.ok(kinds.ok);
    assert.deepEqual(chartKindRules(kinds.kinds), [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
      // (Deployments: the built-in template's rules already grant exactly these verbs.)
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

  test("by default allows only the built-in template's kinds, and grants no chart kind beyond the built-in rules", () => {
    // GIVEN no chartKinds anywhere
    const names = defaultChartKinds.map(chartKindName);
    // THEN the component, the operator and the api agree on Deployment, StatefulSet and Service
    assert.deepEqual(names, ["apps/v1/Deployment", "apps/v1/StatefulSet", "v1/Service"]);
    assert.deepEqual(parseOptions([], {}).chartKinds.map(chartKindName), names);
    const resolved = resolveSettings("op", { operatorPlacement: "external" });
    assert.ok(resolved.ok);
    assert.deepEqual(resolved.settings.chartKinds.map(chartKindName), names);
    // AND the rules beyond the built-in template's are only the chart source's ConfigMap get
    assert.deepEqual(chartKindRules(defaultChartKinds), [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
    ]);
    // AND the cluster-wide ClusterRole writes no ConfigMap, Secret, ServiceAccount, Ingress, PDB or HPA
    const rules = operatorRbac(resolved.settings).clusterRole.rules ?? [];
    for (const resource of [
      "secrets",
      "serviceaccounts",
      "ingresses",
      "poddisruptionbudgets",
      "horizontalpodautoscalers",
    ]) {
      assert.ok(!rules.some((rule) => rule.resources?.includes(resource)), resource);
    }
    assert.deepEqual(
      rules.filter((rule) => rule.resources?.includes("configmaps")).flatMap((rule) => rule.verbs),
      ["get"],
      "ConfigMaps: the chart source is read, never written",
    );
  });

  test("every renderable kind may be opted into, and the operator's flag names the list", () => {
    const all = renderableChartKinds.map(chartKindName);
    const resolved = resolveSettings("op", { operatorPlacement: "external", chartKinds: all });
    assert.ok(resolved.ok);
    assert.deepEqual(chartKindsFlag(resolved.settings.chartKinds), [`--chart-kinds=${all.join(",")}`]);
    assert.deepEqual(parseOptions([`--chart-kinds=${all.join(",")}`], {}).chartKinds, renderableChartKinds);
    // The defaults in another order are still the defaults: no flag.
    assert.deepEqual(chartKindsFlag([...defaultChartKinds].reverse()), []);
  });

  test("no kind listed is the default list at both layers: the flag takes it, the component asks to leave it out", () => {
    // GIVEN --chart-kinds with no entry: empty, or only commas and blanks
    const defaults = defaultChartKinds.map(chartKindName);
    // THEN the operator reads each as the default list, as every list flag reads its empty entries (none)
    for (const text of ["", ",", " , ,"]) {
      assert.deepEqual(parseOptions([`--chart-kinds=${text}`], {}).chartKinds.map(chartKindName), defaults, text);
    }
    assert.deepEqual(
      parseOptions(["--chart-kinds=v1/Service,,apps/v1/Deployment,"], {}).chartKinds.map(chartKindName),
      ["apps/v1/Deployment", "v1/Service"],
    );
    // AND the component, which writes no flag for the default list, says so instead of reading [] as none
    const empty = resolveSettings("op", { operatorPlacement: "external", chartKinds: [] });
    assert.ok(!empty.ok);
    assert.equal(empty.issues[0]?.field, "chartKinds");
    assert.match(empty.issues[0]?.message ?? "", /^lists no kind; leave it out for the built-in template's kinds/);
  });

  test("a kind listed twice, or with a comma, is refused at both layers, naming it", () => {
    const result = resolveSettings("op", {
      operatorPlacement: "external",
      chartKinds: ["v1/Service", "v1/ConfigMap,v1/Secret", "v1/Service"],
    });
    assert.ok(!result.ok);
    assert.deepEqual(result.issues, [
      {
        field: "chartKinds[1]",
        message:
          '"v1/ConfigMap,v1/Secret" contains a comma, which separates the entries of the operator\'s --chart-kinds; list each entry on its own',
      },
      { field: "chartKinds[2]", message: '"v1/Service" is listed twice; list it once' },
    ]);
    assert.throws(
      () => parseOptions(["--chart-kinds=v1/Service, v1/Service"], {}),
      /^Error: --chart-kinds: "v1\/Service" is listed twice; list it once$/,
    );
  });

  test("a kind charts cannot render is a settings error naming it and the choices", () => {
    const result = resolveSettings("op", {
      operatorPlacement: "external",
      chartKinds: ["rbac.authorization.k8s.io/v1/ClusterRole"],
    });
    assert.ok(!result.ok);
    assert.equal(result.issues[0]?.field, "chartKinds");
    assert.match(
      result.issues[0]?.message ?? "",
      /"rbac.authorization.k8s.io\/v1\/ClusterRole" cannot be rendered by charts; choose from apps\/v1\/Deployment/,
    );
  });

  test("a narrowed list narrows the operator's Role in every watched namespace", () => {
    const result = resolveSettings("op", {
      operatorPlacement: "external",
      watchNamespaces: ["team-a"],
      chartKinds: ["v1/ConfigMap"],
    });
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
    const good = resolveSettings("op", {
      image: "registry.example/myapp-operator:test",
      defaultChart: { oci: "oci://r.example.com/charts/app", version: "1.0.0" },
    });
    assert.ok(good.ok);
    assert.ok(
      operatorFlags(good.settings).includes(
        '--default-chart={"oci":"oci://r.example.com/charts/app","version":"1.0.0"}',
      ),
    );
    const bad = resolveSettings("op", {
      image: "registry.example/myapp-operator:test",
      defaultChart: { oci: "oci://r.example.com/charts/app" },
    });
    assert.ok(!bad.ok);
    assert.match(bad.issues[0]?.message ?? "", /defaultChart.version: is required with oci or repo/);
  });
});
