/**
 * The program bench/pulumi-project.ts deploys from a project of a user's own: the README's "Your own project"
 * program at a benchmark's size. A ClusterProvider, the platform (`MyAppOperator`, external placement: the
 * benchmark runs the operator of the installed package), the instances' namespace kept on destroy, a chart packed
 * into a ConfigMap, and BENCH_PROJECT_INSTANCES instances with object-valued inputs: every one `resources`, every
 * BENCH_PROJECT_CHART_EVERY-th a chart with `values` instead. BENCH_PROJECT_VARIANT=myapp declares them as
 * MyAppInstances bound to the platform; customresource as the plain alternative with the very same specs and the
 * same platform, `k8s.apiextensions.CustomResource` + `pulumi.com/waitFor: condition=Ready`, auto-named alike.
 *
 * In the repository this file imports the sources; the benchmark copies it into the project with the import
 * rewritten to `myapp-platform`, so what runs is the package from the tarball.
 */
import { readFileSync } from "node:fs";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  apiVersion,
  ClusterProvider,
  kind,
  MyAppInstance,
  MyAppOperator,
  type MyAppInstanceSpecInput,
} from "../../index.ts";

const setting = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this program through bench/pulumi-project.ts`);
  return value;
};
const count = Number(setting("BENCH_PROJECT_INSTANCES"));
const chartEvery = Number(setting("BENCH_PROJECT_CHART_EVERY"));
const variant = setting("BENCH_PROJECT_VARIANT");

// From here on, the README's program: its cluster, platform and namespace, with the benchmark's names.
const config = new pulumi.Config();
const cluster = new ClusterProvider("cluster", {
  kubeconfig: config.get("kubeconfig"),
  context: config.get("context"),
});
const platform = new MyAppOperator(
  setting("BENCH_PROJECT_PLATFORM"),
  {
    namespace: setting("BENCH_PROJECT_PLATFORM"),
    operatorPlacement: "external",
    // The example chart renders ConfigMaps: the README's "widening, as the platform owner".
    chartKinds: ["apps/v1/Deployment", "apps/v1/StatefulSet", "v1/Service", "v1/ConfigMap"],
  },
  { provider: cluster },
);
const shop = new k8s.core.v1.Namespace(
  "shop",
  { metadata: { name: setting("BENCH_PROJECT_NAMESPACE") } },
  { provider: cluster, retainOnDelete: true },
);
// The chart as the README's "Charts" section packs it: binaryData key chart.tgz in the instances' namespace.
const chart = new k8s.core.v1.ConfigMap(
  "myapp-chart",
  {
    metadata: { name: "myapp-chart", namespace: shop.metadata.name },
    binaryData: { "chart.tgz": readFileSync(new URL("./chart.tgz", import.meta.url)).toString("base64") },
  },
  { provider: cluster },
);

/** Instance `i`'s spec: object-valued inputs for all, a chart for a share. */
function specOf(i: number): MyAppInstanceSpecInput {
  const common = { image: "nginx:1.27", replicas: 1 + (i % 2) };
  if (i % chartEvery === 0) {
    return {
      ...common,
      // The example chart's Deployment sets no securityContext: its pods meet Pod Security "baseline" only.
      podSecurityLevel: "Baseline",
      chart: { configMap: "myapp-chart" },
      values: { config: { greeting: `hello from ${i}` }, settings: { logLevel: i % 2 ? "debug" : "info" } },
    };
  }
  return {
    ...common,
    resources: {
      requests: { cpu: `${50 + (i % 4) * 25}m`, memory: "64Mi" },
      limits: { cpu: "500m", memory: "256Mi" },
    },
  };
}

const names = Array.from({ length: count }, (_, i) => `app-${String(i).padStart(3, "0")}`);
names.forEach((name, i) => {
  const spec = specOf(i);
  const after = spec.chart ? { dependsOn: [chart] } : {};
  if (variant === "myapp") {
    new MyAppInstance(name, { platform, namespace: shop.metadata.name, ...spec }, after);
  } else {
    new k8s.apiextensions.CustomResource(
      name,
      {
        apiVersion,
        kind,
        metadata: { namespace: shop.metadata.name, annotations: { "pulumi.com/waitFor": "condition=Ready" } },
        spec,
      },
      { provider: cluster, dependsOn: [platform, ...(spec.chart ? [chart] : [])] },
    );
  }
});
export const instances = count;
