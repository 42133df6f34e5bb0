import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterProvider, MyAppInstance, MyAppOperator } from "myapp-platform";

const config = new pulumi.Config();
// Your cluster: a kubeconfig file or its text (default: KUBECONFIG, as kubectl), and a context of it. A
// ClusterProvider is a k8s.Provider that also remembers these, so previews know which cluster instances reach.
const cluster = new ClusterProvider("cluster", {
  kubeconfig: config.get("kubeconfig"),
  context: config.get("context"),
});

// The namespace outlives the stack (retainOnDelete): `pulumi destroy` removes the instances, never the volumes
// that db keeps (storageReclaimPolicy Retain), which deleting the namespace would take with it.
const shop = new k8s.core.v1.Namespace(
  "shop",
  { metadata: { name: "shop" } },
  { provider: cluster, retainOnDelete: true },
);

// The platform: CRD, operator namespace, RBAC and the operator, for the namespace shop (its RBAC, policy and
// webhooks hold there, nowhere else). With an image you built and pushed (`pulumi config set operatorImage
// REGISTRY/myapp-operator:0.2.0`) the operator runs in the cluster; without one it runs outside it, as a process you
// start with the flags `platform.externalOperatorFlags` lists (the README's local recipe).
const operatorImage = config.get("operatorImage");
const platform = new MyAppOperator(
  "shop-platform",
  operatorImage
    ? { namespace: "shop-platform", watchNamespaces: ["shop"], image: operatorImage }
    : { namespace: "shop-platform", watchNamespaces: ["shop"], operatorPlacement: "external" },
  { provider: cluster, dependsOn: [shop] },
);

// Instances with `platform` go to the platform's cluster, after it; nothing else to wire.
const web = new MyAppInstance("web", { platform, namespace: shop.metadata.name, image: "nginx:1.27", replicas: 3 });
const db = new MyAppInstance("db", {
  platform,
  namespace: shop.metadata.name,
  image: "postgres:17",
  port: 5432,
  storage: "10Gi",
});

export const webEndpoint = web.endpoint; // "web-1a2b3c4d.shop.svc:8080"
export const dbEndpoint = db.endpoint; // "db-5e6f7a8b.shop.svc:5432"
// What an external operator is started with (`pulumi stack output operatorFlags`); undefined in the cluster.
export const operatorFlags = platform.externalOperatorFlags;
