/**
 * The program bench/pulumi-up.ts deploys: BENCH_UP_INSTANCES instances in BENCH_UP_NAMESPACE on the cluster of
 * KUBECONFIG, either as MyAppInstances (BENCH_UP_VARIANT=myapp) or as the plain alternative
 * (BENCH_UP_VARIANT=customresource): the same objects as `k8s.apiextensions.CustomResource` with
 * `pulumi.com/waitFor: condition=Ready`, pulumi-kubernetes' generic await.
 */
import * as k8s from "@pulumi/kubernetes";
import { apiVersion, kind } from "../../api/index.ts";
import { MyAppInstance } from "../../provider/index.ts";

const namespace = process.env.BENCH_UP_NAMESPACE;
if (!namespace) throw new Error("BENCH_UP_NAMESPACE is not set: run this program through bench/pulumi-up.ts");
const count = Number(process.env.BENCH_UP_INSTANCES ?? "1");
const variant = process.env.BENCH_UP_VARIANT ?? "myapp";
const spec = { image: "nginx:1.27", replicas: 1 };

const names = Array.from({ length: count }, (_, i) => `app-${String(i).padStart(3, "0")}`);
if (variant === "myapp") {
  for (const name of names) new MyAppInstance(name, { name, namespace, ...spec });
} else {
  const cluster = new k8s.Provider("cluster", { kubeconfig: process.env.KUBECONFIG });
  for (const name of names) {
    new k8s.apiextensions.CustomResource(
      name,
      {
        apiVersion,
        kind,
        metadata: { name, namespace, annotations: { "pulumi.com/waitFor": "condition=Ready" } },
        spec,
      },
      { provider: cluster },
    );
  }
}
export const instances = count;
