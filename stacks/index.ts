/**
 * The platform stack. `dev` (stacks/Pulumi.dev.yaml): the local kwok cluster, the operator installed in
 * external mode (it runs as a local process, see `npm start`), and two instances, one with storage.
 * `example` (stacks/Pulumi.example.yaml): a real cluster with the operator running in it.
 */
import * as pulumi from "@pulumi/pulumi";
import { ClusterProvider, MyAppOperator, type NamespaceDefaults } from "../components/index.ts";
import { MyAppInstance } from "../provider/index.ts";
import { localWebhookUrl } from "../tools/lib/operator-process.ts";

const config = new pulumi.Config();
/** A kubeconfig path or contents; defaults to KUBECONFIG (which `npm run pulumi` sets to the local cluster). */
const kubeconfig = config.get("kubeconfig") ?? process.env.KUBECONFIG;
const appNamespace = config.get("appNamespace") ?? "default";

// A k8s.Provider that remembers its connection, so previews check which cluster the instances reach.
const cluster = new ClusterProvider("cluster", { ...(kubeconfig ? { kubeconfig } : {}) });

// Unset: "external" (`npm start` runs the operator); the component names a value that is neither.
const operatorPlacement = (config.get("operatorPlacement") ?? "external") as "in-cluster" | "external";
// Unset: "auto" (the MutatingAdmissionPolicy where the cluster serves it, as the local Kubernetes 1.36 does, with
// the webhook behind it); "webhook" or "policy" to choose. The component names a wrong value.
const webhookDefaults = (config.get("webhookDefaults") ?? "auto") as NamespaceDefaults;
const platform = new MyAppOperator(
  "myapp-operator",
  {
    operatorPlacement,
    // Kinds charts may render beyond the built-in template's (a JSON list): the example chart needs v1/ConfigMap.
    ...(config.getObject<string[]>("chartKinds") ? { chartKinds: config.requireObject<string[]>("chartKinds") } : {}),
    // Pods' settings only where there are pods: the component refuses them for an external operator.
    ...(operatorPlacement === "in-cluster"
      ? { replicas: config.getNumber("operatorReplicas") ?? 1, image: config.get("operatorImage") ?? "" }
      : {}),
    // The local operator (`npm start`) watches the app namespace only, and serves the webhooks for it here (in the
    // cluster they are called through a Service): a namespace it does not watch is never held by its webhooks.
    ...(operatorPlacement === "external"
      ? { watchNamespaces: [appNamespace], webhooks: { url: localWebhookUrl, defaults: webhookDefaults } }
      : { webhooks: { defaults: webhookDefaults } }),
  },
  { provider: cluster },
);

// Instances on the platform: its cluster (whatever KUBECONFIG says later), created once its CRD is Established.
const web = new MyAppInstance("web", {
  platform,
  name: "web",
  namespace: appNamespace,
  image: config.get("webImage") ?? "nginx:1.27",
  replicas: 2,
  port: 8080,
});
const db = new MyAppInstance("db", {
  platform,
  name: "db",
  namespace: appNamespace,
  image: "postgres:17",
  replicas: 1,
  port: 5432,
  storage: "1Gi",
});

export const operatorNamespace = platform.namespace;
/** What the external operator runs with: `npm start`'s follows it after each `npm run pulumi -- up --stack dev`. */
export const operatorFlags = platform.externalOperatorFlags;
export const operatorServiceAccount = platform.serviceAccountName;
export const crdName = platform.crdName;
export const instances = pulumi.all(
  [web, db].map((i) => ({ name: i.name, endpoint: i.endpoint, phase: i.status.phase, image: i.status.image })),
);
