/**
 * The program bench/pulumi-preview.ts previews: BENCH_PREVIEW_INSTANCES MyAppInstances (dynamic provider) in
 * BENCH_PREVIEW_NAMESPACE, on the cluster of KUBECONFIG. Never deployed: the benchmark only runs `pulumi preview`.
 */
import { MyAppInstance } from "../../provider/index.ts";

const namespace = process.env.BENCH_PREVIEW_NAMESPACE;
if (!namespace) throw new Error("BENCH_PREVIEW_NAMESPACE is not set: run this program through bench/pulumi-preview.ts");
const count = Number(process.env.BENCH_PREVIEW_INSTANCES ?? "1");

export const names = Array.from({ length: count }, (_, i) => {
  const name = `app-${String(i).padStart(3, "0")}`;
  return new MyAppInstance(name, { name, namespace, image: "nginx:1.27", replicas: 2 }).name;
});
