/**
 * A kubeconfig that authenticates as the operator's ServiceAccount, with a short-lived token from the TokenRequest
 * API. A local operator run with it has exactly the permissions the component grants in-cluster, so every local
 * run proves the RBAC of rbac.ts is sufficient.
 *
 * components/ may not import kube/ (layering), so this takes any admin client that exposes its KubeConfig
 * (a kube/ KubeClient does) and sends the one request itself, the way kube/client.ts does.
 */
import { readFileSync } from "node:fs";
import { HttpMethod, RequestContext, type KubeConfig } from "@kubernetes/client-node";
import { fetch } from "undici";
import { stringify } from "yaml";

/** The narrow port: an admin connection's credentials (kube/ KubeClient satisfies it). */
export interface AdminConnection {
  readonly config: KubeConfig;
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
  const token = await requestToken(admin.config, cluster.server, namespace, serviceAccount, options);
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
  config: KubeConfig,
  server: string,
  namespace: string,
  serviceAccount: string,
  options: ServiceAccountKubeconfigOptions,
): Promise<string> {
  const subject = `serviceaccount ${namespace}/${serviceAccount}`;
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`;
  const url = `${server.replace(/\/$/, "")}${path}`;
  const context = new RequestContext(url, HttpMethod.POST);
  await config.applySecurityAuthentication(context);
  const body = {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: {
      expirationSeconds: options.expirationSeconds ?? 86_400,
      ...(options.audiences ? { audiences: [...options.audiences] } : {}),
    },
  };
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { ...context.getHeaders(), accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(body),
      dispatcher: context.getDispatcher() as never,
    });
  } catch (error) {
    throw new Error(`TokenRequest for ${subject}: cannot reach ${server}: ${String(error)}`, { cause: error });
  }
  const text = await response.text();
  if (!response.ok) {
    const hint =
      response.status === 404
        ? " (does the ServiceAccount exist? install the MyAppOperator first)"
        : response.status === 403
          ? " (the admin credentials need 'create' on serviceaccounts/token)"
          : "";
    throw new Error(`TokenRequest for ${subject} failed: HTTP ${response.status}${hint}: ${statusMessage(text)}`);
  }
  const token = (JSON.parse(text) as TokenRequestStatus).status?.token;
  if (!token) throw new Error(`TokenRequest for ${subject} returned no token`);
  return token;
}

function statusMessage(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text.trim();
  } catch {
    return text.trim();
  }
}
