/**
 * Scrapers of an operator's secure /metrics (`--metrics-secure`): a ServiceAccount bound to the component's
 * metrics-reader ClusterRole, and one without any right, each with a TokenRequest token, as Prometheus would hold.
 */
import { parse } from "yaml";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import { waitFor } from "./cluster.ts";

export interface MetricsScrapers {
  /** Token of a ServiceAccount bound to the metrics-reader ClusterRole. */
  readonly reader: string;
  /** Token of a ServiceAccount with no right on /metrics. */
  readonly stranger: string;
}

type Review = KubeObject & { status?: { allowed?: boolean } };

/**
 * Creates both ServiceAccounts in `namespace` and binds `readerRole` to the first; `defer` gets the cleanup of the
 * cluster-scoped binding (the ServiceAccounts go with their namespace). Resolves once the apiserver allows the
 * reader `get /metrics`: its RBAC authorizer learns of a binding from an informer, a moment after it is stored, and
 * an operator keeps a refusal for 10 s, so a scrape any sooner could be refused.
 */
export async function metricsScrapers(
  client: KubeClient,
  namespace: string,
  readerRole: string,
  defer: (cleanup: () => Promise<void>) => void,
): Promise<MetricsScrapers> {
  for (const name of ["scraper", "stranger"]) {
    await client.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } });
  }
  const binding: KubeObject = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: `${readerRole}-${namespace}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: readerRole },
    subjects: [{ kind: "ServiceAccount", name: "scraper", namespace }],
  } as KubeObject;
  await client.create(binding);
  defer(async () => {
    await client.delete(binding.apiVersion, binding.kind, binding.metadata.name ?? "").catch(() => undefined);
  });
  const reader = `system:serviceaccount:${namespace}:scraper`;
  await waitFor(`RBAC to allow ${reader} get /metrics`, async () => {
    const review = await client.create<Review>({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      metadata: {},
      spec: {
        user: reader,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
        nonResourceAttributes: { path: "/metrics", verb: "get" },
      },
    } as Review);
    return review.status?.allowed === true ? true : undefined;
  });
  const token = async (name: string) => {
    const kubeconfig = parse(await serviceAccountKubeconfig(client, namespace, name)) as {
      users: { user: { token: string } }[];
    };
    return kubeconfig.users[0]!.user.token;
  };
  return { reader: await token("scraper"), stranger: await token("stranger") };
}

/** One GET of /metrics (http or https, self-signed), with a bearer token or none: the status and body. */
export { getMetrics as fetchMetrics } from "../../bench/support/prometheus.ts";
