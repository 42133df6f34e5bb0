/**
 * Test support for an operator that runs on a ServiceAccount token it must refresh, as the local launcher runs it
 * (tools/lib/operator-process.ts): a ServiceAccount with the component's namespaced RBAC, a kubeconfig whose user
 * is a `tokenFile`, and the token in that file, minted with the TokenRequest API and rewritten by the test.
 *
 * A token can be made to fail for real in two ways: it expires (the apiserver's floor for expirationSeconds is
 * 600), or it is revoked: every token here is bound to a Secret of its own, and the apiserver rejects a bound token
 * with 401 as soon as its Secret is gone.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { parse, stringify } from "yaml";
import { operatorObjectNames } from "../../components/metadata.ts";
import { operatorRbac } from "../../components/rbac-objects.ts";
import { operatorServiceAccount } from "../../components/service-account.ts";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import { resolveSettings } from "../../components/settings.ts";
import { KubeClient, loadKubeConfig, UnauthorizedError, type KubeObject } from "../../kube/index.ts";

/** One minted token. */
export interface MintedToken {
  readonly token: string;
  /** The Secret the token is bound to: deleting it revokes the token. */
  readonly secret: string;
  /** When the apiserver stops accepting it (its `exp`), as Date.now() milliseconds. */
  readonly expiresAt: number;
}

export interface RotatingToken {
  readonly serviceAccount: string;
  /** The kubeconfig to give the operator (`--kubeconfig=`): its user reads `tokenFile`. */
  readonly kubeconfigFile: string;
  readonly tokenFile: string;
  /** The token in the file now. */
  current: MintedToken;
  /** Mints a new token (`expirationSeconds`, at least 600) and writes it to the file, atomically. */
  rotate(expirationSeconds?: number): Promise<MintedToken>;
  /** Deletes the Secret the token is bound to: from then on the apiserver answers 401 to it. */
  revoke(token: MintedToken): Promise<void>;
  /** True when the apiserver rejects `token` with 401 (a list of instances in the namespace). */
  rejected(token: MintedToken): Promise<boolean>;
}

/**
 * A ServiceAccount in `namespace` with the operator's namespaced RBAC (watching `namespace`, leader election
 * there), and its first token (`expirationSeconds`) in a token file. Everything goes when the test ends.
 */
export async function rotatingToken(
  t: TestContext,
  client: KubeClient,
  namespace: string,
  expirationSeconds = 600,
): Promise<RotatingToken> {
  const resolved = resolveSettings(`tok-${randomBytes(3).toString("hex")}`, {
    namespace,
    createNamespace: false,
    watchNamespaces: [namespace],
    operatorPlacement: "external",
  });
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.issues));
  const settings = resolved.settings;
  const serviceAccount = operatorObjectNames(settings).serviceAccount;
  const rbac = operatorRbac(settings);
  const objects = [
    operatorServiceAccount(settings),
    rbac.clusterRole,
    rbac.clusterRoleBinding,
    ...rbac.watchedNamespaceGrants.flatMap((grant) => [grant.role, grant.binding]),
    ...(rbac.leaderElection ? [rbac.leaderElection.role, rbac.leaderElection.binding] : []),
  ] as unknown as KubeObject[];
  for (const object of objects) await client.create(object);
  t.after(async () => {
    for (const object of objects.filter((o) => o.metadata.namespace === undefined)) {
      await client.delete(object.apiVersion, object.kind, object.metadata.name ?? "").catch(() => undefined);
    }
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), "rotating-token-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tokenFile = path.join(dir, "token");
  const kubeconfigFile = path.join(dir, "kubeconfig");

  const mint = async (seconds: number): Promise<MintedToken> => {
    const secret = `${serviceAccount}-token-${randomBytes(3).toString("hex")}`;
    const created = await client.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: secret, namespace },
      type: "Opaque",
    } as KubeObject);
    const answer = await client.post<{ status: { token: string; expirationTimestamp: string } }>(
      `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          expirationSeconds: seconds,
          boundObjectRef: { apiVersion: "v1", kind: "Secret", name: secret, uid: created.metadata.uid },
        },
      },
    );
    return { token: answer.status.token, secret, expiresAt: Date.parse(answer.status.expirationTimestamp) };
  };
  const write = (file: string, content: string) => {
    writeFileSync(`${file}.tmp`, content, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  };

  // The kubeconfig: the cluster of the admin connection, the user a token file (as the launcher writes it).
  const first = await mint(expirationSeconds);
  const withToken = parse(await serviceAccountKubeconfig(client, namespace, serviceAccount)) as {
    users: { user: Record<string, unknown> }[];
  };
  withToken.users[0]!.user = { tokenFile };
  write(tokenFile, first.token);
  write(kubeconfigFile, stringify(withToken));

  const asToken = (token: MintedToken) => {
    const config = parse(stringify(withToken)) as typeof withToken;
    config.users[0]!.user = { token: token.token };
    return new KubeClient(loadKubeConfig({ kubeconfig: stringify(config) }));
  };
  const handle: RotatingToken = {
    serviceAccount,
    kubeconfigFile,
    tokenFile,
    current: first,
    async rotate(seconds = expirationSeconds) {
      const next = await mint(seconds);
      write(tokenFile, next.token);
      handle.current = next;
      return next;
    },
    async revoke(token) {
      await client.delete("v1", "Secret", token.secret, namespace);
    },
    async rejected(token) {
      try {
        await asToken(token).list("example.com/v1", "MyAppInstance", { namespace, limit: 1 });
        return false;
      } catch (error) {
        if (error instanceof UnauthorizedError) return true;
        throw error;
      }
    },
  };
  return handle;
}
