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

// The platform: CRD, operator namespace, RBAC and operator. Its name and namespace are yours alone in the cluster.
const platform = new MyAppOperator("shop-platform", { namespace: "shop-platform" }, { provider: cluster });

// Instances with `platform` go to the platform's cluster, after it; nothing else to wire.
const shop = new k8s.core.v1.Namespace("shop", { metadata: { name: "shop" } }, { provider: cluster });
const web = new MyAppInstance("web", { platform, namespace: shop.metadata.name, image: "nginx:1.27", replicas: 3 });
const db = new MyAppInstance("db", { platform, namespace: shop.metadata.name, image: "postgres:17", storage: "10Gi" });

export const webEndpoint = web.endpoint; // "web-1a2b3c4d.shop.svc:8080"
export const dbEndpoint = db.endpoint;
