/**
 * A kubeconfig that authenticates as the operator's ServiceAccount, with a short-lived token from the TokenRequest
 * API. A local operator run with it has exactly the permissions the component grants in-cluster, so every local
 * run proves the RBAC of rbac-rules.ts is sufficient.
 *
 * components/ may not import kube/ (layering), so this takes a narrow interface that a kube/ KubeClient satisfies.
 */
import { readFileSync } from "node:fs";
import { stringify } from "yaml";

/** The narrow interface: an admin connection's cluster and a raw POST (kube/ KubeClient satisfies it). */
export interface AdminConnection {
  readonly config: {
    getCurrentCluster(): {
      readonly name: string;
      readonly server: string;
      readonly caData?: string;
      readonly caFile?: string;
      readonly skipTLSVerify?: boolean;
      readonly tlsServerName?: string;
    } | null;
  };
  /** POSTs JSON to a path; throws an error with the HTTP `status` (0: no answer) when it fails. */
  post<T>(path: string, body: unknown): Promise<T>;
}

export interface ServiceAccountKubeconfigOptions {
  /** Token lifetime; the apiserver may shorten it. @default 86400 (24 h) */
  readonly expirationSeconds?: number;
  /** Token audiences. @default the apiserver's own */
  readonly audiences?: readonly string[];
}

/** A TokenRequest's answer, the parts we read. */
interface TokenRequestStatus {
  readonly status?: { readonly token?: string; readonly expirationTimestamp?: string };
}

/**
 * Requests a token for `namespace/serviceAccount` and returns a kubeconfig (YAML) with the admin connection's
 * cluster server and CA, and that token as the user.
 */
export async function serviceAccountKubeconfig(
  admin: AdminConnection,
  namespace: string,
  serviceAccount: string,
  options: ServiceAccountKubeconfigOptions = {},
): Promise<string> {
  const cluster = admin.config.getCurrentCluster();
  if (!cluster) throw new Error("the admin kubeconfig has no current cluster: set a current context");
  const token = await requestToken(admin, cluster.server, namespace, serviceAccount, options);
  const caData = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString("base64") : undefined);
  return tokenKubeconfig({
    clusterName: cluster.name || "cluster",
    server: cluster.server,
    ...(caData ? { certificateAuthorityData: caData } : {}),
    ...(cluster.skipTLSVerify ? { insecureSkipTlsVerify: true } : {}),
    ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
    namespace,
    serviceAccount,
    token,
  });
}

/** What a token kubeconfig holds. */
export interface TokenKubeconfigParts {
  readonly clusterName: string;
  readonly server: string;
  /** Base64 PEM of the cluster CA. */
  readonly certificateAuthorityData?: string;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly token: string;
}

/** The kubeconfig YAML for a ServiceAccount token; its default namespace is the ServiceAccount's. */
export function tokenKubeconfig(parts: TokenKubeconfigParts): string {
  const userName = `system:serviceaccount:${parts.namespace}:${parts.serviceAccount}`;
  const contextName = `${parts.serviceAccount}@${parts.clusterName}`;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: parts.clusterName,
        cluster: {
          server: parts.server,
          ...(parts.certificateAuthorityData ? { "certificate-authority-data": parts.certificateAuthorityData } : {}),
          ...(parts.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
          ...(parts.tlsServerName ? { "tls-server-name": parts.tlsServerName } : {}),
        },
      },
    ],
    users: [{ name: userName, user: { token: parts.token } }],
    contexts: [
      { name: contextName, context: { cluster: parts.clusterName, user: userName, namespace: parts.namespace } },
    ],
    "current-context": contextName,
  });
}

async function requestToken(
  admin: AdminConnection,
  server: string,
  namespace: string,
  serviceAccount: string,
  options: ServiceAccountKubeconfigOptions,
): Promise<string> {
  const subject = `serviceaccount ${namespace}/${serviceAccount}`;
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`;
  const body = {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: {
      expirationSeconds: options.expirationSeconds ?? 86_400,
      ...(options.audiences ? { audiences: [...options.audiences] } : {}),
    },
  };
  let answer: TokenRequestStatus;
  try {
    answer = await admin.post<TokenRequestStatus>(path, body);
  } catch (error) {
    const status = (error as { status?: number }).status ?? 0;
    const message = error instanceof Error ? error.message : String(error);
    if (status === 0)
      throw new Error(`TokenRequest for ${subject}: cannot reach ${server}: ${message}`, { cause: error });
    const hint =
      status === 404
        ? " (does the ServiceAccount exist? install the MyAppOperator first)"
        : status === 403
          ? " (the admin credentials need 'create' on serviceaccounts/token)"
          : "";
    throw new Error(`TokenRequest for ${subject} failed: HTTP ${status}${hint}: ${message}`, { cause: error });
  }
  const token = answer.status?.token;
  if (!token) throw new Error(`TokenRequest for ${subject} returned no token`);
  return token;
}
