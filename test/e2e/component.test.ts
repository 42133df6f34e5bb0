/**
 * MyAppOperator through the real pulumi engine, on the local cluster:
 * - namespaced, in-cluster, 2 replicas: `pulumi up` installs everything (CRD Established, Deployment admitted by a
 *   Pod Security "restricted" namespace); the operator, run locally with the ServiceAccount's token and the
 *   Deployment's own flags, reconciles an instance to Ready; the token is denied Secrets and other namespaces;
 *   its /metrics (`--metrics-secure`, one of those flags) refuses a scrape without a token or with a token without
 *   the right, and answers a ServiceAccount bound to the component's metrics-reader ClusterRole;
 *   `pulumi destroy` removes everything but the CRD and leaves the instance untouched.
 * - cluster-wide, external: CRD, namespace, ServiceAccount and RBAC only, and the token reads instances
 *   cluster-wide but still no Secrets.
 * - the YAML install (same builders) applies cleanly with `kubectl apply --server-side`.
 *
 * Needs the toolchain and the local cluster: run with `npm test -- test/e2e/component.test.ts`.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import * as k8s from "@pulumi/kubernetes";
import type { Stack } from "@pulumi/pulumi/automation/index.js";
import { freePort } from "../../tools/lib/operator-launcher.ts";
import { apiVersion, crdName, defaultChartKinds, finalizer, kind } from "../../api/index.ts";
import { installManifests, renderInstallYaml } from "../../components/install-manifests.ts";
import { MyAppOperator } from "../../components/my-app-operator.ts";
import { operatorFlags } from "../../components/operator-flags.ts";
import {
  clusterScopedRules,
  clusterWideRules,
  leaderElectionRules,
  secureMetricsRules,
  watchedNamespaceRules,
} from "../../components/rbac-rules.ts";
import { loadCrdManifest } from "../../components/crd.ts";
import { chartKindRules } from "../../components/chart-kinds.ts";
import { policyRules } from "../../components/rbac-objects.ts";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import { resolveSettings, type MyAppOperatorArgs, type OperatorSettings } from "../../components/settings.ts";
import { ForbiddenError, KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.ts";
import { repoRoot, toolchainBinDir } from "../../tools/lib/paths.ts";
import { run } from "../../tools/lib/run.ts";
import { adminClient, kubectl, namespaceReleasingInstances, waitFor, type Typed } from "../support/cluster.ts";
import { fetchMetrics, metricsScrapers } from "../support/metrics-scraper.ts";
import { inlineStack } from "../support/pulumi.ts";
import { teardown, type Defer } from "../support/teardown.ts";

const client = adminClient();
const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
const minutes = (n: number) => n * 60_000;

type Condition = { type: string; status: string; reason?: string; message?: string };
type Instance = Typed<{ spec: Record<string, unknown>; status?: { conditions?: Condition[]; phase?: string } }>;
type Rules = Typed<{ rules: unknown }>;

describe("MyAppOperator on the local cluster", { timeout: minutes(20) }, () => {
  it("namespaced, in-cluster: installs, grants just enough, reconciles with the SA token, destroys all but the CRD", async (t) => {
    const suffix = randomBytes(3).toString("hex");
    const name = `e2e-op-${suffix}`;
    const defer = teardown(t);
    const apps = await namespaceReleasingInstances(client, defer, `e2e-apps-${suffix}`);
    const other = await namespaceReleasingInstances(client, defer, `e2e-other-${suffix}`);
    const args: MyAppOperatorArgs = {
      namespace: `e2e-op-${suffix}`,
      watchNamespaces: [apps],
      replicas: 2,
      image: "registry.example/myapp-operator:e2e",
      logLevel: "debug",
      // kwok's pods have no network: the apiserver could not call webhooks through the Service. The webhooks
      // are proven with an external operator (test/e2e/admission-webhooks.test.ts).
      webhooks: { enabled: false },
    };
    const settings = settingsOf(name, args);
    const stack = await operatorStack(defer, name, args);

    // --- pulumi up installs everything ---
    const up = await stack.up();
    assert.equal(up.summary.result, "succeeded");
    assert.deepEqual(Object.fromEntries(Object.entries(up.outputs).map(([key, output]) => [key, output.value])), {
      namespace: settings.namespace,
      serviceAccountName: name,
      crdName,
      metricsEndpoint: `https://${name}-metrics.${settings.namespace}.svc:8080/metrics`,
      metricsReaderClusterRole: `${name}-metrics-reader`,
    });
    for (const output of Object.values(up.outputs)) assert.equal(output.secret, false);
    await assertCrdEstablished();
    const namespace = await client.get("v1", "Namespace", settings.namespace);
    assert.equal(namespace.metadata.labels?.["pod-security.kubernetes.io/enforce"], "restricted");
    await client.get("v1", "ServiceAccount", name, settings.namespace);
    const rbac = "rbac.authorization.k8s.io/v1";
    assert.deepEqual(
      (await client.get<Rules>(rbac, "ClusterRole", name)).rules,
      policyRules([...clusterScopedRules, ...secureMetricsRules]),
    );
    assert.deepEqual((await client.get<Rules>(rbac, "ClusterRole", `${name}-metrics-reader`)).rules, [
      { nonResourceURLs: ["/metrics"], verbs: ["get"] },
    ]);

    // --- a team given `edit` in its namespace manages instances there, never their status (tenant-roles.ts) ---
    await kubectl(
      "create",
      "rolebinding",
      "team-edit",
      "--clusterrole=edit",
      `--serviceaccount=${apps}:team`,
      "-n",
      apps,
    );
    const teamCan = (verb: string, resource: string, ...flags: string[]) =>
      kubectl("auth", "can-i", verb, resource, ...flags, "-n", apps, `--as=system:serviceaccount:${apps}:team`).then(
        (said) => said.trim(),
        () => "no", // can-i exits 1 for "no"
      );
    await waitFor(
      "the edit role to include instances (the apiserver's aggregation)",
      async () => ((await teamCan("create", "myappinstances.example.com")) === "yes" ? true : undefined),
      { timeoutMs: minutes(1) },
    );
    assert.equal(await teamCan("patch", "myappinstances.example.com", "--subresource=scale"), "yes");
    assert.equal(await teamCan("patch", "myappinstances.example.com", "--subresource=status"), "no");
    assert.deepEqual(
      (await client.get<Rules>(rbac, "Role", name, apps)).rules,
      policyRules([...watchedNamespaceRules, ...chartKindRules(defaultChartKinds)]),
    );
    const leaseRole = await client.get<Rules>(rbac, "Role", `${name}-leader-election`, settings.namespace);
    assert.deepEqual(leaseRole.rules, policyRules(leaderElectionRules(`${name}-leader`)));
    await client.get("policy/v1", "PodDisruptionBudget", name, settings.namespace);
    await client.get("v1", "Service", `${name}-metrics`, settings.namespace);

    // --- the restricted namespace admitted the operator's pods (pulumi waited for the rollout) ---
    const deployment = await client.get<
      Typed<{ spec: { template: { spec: object } }; status?: { readyReplicas?: number } }>
    >("apps/v1", "Deployment", name, settings.namespace);
    assert.equal(deployment.status?.readyReplicas, 2, "both replicas passed Pod Security admission and became ready");
    // A pod of the same template is admitted, and one without the security context is not: enforcement is real.
    await client.create(podFrom(settings.namespace, deployment.spec.template.spec), { dryRun: true });
    await assert.rejects(
      client.create(podFrom(settings.namespace, { containers: [{ name: "plain", image: "registry.example/x:1" }] }), {
        dryRun: true,
      }),
      (error: unknown) => error instanceof ForbiddenError && /restricted/.test(error.message),
    );

    // --- the ServiceAccount's token: enough for the operator's work, nothing more ---
    const kubeconfig = await serviceAccountKubeconfig(client, settings.namespace, name);
    const asOperator = new KubeClient(loadKubeConfig({ kubeconfig }));
    await asOperator.list(apiVersion, kind, { namespace: apps });
    await assert.rejects(asOperator.list("v1", "Secret", { namespace: apps }), ForbiddenError, "no Secrets");
    await assert.rejects(asOperator.list("v1", "Secret", { namespace: settings.namespace }), ForbiddenError);
    await assert.rejects(asOperator.list(apiVersion, kind, { namespace: other }), ForbiddenError, "other namespace");
    await assert.rejects(asOperator.list(apiVersion, kind), ForbiddenError, "not cluster-wide");
    await assert.rejects(asOperator.list("apps/v1", "Deployment", { namespace: other }), ForbiddenError);

    // --- the operator, as that ServiceAccount with the Deployment's flags, reconciles an instance to Ready ---
    const operator = await startOperator(defer, settings, kubeconfig);
    await client.create({
      apiVersion,
      kind,
      metadata: { name: "web", namespace: apps },
      spec: { replicas: 1, image: "registry.example/web:1.0.0", port: 8080 },
    });
    const ready = await waitFor(
      "instance web Ready=True",
      async () => {
        const instance = await client.get<Instance>(apiVersion, kind, "web", apps);
        return readyCondition(instance)?.status === "True" ? instance : undefined;
      },
      { timeoutMs: minutes(3), intervalMs: 500 },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\noperator log (tail):\n${operator.logTail()}`);
    });
    assert.ok(!ready.metadata.finalizers?.includes(finalizer), "no storage, no finalizer");
    // /metrics: refused without a token and for a token without the right; a bound scraper reads it
    const scrapers = await metricsScrapers(client, apps, `${name}-metrics-reader`, defer);
    assert.equal((await fetchMetrics(operator.metricsUrl)).status, 401, "no token");
    const stranger = await fetchMetrics(operator.metricsUrl, scrapers.stranger);
    assert.equal(stranger.status, 403, `a token without the right: ${stranger.body}`);
    assert.ok(
      (await operator.successfulReconciles(scrapers.reader)) > 0,
      `this operator process (not another one on the shared cluster) reconciled it\n${operator.logTail()}`,
    );
    const denied = operator
      .log()
      .split("\n")
      .filter((line) => /forbidden/i.test(line));
    assert.deepEqual(denied, [], "the operator never hit a missing permission");
    await operator.stop();

    // --- pulumi destroy: everything of the install goes, the CRD and the instance stay untouched ---
    const before = await client.get<Instance>(apiVersion, kind, "web", apps);
    const childBefore = await client.get("apps/v1", "Deployment", "web", apps);
    const destroy = await stack.destroy();
    assert.equal(destroy.summary.result, "succeeded");
    await assertCrdEstablished();
    const after = await client.get<Instance>(apiVersion, kind, "web", apps);
    assert.deepEqual(
      [
        after.metadata.uid,
        after.metadata.generation,
        after.spec,
        after.metadata.finalizers,
        after.metadata.deletionTimestamp,
      ],
      [before.metadata.uid, before.metadata.generation, before.spec, before.metadata.finalizers, undefined],
    );
    assert.equal((await client.get("apps/v1", "Deployment", "web", apps)).metadata.uid, childBefore.metadata.uid);
    await waitFor(
      "the operator namespace to be gone",
      async () => ((await client.find("v1", "Namespace", settings.namespace)) ? undefined : true),
      { timeoutMs: minutes(3) },
    );
    assert.equal(await client.find(rbac, "ClusterRole", name), undefined);
    assert.equal(await client.find(rbac, "ClusterRole", `${name}-metrics-reader`), undefined);
    assert.equal(await client.find(rbac, "ClusterRoleBinding", name), undefined);
    assert.equal(await client.find(rbac, "Role", name, apps), undefined);
    assert.equal(await client.find(rbac, "RoleBinding", name, apps), undefined);
  });

  it("cluster-wide, external: no workload, a ClusterRole with every rule, still no Secrets", async (t) => {
    const suffix = randomBytes(3).toString("hex");
    const name = `e2e-ext-${suffix}`;
    const defer = teardown(t);
    const someNamespace = await namespaceReleasingInstances(client, defer, `e2e-any-${suffix}`);
    const args: MyAppOperatorArgs = { namespace: `e2e-ext-${suffix}`, operatorPlacement: "external" };
    const settings = settingsOf(name, args);
    const stack = await operatorStack(defer, name, args);

    const up = await stack.up();
    assert.equal(up.summary.result, "succeeded");
    assert.equal(up.outputs.metricsEndpoint?.value, undefined);
    await assertCrdEstablished();
    const rbac = "rbac.authorization.k8s.io/v1";
    assert.deepEqual(
      (await client.get<Rules>(rbac, "ClusterRole", name)).rules,
      policyRules([...clusterWideRules(), ...chartKindRules(defaultChartKinds)]),
    );
    await client.get(rbac, "Role", `${name}-leader-election`, settings.namespace);
    assert.equal(await client.find(rbac, "ClusterRole", `${name}-metrics-reader`), undefined, "no in-cluster /metrics");
    const workloads = await client.list("apps/v1", "Deployment", { namespace: settings.namespace });
    assert.deepEqual(workloads.items, [], "an external operator gets no Deployment");

    const kubeconfig = await serviceAccountKubeconfig(client, settings.namespace, name);
    const asOperator = new KubeClient(loadKubeConfig({ kubeconfig }));
    await asOperator.list(apiVersion, kind); // every namespace
    await asOperator.list("storage.k8s.io/v1", "StorageClass");
    await assert.rejects(asOperator.list("v1", "Secret", { namespace: someNamespace }), ForbiddenError);
    await assert.rejects(asOperator.list("v1", "Secret"), ForbiddenError);
    await assert.rejects(asOperator.list("v1", "Pod", { namespace: someNamespace }), ForbiddenError);

    const destroy = await stack.destroy();
    assert.equal(destroy.summary.result, "succeeded");
    await assertCrdEstablished();
    assert.equal(await client.find(rbac, "ClusterRole", name), undefined);
  });

  it("the YAML install from the same builders applies cleanly with kubectl apply --server-side", async (t) => {
    // A unique name and namespace, so the shared cluster's other installs are not touched; dist/install.yaml is
    // this rendering with the default name (a unit test proves the file is current).
    const suffix = randomBytes(3).toString("hex");
    const settings = settingsOf(`e2e-yaml-${suffix}`, {
      namespace: `e2e-yaml-${suffix}`,
      replicas: 2,
      image: "registry.example/myapp-operator:e2e",
    });
    const dir = mkdtempSync(path.join(os.tmpdir(), "install-"));
    const file = path.join(dir, "install.yaml");
    // kwok runs no pods, so nothing would answer the webhooks, and they fail closed: as installed, they would refuse
    // every instance write of the other tests sharing this cluster. Narrowed to this install's own namespace.
    const manifests = installManifests(settings, loadCrdManifest()).map((manifest) =>
      manifest.kind === "ValidatingWebhookConfiguration" || manifest.kind === "MutatingWebhookConfiguration"
        ? onlyIn(manifest, settings.namespace)
        : manifest,
    );
    assert.equal(manifests.filter((manifest) => manifest.kind?.endsWith("WebhookConfiguration")).length, 2);
    writeFileSync(file, renderInstallYaml(manifests));
    const defer = teardown(t);
    defer(async () => {
      for (const kindName of ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]) {
        await client.delete("admissionregistration.k8s.io/v1", kindName, settings.name).catch(() => undefined);
      }
      await client.delete("v1", "Namespace", settings.namespace).catch(() => undefined);
      for (const kindName of ["ClusterRoleBinding", "ClusterRole"]) {
        await client.delete("rbac.authorization.k8s.io/v1", kindName, settings.name).catch(() => undefined);
      }
      await client
        .delete("rbac.authorization.k8s.io/v1", "ClusterRole", `${settings.name}-metrics-reader`)
        .catch(() => undefined);
      for (const kindName of ["ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"]) {
        await client
          .delete("admissionregistration.k8s.io/v1", kindName, `${settings.name}-children`)
          .catch(() => undefined);
      }
      rmSync(dir, { recursive: true, force: true });
    });
    const kubectl = path.join(binDir, "kubectl");
    const env = { ...process.env, KUBECONFIG: process.env.KUBECONFIG };
    // --force-conflicts only matters for the shared CRD, which other tests may have applied with another manager.
    await run(kubectl, ["apply", "--server-side", "--force-conflicts", "-f", file], { env });
    await run(
      kubectl,
      ["rollout", "status", `deployment/${settings.name}`, "-n", settings.namespace, "--timeout=180s"],
      {
        env,
      },
    );
    await assertCrdEstablished();
  });
});

/** A webhook configuration whose webhooks match only objects in `namespace`. */
function onlyIn<T extends { webhooks?: { namespaceSelector?: object }[] }>(configuration: T, namespace: string): T {
  const selector = { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [namespace] }] };
  return {
    ...configuration,
    webhooks: configuration.webhooks?.map((webhook) => ({ ...webhook, namespaceSelector: selector })),
  };
}

/** The settings the component resolves for these arguments (the test drives the operator with the same flags). */
function settingsOf(name: string, args: MyAppOperatorArgs): OperatorSettings {
  const resolved = resolveSettings(name, args);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.issues));
  return resolved.settings;
}

/** An inline program with just the component, run by the built CLI offline; destroyed and removed at the end. */
async function operatorStack(defer: Defer, name: string, args: MyAppOperatorArgs): Promise<Stack> {
  const kubeconfigPath = process.env.KUBECONFIG;
  if (!kubeconfigPath) throw new Error("KUBECONFIG is not set: run with `npm test -- test/e2e/component.test.ts`");
  const kubeconfig = readFileSync(kubeconfigPath, "utf8");
  const program = async () => {
    const provider = new k8s.Provider("local", { kubeconfig });
    // In-cluster on kwok's fake nodes on purpose: this test checks what the install creates and grants, and drives
    // the operator itself with the ServiceAccount's token, so the component's refusal of fake nodes is turned off.
    const platform = new MyAppOperator(name, args, { provider, readNodes: false });
    return {
      namespace: platform.namespace,
      serviceAccountName: platform.serviceAccountName,
      crdName: platform.crdName,
      metricsEndpoint: platform.metricsEndpoint,
      metricsReaderClusterRole: platform.metricsReaderClusterRole,
    };
  };
  return inlineStack({ stackName: name, projectName: "component-e2e", program, kubeconfigPath, defer });
}

async function assertCrdEstablished(): Promise<void> {
  const crd = await client.get<Typed<{ status?: { conditions?: Condition[] } }>>(
    "apiextensions.k8s.io/v1",
    "CustomResourceDefinition",
    crdName,
  );
  const established = crd.status?.conditions?.find((condition) => condition.type === "Established");
  assert.equal(established?.status, "True", `CRD ${crdName} is Established`);
}

function readyCondition(instance: Instance): Condition | undefined {
  return instance.status?.conditions?.find((condition) => condition.type === "Ready");
}

function podFrom(namespace: string, spec: object): KubeObject {
  return { apiVersion: "v1", kind: "Pod", metadata: { generateName: "admission-probe-", namespace }, spec };
}

interface LocalOperator {
  stop(): Promise<void>;
  log(): string;
  logTail(): string;
  /** This process's /metrics (secure with the Deployment's flags). */
  readonly metricsUrl: string;
  /** Sum of controller_runtime_reconcile_total{result="success"}, scraped with `token`. */
  successfulReconciles(token: string): Promise<number>;
}

/** Runs `node operator/main.ts` with the Deployment's flags (local bind addresses) as the ServiceAccount. */
async function startOperator(defer: Defer, settings: OperatorSettings, kubeconfig: string): Promise<LocalOperator> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "operator-"));
  const kubeconfigFile = path.join(dir, "kubeconfig");
  writeFileSync(kubeconfigFile, kubeconfig, { mode: 0o600 });
  const logFile = path.join(dir, "operator.log");
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  const flags = operatorFlags(settings, {
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    healthProbeBindAddress: `127.0.0.1:${healthPort}`,
  });
  const output = openSync(logFile, "a");
  const child: ChildProcess = spawn(process.execPath, [path.join(repoRoot, "operator/main.ts"), ...flags], {
    cwd: repoRoot,
    // No POD_NAMESPACE (the pod's downward API sets it): the flags alone name the operator's namespace
    env: { ...process.env, KUBECONFIG: kubeconfigFile },
    stdio: ["ignore", output, output],
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const readLog = () => readFileSync(logFile, "utf8");
  const tail = () => readLog().split("\n").slice(-40).join("\n");
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  };
  defer(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  await waitFor(
    `operator /readyz on 127.0.0.1:${healthPort}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`the operator exited (${child.exitCode}):\n${tail()}`);
      const response = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
      return response.ok ? true : undefined;
    },
    { timeoutMs: minutes(2), intervalMs: 500 },
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\noperator log (tail):\n${tail()}`);
  });
  return {
    stop,
    log: readLog,
    logTail: tail,
    metricsUrl: `https://127.0.0.1:${metricsPort}/metrics`,
    async successfulReconciles(token: string) {
      const { status, body: text } = await fetchMetrics(`https://127.0.0.1:${metricsPort}/metrics`, token);
      assert.equal(status, 200, text);
      const samples = text.matchAll(/^controller_runtime_reconcile_total\{[^}]*result="success"[^}]*\} (\d+)/gm);
      return [...samples].reduce((sum, match) => sum + Number(match[1]), 0);
    },
  };
}
