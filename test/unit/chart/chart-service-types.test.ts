/**
 * The platform's Service-type allow-list for charts, at every layer: the component argument (validated, turned
 * into the operator flag only when it widens the default), the operator's flag and environment variable, and
 * the reconcile dependency the wiring passes on.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { chartServiceTypesFlag, resolveChartServiceTypes } from "../../../components/chart-service-types.ts";
import { operatorFlags } from "../../../components/operator-flags.ts";
import { resolveSettings } from "../../../components/settings.ts";
import { parseOptions } from "../../../operator/options.ts";

describe("chartServiceTypes", () => {
  test("defaults to ClusterIP only, with no flag", () => {
    const resolved = resolveSettings("op", { operatorPlacement: "external" });
    assert.ok(resolved.ok);
    assert.deepEqual(resolved.settings.chartServiceTypes, ["ClusterIP"]);
    assert.ok(!operatorFlags(resolved.settings).some((flag) => flag.startsWith("--chart-service-types")));
    assert.deepEqual(parseOptions([], {}).chartServiceTypes, ["ClusterIP"]);
  });

  test("a wider list reaches the operator as --chart-service-types, ClusterIP always in it", () => {
    const resolved = resolveSettings("op", { operatorPlacement: "external", chartServiceTypes: ["LoadBalancer"] });
    assert.ok(resolved.ok);
    assert.deepEqual(resolved.settings.chartServiceTypes, ["ClusterIP", "LoadBalancer"]);
    const flag = operatorFlags(resolved.settings).find((f) => f.startsWith("--chart-service-types"));
    assert.equal(flag, "--chart-service-types=ClusterIP,LoadBalancer");
    assert.deepEqual(parseOptions([flag ?? ""], {}).chartServiceTypes, ["ClusterIP", "LoadBalancer"]);
    assert.deepEqual(chartServiceTypesFlag(["ClusterIP"]), []);
  });

  test("the environment variable is the fallback; the flag wins", () => {
    const env = { MYAPP_CHART_SERVICE_TYPES: "ClusterIP,NodePort" };
    assert.deepEqual(parseOptions([], env).chartServiceTypes, ["ClusterIP", "NodePort"]);
    assert.deepEqual(parseOptions(["--chart-service-types=ClusterIP"], env).chartServiceTypes, ["ClusterIP"]);
  });

  test("no entry is ClusterIP only; a type listed twice, or with a comma, is refused at both layers", () => {
    // GIVEN a flag with only commas and blanks
    // THEN it is no entry: ClusterIP only, as an empty one
    assert.deepEqual(parseOptions(["--chart-service-types=,"], {}).chartServiceTypes, ["ClusterIP"]);
    assert.deepEqual(parseOptions(["--chart-service-types=NodePort,,"], {}).chartServiceTypes, [
      "ClusterIP",
      "NodePort",
    ]);
    // AND a repeat is refused by the flag and by the component, which names the entry (as a comma in one)
    assert.throws(
      () => parseOptions(["--chart-service-types=NodePort,NodePort"], {}),
      /^Error: --chart-service-types: "NodePort" is listed twice; list it once$/,
    );
    const resolved = resolveSettings("op", {
      operatorPlacement: "external",
      chartServiceTypes: ["NodePort", "NodePort", "LoadBalancer,ExternalName"],
    });
    assert.ok(!resolved.ok);
    assert.deepEqual(
      resolved.issues.map((issue) => issue.field),
      ["chartServiceTypes[1]", "chartServiceTypes[2]"],
    );
  });

  test("a name that is not a Service type is refused at every layer, naming the choices", () => {
    const resolved = resolveSettings("op", { operatorPlacement: "external", chartServiceTypes: ["Loadbalancer"] });
    assert.ok(!resolved.ok);
    assert.deepEqual(resolved.issues, [
      {
        field: "chartServiceTypes",
        message: '"Loadbalancer" are not Service types; choose from ClusterIP, NodePort, LoadBalancer, ExternalName',
      },
    ]);
    assert.equal(resolveChartServiceTypes(["Public"]).ok, false);
    assert.throws(
      () => parseOptions(["--chart-service-types=Public"], {}),
      /--chart-service-types: Public are not Service types; choose from ClusterIP,NodePort,LoadBalancer,ExternalName/,
    );
  });
});
