/**
 * Least privilege, proven on the real local cluster: the operator runs as a ServiceAccount holding exactly the
 * rules of components/rbac-rules.ts (namespaced mode) and under the admission policy of components/admission-policy.ts,
 * with every HTTP request it makes recorded (test/support/request-recorder.ts, a preload: the operator's own code
 * is unchanged). Through a whole lifecycle (create, scale, roll out, move to a StatefulSet, grow its volumes on a
 * class that allows expansion, delete with reclaim Delete, pods Pod Security rejects, scrapes of its secure
 * /metrics, shutdown) every request is allowed, and the verbs used are exactly the verbs granted: a rule nobody
 * uses fails the test. The settings are an in-cluster install's (its ClusterRole has the secure-metrics reviews).
 * Of the rules for the chart allow-list (no chart is rendered here) only list and watch are used, by the informers
 * of every chart kind the operator may read. The platform opts into ConfigMaps, Secrets and Ingresses for charts:
 * they are granted in the watched namespace's Role only (never by the ClusterRole), and the admission policy
 * refuses an operator write that breaks any of its rules (each tried once, as a dry-run with the operator's token).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { apiVersion, chartKindName, kind } from "../../api/index.ts";
import { operatorAdmissionPolicy } from "../../components/admission-policy.ts";
import { chartKindRules } from "../../components/chart-kinds.ts";
import { operatorObjectNames } from "../../components/metadata.ts";
import { metricsReaderClusterRole } from "../../components/metrics-reader.ts";
import {
  clusterScopedRules,
  leaderElectionRules,
  secureMetricsRules,
  verbsNotSeenOnTheWire,
  watchedNamespaceRules,
} from "../../components/rbac-rules.ts";
import { operatorRbac } from "../../components/rbac-objects.ts";
import { operatorServiceAccount } from "../../components/service-account.ts";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import { resolveSettings } from "../../components/settings.ts";
import { AdmissionDeniedError, ForbiddenError, KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { privilegedDeployment } from "../support/privileged-deployment.ts";
import { adminClient, testNamespace, waitFor, type Typed } from "../support/cluster.ts";
import {
  conditionOf,
  createInstance,
  getInstance,
  isCurrent,
  isReadyAtSpec,
  patchSpec,
  startOperator,
  waitForGone,
  waitForInstance,
} from "../support/operator.ts";
import { fetchMetrics, metricsScrapers } from "../support/metrics-scraper.ts";
import { authorizedRequest, grantLines, ruleLines, type RecordedRequest } from "../support/rbac-requests.ts";

const recorder = fileURLToPath(new URL("../support/request-recorder.ts", import.meta.url));
const minutes = (n: number) => n * 60_000;

type Review = Typed<{ status?: { allowed?: boolean } }>;

type Claim = Typed<{
  spec: { resources: { requests: { storage: string } } };
  status?: { capacity?: { storage?: string } };
}>;

test(
  "the operator uses exactly the verbs its RBAC grants, and the admission policy admits all of its writes",
  { timeout: minutes(12) },
  async (t) => {
    const client = adminClient();
    const namespace = await testNamespace(t, client, "lp");
    // Pod Security "restricted", as the platform's own namespace: the app's pods must comply by default.
    await client.mergePatch("v1", "Namespace", namespace, undefined, {
      metadata: { labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
    });

    // --- a ServiceAccount with the component's namespaced RBAC and admission policy ---
    const resolved = resolveSettings(`lp-${randomBytes(3).toString("hex")}`, {
      namespace,
      createNamespace: false,
      watchNamespaces: [namespace],
      // In-cluster, as the Deployment runs it: leader election (2 replicas) and /metrics behind --metrics-secure.
      operatorPlacement: "in-cluster",
      image: "registry.example/myapp-operator:test",
      replicas: 2,
      // Wider kinds than the default (the built-in template's), opted into: granted in the namespace's Role only.
      chartKinds: [
        "apps/v1/Deployment",
        "apps/v1/StatefulSet",
        "v1/Service",
        "v1/ConfigMap",
        "v1/Secret",
        "networking.k8s.io/v1/Ingress",
      ],
    });
    if (!resolved.ok) throw new Error(JSON.stringify(resolved.issues));
    const settings = resolved.settings;
    const names = operatorObjectNames(settings);
    const rbac = operatorRbac(settings);
    const admission = operatorAdmissionPolicy(settings);
    const objects = [
      operatorServiceAccount(settings),
      metricsReaderClusterRole(settings),
      rbac.clusterRole,
      rbac.clusterRoleBinding,
      ...rbac.watchedNamespaceGrants.flatMap((grant) => [grant.role, grant.binding]),
      ...(rbac.leaderElection ? [rbac.leaderElection.role, rbac.leaderElection.binding] : []),
      admission.policy,
      admission.binding,
    ] as unknown as KubeObject[];
    for (const object of objects) await client.create(object);
    t.after(async () => {
      for (const object of objects.filter((o) => o.metadata.namespace === undefined)) {
        await client.delete(object.apiVersion, object.kind, object.metadata.name ?? "").catch(() => undefined);
      }
    });
    const dir = mkdtempSync(path.join(os.tmpdir(), "least-privilege-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const kubeconfigPath = path.join(dir, "kubeconfig");
    const kubeconfig = await serviceAccountKubeconfig(client, namespace, names.serviceAccount);
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
    const recordPath = path.join(dir, "requests.jsonl");
    writeFileSync(recordPath, "");

    // The apiserver's RBAC authorizer learns of new Roles and bindings from informers, a moment after they are
    // stored: wait until each rule is in effect for the token (one verb of each), or the operator's first requests
    // could be refused, and recorded as such.
    const asOperator = new KubeClient(loadKubeConfig({ kubeconfig }));
    const grants = [
      { namespace: undefined, rules: rbac.clusterRole.rules ?? [] },
      ...[...rbac.watchedNamespaceGrants, ...(rbac.leaderElection ? [rbac.leaderElection] : [])].map((grant) => ({
        namespace: grant.namespace,
        rules: grant.role.rules ?? [],
      })),
    ];
    for (const { namespace: where, rules } of grants) {
      for (const rule of rules) {
        const [resource = "", subresource] = (rule.resources?.[0] ?? "").split("/");
        const access = {
          verb: rule.verbs[0],
          group: rule.apiGroups?.[0] ?? "",
          resource,
          ...(subresource ? { subresource } : {}),
          ...(rule.resourceNames?.[0] ? { name: rule.resourceNames[0] } : {}),
          ...(where ? { namespace: where } : {}),
        };
        await waitFor(`RBAC to allow the operator ${JSON.stringify(access)}`, async () => {
          const review = await asOperator.create<Review>({
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            metadata: {},
            spec: { resourceAttributes: access },
          } as Review);
          return review.status?.allowed === true ? true : undefined;
        });
      }
    }

    // The policy holds the token to instance children, even where RBAC allows the write. The apiserver picks a new
    // policy up within a moment, so the first dry-runs may still pass; only admission's 403 ends the wait.
    const refusal = await waitFor("the admission policy to deny the operator a privileged Deployment", () =>
      asOperator.create(privilegedDeployment(namespace), { dryRun: true }).then(
        () => undefined,
        (error: unknown) => (error instanceof AdmissionDeniedError ? error : Promise.reject(error)),
      ),
    );
    assert.match(refusal.message, /ValidatingAdmissionPolicy .* denied request: the myapp operator may only write/);

    // Each rule of the policy, broken once by an otherwise admissible write of a kind the Role grants.
    for (const [rule, object, expected] of policyBreaches(namespace)) {
      await assert.rejects(
        asOperator.create(object, { dryRun: true }),
        (error: unknown) => error instanceof AdmissionDeniedError && expected.test(error.message),
        rule,
      );
    }
    // The wider kinds are granted in the watched namespace only: elsewhere RBAC refuses (authorization's 403).
    const outside = await asOperator
      .create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "default" } }, { dryRun: true })
      .then(
        () => assert.fail("a ConfigMap outside the watched namespace was allowed"),
        (error: unknown) => error,
      );
    assert.ok(outside instanceof ForbiddenError && !(outside instanceof AdmissionDeniedError), String(outside));
    assert.ok(
      !(rbac.clusterRole.rules ?? []).some((rule) =>
        ["configmaps", "secrets", "ingresses"].some(
          (resource) => rule.resources?.includes(resource) && rule.verbs?.some((verb) => verb !== "get"),
        ),
      ),
      "the ClusterRole grants no chart kind",
    );

    // --- the operator, as that ServiceAccount, recorded ---
    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: { namespace, id: names.leaderElectionId },
      args: [
        `--kubeconfig=${kubeconfigPath}`,
        "--metrics-secure",
        `--chart-kinds=${settings.chartKinds.map(chartKindName).join(",")}`,
      ],
      env: { NODE_OPTIONS: `--import=${recorder}`, MYAPP_RECORD_REQUESTS: recordPath },
    });
    const ready = (name: string, what: string) =>
      waitForInstance(client, namespace, name, what, isReadyAtSpec, minutes(3)).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${operator.logTail()}`);
      });

    // create, then scale, roll out and move the port
    await createInstance(client, namespace, "web", { image: "registry.example/web:1", replicas: 2 });
    await ready("web", "Ready");
    await patchSpec(client, namespace, "web", { replicas: 3, image: "registry.example/web:2", port: 9090 });
    await ready("web", "Ready after a rollout");

    // move to a StatefulSet (storage added), then grow its volumes on the default class, which allows expansion
    await patchSpec(client, namespace, "web", { storage: "1Gi" });
    await ready("web", "Ready as a StatefulSet");
    const governing = await client.get<Typed<{ spec: { clusterIP?: string } }>>("v1", "Service", "web-pods", namespace);
    assert.equal(governing.spec.clusterIP, "None", "the StatefulSet's governing Service is headless");
    const growing = Date.now();
    await patchSpec(client, namespace, "web", { storage: "2Gi" });
    const grown = await ready("web", "Ready with 2Gi volumes");
    t.diagnostic(`3 volumes grown 1Gi -> 2Gi, Ready again after ${((Date.now() - growing) / 1000).toFixed(1)} s`);
    const claims = await client.list<Claim>("v1", "PersistentVolumeClaim", {
      namespace,
      labelSelector: grown.status?.selector ?? "",
    });
    assert.equal(claims.items.length, 3);
    for (const claim of claims.items) {
      // Ready means the resizer reported the size, not merely that it was requested.
      assert.equal(claim.status?.capacity?.storage, "2Gi", `${claim.metadata.name} has its new capacity`);
    }

    // volumes deleted with their instance when asked
    await createInstance(client, namespace, "db", {
      image: "registry.example/db:1",
      storage: "1Gi",
      storageReclaimPolicy: "Delete",
    });
    const db = await ready("db", "Ready");
    await client.delete(apiVersion, kind, "db", namespace);
    await waitForGone(client, apiVersion, kind, namespace, "db", minutes(2));
    const dbClaims = await client.list("v1", "PersistentVolumeClaim", {
      namespace,
      labelSelector: db.status?.selector ?? "",
    });
    assert.deepEqual(
      dbClaims.items.filter((c) => !c.metadata.deletionTimestamp),
      [],
      "claims deleted with db",
    );

    // pods the namespace's Pod Security rejects: Degraded with the apiserver's reason, for both workload kinds
    for (const [name, storage] of [
      ["root-web", undefined],
      ["root-db", "1Gi"],
    ] as const) {
      const started = Date.now();
      await createInstance(client, namespace, name, {
        image: "registry.example/root:1",
        podSecurityLevel: "Baseline",
        ...(storage ? { storage } : {}),
      });
      const degraded = await waitForInstance(
        client,
        namespace,
        name,
        "Degraded with FailedCreate",
        (instance) => isCurrent(instance) && conditionOf(instance, "Degraded")?.reason === "FailedCreate",
        minutes(2),
      );
      assert.match(conditionOf(degraded, "Degraded")?.message ?? "", /violates PodSecurity "restricted/);
      t.diagnostic(`${name}: Degraded/FailedCreate ${((Date.now() - started) / 1000).toFixed(1)} s after create`);
    }

    // /metrics scraped as Prometheus would, and refused to a token without the right: TokenReview + SubjectAccessReview
    const scrapers = await metricsScrapers(client, namespace, names.metricsReader, (cleanup) => t.after(cleanup));
    assert.equal((await fetchMetrics(operator.metricsUrl, scrapers.stranger)).status, 403);
    assert.equal((await fetchMetrics(operator.metricsUrl, scrapers.reader)).status, 200);

    // clean shutdown (releases the Lease)
    for (const name of ["web", "root-web", "root-db"]) await client.delete(apiVersion, kind, name, namespace);
    for (const name of ["web", "root-web", "root-db"]) {
      await waitForGone(client, apiVersion, kind, namespace, name, minutes(2));
    }
    const exit = await operator.stop();
    assert.equal(exit.code, 0, operator.logTail());

    // --- what it called ---
    const recorded = readFileSync(recordPath, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as RecordedRequest);
    const denied = recorded.filter((r) => r.status === 401 || r.status === 403);
    assert.deepEqual(denied, [], "RBAC and the admission policy allowed every request");
    const requests = recorded.map(authorizedRequest).filter((r) => r !== undefined);
    const elsewhere = requests.filter((r) => r.namespace !== undefined && r.namespace !== namespace);
    assert.deepEqual(elsewhere, [], "namespaced mode: no request outside the watched namespace");
    const used = grantLines(requests);
    const granted = ruleLines([
      ...watchedNamespaceRules,
      ...clusterScopedRules,
      ...secureMetricsRules,
      ...leaderElectionRules(names.leaderElectionId),
    ]);
    // The chart allow-list's rules (components/chart-kinds.ts): this lifecycle renders no chart, so of them it
    // uses only what the informers need, list and watch of every kind it may read (operator-chart-rbac.test.ts
    // runs charts on a narrowed Role; operator-chart-switch.test.ts shows why the kinds are watched).
    const chartGranted = ruleLines(chartKindRules(settings.chartKinds));
    const chartWatched = settings.chartKinds
      .filter((chartKind) => !chartKind.writeOnly)
      .flatMap((chartKind) => ruleLines(chartKindRules([chartKind])).filter((line) => / (list|watch)$/.test(line)));
    assert.deepEqual(
      used.filter((line) => !granted.includes(line) && !chartGranted.includes(line)),
      [],
      "the operator uses nothing its rules do not grant",
    );
    assert.deepEqual(
      granted.filter((line) => !used.includes(line) && !verbsNotSeenOnTheWire.includes(line)),
      [],
      "the rules grant nothing the operator does not use (but verbsNotSeenOnTheWire)",
    );
    assert.deepEqual(
      chartWatched.filter((line) => !used.includes(line)),
      [],
      "every chart kind the operator may read is watched",
    );
    assert.deepEqual(
      used.filter((line) => chartGranted.includes(line) && !granted.includes(line) && !chartWatched.includes(line)),
      [],
      "without a chart, of the chart kinds' rules only list and watch are used",
    );
    const leases = requests.filter((r) => r.resource === "leases" && r.verbs.some((verb) => verb !== "create"));
    assert.ok(
      leases.every((r) => r.name === names.leaderElectionId),
      "only its own Lease is read and renewed",
    );
    assert.ok((await getInstance(client, namespace, "web").catch(() => undefined)) === undefined);
  },
);

/**
 * One write per rule of the admission policy that breaks only that rule: [rule, object, what the denial says].
 * All are of kinds the namespace's Role lets the operator create, so only the policy can refuse them.
 */
function policyBreaches(namespace: string): [string, KubeObject, RegExp][] {
  const labels = { "app.kubernetes.io/managed-by": "myapp-operator" };
  const ownerReferences = [
    { apiVersion, kind, name: "web", uid: "00000000-0000-4000-8000-000000000001", controller: true },
  ];
  const owned = (name: string) => ({ name, namespace, labels, ownerReferences });
  const deployment = (name: string, podSpec: Record<string, unknown>): KubeObject =>
    ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: owned(name),
      spec: {
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: "app", image: "registry.example/web:1" }], ...podSpec },
        },
      },
    }) as KubeObject;
  return [
    [
      "the operator's label",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "unlabelled", namespace, ownerReferences } },
      /may only write objects labelled app\.kubernetes\.io\/managed-by=myapp-operator/,
    ],
    [
      "a MyAppInstance controller",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "orphan", namespace, labels } },
      /may only write objects controlled by a MyAppInstance/,
    ],
    ["no host namespaces", deployment("host-pid", { hostPID: true }), /may not run pods with host namespaces/],
    [
      "the default ServiceAccount only",
      deployment("borrowed-sa", { serviceAccountName: "web" }),
      /may only run pods as the namespace's default ServiceAccount/,
    ],
    [
      "no service-account-token Secrets",
      {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/service-account-token",
        metadata: { ...owned("minted-token"), annotations: { "kubernetes.io/service-account.name": "default" } },
      } as KubeObject,
      /may not write Secrets of type kubernetes\.io\/service-account-token/,
    ],
    [
      "no externalIPs",
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: owned("external-ips"),
        spec: { ports: [{ port: 80 }], externalIPs: ["203.0.113.10"] },
      } as KubeObject,
      /may not write Services with externalIPs/,
    ],
  ];
}
