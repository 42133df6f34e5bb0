/**
 * An operator process's identity as the MyAppOperator component grants it, for tests that run the real operator
 * under its least privilege rather than the test run's admin: a ServiceAccount with the component's RBAC for an
 * operator that watches one namespace (external placement: its Role there and its ClusterRole).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { chartKindName } from "../../api/index.ts";
import { operatorObjectNames } from "../../components/metadata.ts";
import { operatorRbac } from "../../components/rbac-objects.ts";
import { operatorServiceAccount } from "../../components/service-account.ts";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import { resolveSettings } from "../../components/settings.ts";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { waitFor, type Typed } from "./cluster.ts";

/** What a SelfSubjectAccessReview asks: a verb on a resource (and subresource), in a namespace or the cluster. */
export interface Access {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
}

type Review = Typed<{ status?: { allowed?: boolean } }>;

/**
 * A kubeconfig file of that ServiceAccount, once the apiserver allows it each of `accesses` (the RBAC authorizer
 * learns of new bindings a moment after they are stored), and the chart kinds flag of those settings (the kinds
 * its Role lets it watch). Its objects go when the test ends.
 */
export async function componentOperatorIdentity(
  t: TestContext,
  admin: KubeClient,
  namespace: string,
  accesses: readonly Access[],
): Promise<{ kubeconfig: string; chartKindsFlag: string }> {
  const resolved = resolveSettings(`op-${randomBytes(3).toString("hex")}`, {
    namespace,
    createNamespace: false,
    watchNamespaces: [namespace],
    operatorPlacement: "external",
  });
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.issues));
  const { settings } = resolved;
  const rbac = operatorRbac(settings);
  const objects = [
    operatorServiceAccount(settings),
    rbac.clusterRole,
    rbac.clusterRoleBinding,
    ...rbac.watchedNamespaceGrants.flatMap((grant) => [grant.role, grant.binding]),
  ] as unknown as KubeObject[];
  for (const object of objects) await admin.create(object);
  t.after(async () => {
    for (const object of objects.filter((o) => o.metadata.namespace === undefined)) {
      await admin.delete(object.apiVersion, object.kind, object.metadata.name ?? "").catch(() => undefined);
    }
  });
  const kubeconfig = await serviceAccountKubeconfig(admin, namespace, operatorObjectNames(settings).serviceAccount);
  const dir = mkdtempSync(path.join(os.tmpdir(), "operator-identity-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "kubeconfig");
  writeFileSync(file, kubeconfig, { mode: 0o600 });
  const asOperator = new KubeClient(loadKubeConfig({ kubeconfig }));
  t.after(() => asOperator.close());
  for (const access of accesses) {
    await waitFor(`RBAC to allow the operator ${JSON.stringify(access)}`, async () => {
      const review = await asOperator.create<Review>({
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        metadata: {},
        spec: { resourceAttributes: access },
      } as unknown as Review);
      return review.status?.allowed ? true : undefined;
    });
  }
  return { kubeconfig: file, chartKindsFlag: `--chart-kinds=${settings.chartKinds.map(chartKindName).join(",")}` };
}
