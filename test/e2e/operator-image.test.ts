/**
 * The operator image, built on this machine and run the way a pod runs it, reconciles an instance on the local
 * cluster:
 * - `buildOperatorImage` builds it without a daemon (buildah, the repository's Dockerfile), or reuses the image in
 *   ~/.cache/myapp-platform/images/ with the same key (bundle, Dockerfile, Node, recipe);
 * - the component's own builders give the ServiceAccount and RBAC (applied here) and the Deployment whose container
 *   runc runs: its args, env (downward API resolved), security context and /tmp emptyDir;
 * - in-cluster configuration only: a TokenRequest token, the cluster's CA and the namespace mounted at
 *   /var/run/secrets/kubernetes.io/serviceaccount, and KUBERNETES_SERVICE_HOST/PORT; no kubeconfig anywhere;
 * - it runs as 65532 with a read-only root filesystem, no capabilities and no new privileges, reconciles an instance
 *   to Ready (its Deployment and Service created by the container) and a chart instance (fetched over HTTPS from a
 *   source behind a private CA, the component's chartSourcesCa mounted as NODE_EXTRA_CA_CERTS; the image's helm;
 *   its 200 KiB render parsed on the render thread), stops cleanly on SIGTERM, and the container is deleted whether
 *   the test passes or not;
 * - its /metrics (`--metrics-secure`, from the Deployment) refuses a scrape without a token (401) and a token
 *   without the right (403), and answers a ServiceAccount bound to the component's metrics-reader ClusterRole.
 *
 * Needs the toolchain and the local cluster, and root (runc): run with `npm test -- test/e2e/operator-image.test.ts`.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { parse, stringify } from "yaml";
import { createCertificateAuthority, createServingCertificate } from "../../operator/admission/certificates.ts";
import { freePort } from "../../tools/lib/operator-launcher.ts";
import { apiVersion, kind } from "../../api/index.ts";
import { operatorDeployment } from "../../components/deployment.ts";
import { installManifests } from "../../components/install-manifests.ts";
import { loadCrdManifest } from "../../components/crd.ts";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import { resolveSettings, type OperatorSettings } from "../../components/settings.ts";
import type { KubeObject } from "../../kube/index.ts";
import { buildOperatorImage } from "../../tools/lib/image-build.ts";
import { ensureImageTools } from "../../tools/lib/image-tools.ts";
import {
  listContainers,
  runPodContainer,
  serviceAccountMountPath,
  type PodContainerSpec,
} from "../../tools/lib/image-container.ts";
import { progress } from "../../tools/lib/progress.ts";
import { adminClient, namespaceReleasingInstances, waitFor } from "../support/cluster.ts";
import { fetchMetrics, metricsScrapers } from "../support/metrics-scraper.ts";
import { teardown } from "../support/teardown.ts";
import { scrape, sum } from "../../bench/support/prometheus.ts";
import { ensureCrd, isReadyAtSpec, waitForInstance } from "../support/operator.ts";
import { packChart } from "../support/helm.ts";

const client = adminClient();
const chartDir = path.resolve(import.meta.dirname, "../../examples/charts/myapp");
const minutes = (n: number) => n * 60_000;
const fieldManager = "myapp-test";
const step = progress("operator-image");

describe("the operator image", { timeout: minutes(20) }, () => {
  it("built here and run by runc with in-cluster configuration, reconciles an instance to Ready", async (t) => {
    // --- the image: built (cold) or found in the cache (warm); one apt-get run for every tool on a new machine ---
    await ensureImageTools(["buildah", "umoci", "runc"], step);
    const image = await buildOperatorImage(step);
    step(`${image.cached ? "cached" : "built"} image ${image.ref}: ${image.compressedBytes} bytes compressed`);

    // --- the platform's objects the way the component makes them: namespace, ServiceAccount, RBAC ---
    const suffix = randomBytes(3).toString("hex");
    const defer = teardown(t);
    const apps = await namespaceReleasingInstances(client, defer, `e2e-img-apps-${suffix}`);
    // A chart repository over HTTPS whose certificate a private CA signed (the platform's chartSourcesCa)
    const charts = await privateChartRepository(defer);
    const settings = settingsOf(`e2e-img-${suffix}`, {
      watchNamespaces: [apps],
      replicas: 2,
      image: `localhost/myapp-operator:${image.tag}`,
      chartKinds: ["apps/v1/Deployment", "v1/Service", "v1/ConfigMap"],
      chartSources: [charts.url],
      chartSourcesCa: charts.ca,
    });
    await ensureCrd(client);
    const platform = installManifests(settings, loadCrdManifest()) as KubeObject[];
    const deployment = operatorDeployment(settings);
    assert.ok(deployment, "an in-cluster install has a Deployment");
    const rbac = platform.filter((object) =>
      ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap"].includes(
        object.kind,
      ),
    );
    defer(async () => {
      for (const object of [...rbac].reverse()) {
        const { name, namespace } = object.metadata;
        await client.delete(object.apiVersion, object.kind, name ?? "", namespace).catch(() => undefined);
      }
    });
    for (const object of rbac) await client.apply(object, { fieldManager, force: true });

    // --- the pod's container, from the Deployment: what runc gets ---
    const podName = `${settings.name}-${randomBytes(3).toString("hex")}`;
    const [metricsPort, healthPort, webhookPort] = [await freePort(), await freePort(), await freePort()];
    // The container shares the host's network here: every port is a free one of 127.0.0.1, the webhook's too (it
    // serves, with a certificate it keeps in its namespace as the ServiceAccount, before "operator starting").
    const spec = await containerSpec(settings, deployment as KubeObject, podName, image.ref, {
      metrics: `127.0.0.1:${metricsPort}`,
      health: `127.0.0.1:${healthPort}`,
      webhook: `127.0.0.1:${webhookPort}`,
    });
    const container = await runPodContainer(spec, step);
    defer(() => container.remove());
    const log = () => container.lines.slice(-30).join("\n");
    await container.waitForLine((line) => line.includes('"operator starting"'), minutes(2), '"operator starting"');
    await waitFor(
      `the container's /readyz on 127.0.0.1:${healthPort}`,
      async () => ((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok ? true : undefined),
      { timeoutMs: minutes(2), intervalMs: 500 },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\ncontainer log:\n${log()}`);
    });

    // --- it runs as a restricted pod: uid/gid 65532, no capabilities, no new privileges, read-only root ---
    const status = readFileSync(`/proc/${container.pid}/status`, "utf8");
    assert.match(status, /^Uid:\s+65532\s+65532\s+65532\s+65532$/m);
    assert.match(status, /^Gid:\s+65532\s+65532\s+65532\s+65532$/m);
    assert.match(status, /^CapEff:\s+0+$/m);
    assert.match(status, /^CapBnd:\s+0+$/m);
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    const rootMount = readFileSync(`/proc/${container.pid}/mountinfo`, "utf8")
      .split("\n")
      .find((line) => line.split(" ")[4] === "/");
    assert.ok(rootMount, "the container has a root mount");
    assert.ok(rootMount.split(" ")[5]?.split(",").includes("ro"), `the root filesystem is read-only: ${rootMount}`);
    const write = (file: string) =>
      container.exec(["/nodejs/bin/node", "-e", `require("node:fs").writeFileSync(${JSON.stringify(file)}, "x")`]);
    const rootWrite = await write("/probe");
    assert.notEqual(rootWrite.code, 0, "writing to / fails");
    assert.match(rootWrite.stderr, /EROFS|read-only file system/);
    assert.equal((await write("/tmp/probe")).code, 0, "/tmp (the emptyDir) is writable");
    // --- the image carries only Node, the operator, helm and its guest tools; the pod's configuration is all it has ---
    const inside = await container.exec([
      "/nodejs/bin/node",
      "-e",
      `const fs = require("node:fs"); console.log(JSON.stringify({` +
        ` root: fs.readdirSync("/").sort(), app: fs.readdirSync("/app").sort(),` +
        ` helm: fs.statSync("/usr/local/bin/helm").mode & 0o111 ? "executable" : "not executable",` +
        ` guestTools: ["/usr/bin/prlimit", "/usr/bin/chrt"].filter((f) => fs.existsSync(f) && fs.statSync(f).mode & 0o111),` +
        ` serviceAccount: fs.readdirSync(${JSON.stringify(serviceAccountMountPath)}).sort(),` +
        ` kubeconfig: process.env.KUBECONFIG ?? null }))`,
    ]);
    assert.deepEqual(JSON.parse(inside.stdout), {
      // the runtime adds dev, proc, sys and the mount points; no node_modules, no shell, no package manager
      root: ["app", "dev", "etc", "home", "lib", "lib64", "nodejs", "proc", "root", "sys", "tmp", "usr", "var"],
      app: ["THIRD_PARTY_LICENSES.txt", "myapp-operator.mjs", "render-yaml-worker.mjs"],
      // the chart engine the operator runs for spec.chart
      helm: "executable",
      // what holds each render to its limits (prlimit) and moves a looping one to the idle class (chrt)
      guestTools: ["/usr/bin/prlimit", "/usr/bin/chrt"],
      serviceAccount: ["ca.crt", "namespace", "token"],
      kubeconfig: null,
    });

    // --- the containerized operator reconciles an instance: its Deployment and Service exist, it is Ready ---
    await client.create({
      apiVersion,
      kind,
      metadata: { name: "web", namespace: apps },
      spec: { replicas: 2, image: "registry.example/web:1.0.0", port: 8080 },
    });
    await waitForInstance(client, apps, "web", "Ready at its spec", isReadyAtSpec, minutes(3)).catch(
      (error: unknown) => {
        throw new Error(`${(error as Error).message}\ncontainer log:\n${log()}`);
      },
    );
    const child = await client.get<KubeObject & { spec: { replicas: number } }>("apps/v1", "Deployment", "web", apps);
    assert.equal(child.spec.replicas, 2);
    assert.ok(child.metadata.ownerReferences?.some((owner) => owner.kind === kind && owner.name === "web"));
    await client.get("v1", "Service", "web", apps);

    // --- and a chart instance: fetched over HTTPS from a source behind the platform's private CA (the component's
    // chartSourcesCa, NODE_EXTRA_CA_CERTS from the mounted ConfigMap), helm found on the image's PATH and run under
    // its limits as uid 65532 on a read-only root, its render parsed (a 200 KiB ConfigMap: on the render thread,
    // render-yaml-worker.mjs) and applied ---
    // (the chart passes its greeting through `tpl`: a short value that renders to 200 KiB)
    const greeting = '{{ repeat 34134 "hello " }}';
    await client.create({
      apiVersion,
      kind,
      metadata: { name: "charted", namespace: apps },
      spec: {
        image: "nginx:1.27",
        chart: { repo: charts.url, name: "myapp", version: "0.1.0" },
        values: { config: { greeting } },
      },
    });
    await waitForInstance(client, apps, "charted", "Ready at its spec", isReadyAtSpec, minutes(3)).catch(
      (error: unknown) => {
        throw new Error(`${(error as Error).message}\ncontainer log:\n${log()}`);
      },
    );
    const rendered = await client.get<KubeObject & { data: Record<string, string> }>(
      "v1",
      "ConfigMap",
      "charted",
      apps,
    );
    assert.equal(rendered.data["GREETING"], "hello ".repeat(34134));

    // --- /metrics answers only a token allowed to `get /metrics` (the Deployment's --metrics-secure) ---
    assert.ok(spec.args.includes("--metrics-secure"), "the Deployment serves /metrics securely");
    const metricsUrl = `https://127.0.0.1:${metricsPort}/metrics`;
    const scrapers = await metricsScrapers(client, apps, `${settings.name}-metrics-reader`, defer);
    assert.equal((await fetchMetrics(metricsUrl)).status, 401, "a scrape without a token is refused");
    const stranger = await fetchMetrics(metricsUrl, scrapers.stranger);
    assert.equal(stranger.status, 403, `a token without the right is refused: ${stranger.body}`);
    assert.match(stranger.body, new RegExp(`system:serviceaccount:${apps}:stranger`));
    const samples = await scrape(metricsUrl, scrapers.reader);
    assert.ok(
      sum(samples, "controller_runtime_reconcile_total", (labels) => labels.result === "success") > 0,
      "the container (not another operator) reconciled it",
    );
    assert.equal(sum(samples, "leader_election_master_status"), 1, "it holds the Lease, as its ServiceAccount");
    const denied = container.lines.filter((line) => /forbidden/i.test(line));
    assert.deepEqual(denied, [], "the ServiceAccount's RBAC was enough");

    // --- SIGTERM: a clean stop, then the container is deleted ---
    const exit = await container.stop();
    assert.deepEqual(exit, { code: 0, signal: null }, `a clean exit on SIGTERM\n${log()}`);
    assert.ok(container.lines.some((line) => line.includes('"operator stopped"')));
    await container.remove();
    assert.ok(!(await listContainers()).includes(container.id), "runc no longer knows the container");
  });
});

function settingsOf(name: string, args: Parameters<typeof resolveSettings>[1]): OperatorSettings {
  const resolved = resolveSettings(name, args);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.issues));
  return resolved.settings;
}

interface Container {
  readonly args?: string[];
  readonly env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  readonly securityContext?: {
    readonly allowPrivilegeEscalation?: boolean;
    readonly readOnlyRootFilesystem?: boolean;
    readonly capabilities?: { readonly drop?: string[] };
  };
  readonly volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number };
  readonly containers: Container[];
  readonly volumes?: { name: string; emptyDir?: { sizeLimit?: string }; configMap?: { name: string } }[];
}

/**
 * What a kubelet would run for the Deployment's pod `podName`: its container's args (bind addresses on 127.0.0.1:
 * the container shares the host's network), env with the downward API resolved, security context and emptyDirs,
 * and the ServiceAccount volume: a TokenRequest token, the cluster's CA, the namespace.
 */
async function containerSpec(
  settings: OperatorSettings,
  deployment: KubeObject,
  podName: string,
  imageRef: string,
  bind: { metrics: string; health: string; webhook: string },
): Promise<PodContainerSpec> {
  const pod = (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
  const container = pod.containers[0]!;
  const args = (container.args ?? []).map((arg) =>
    arg
      .replace(/^--metrics-bind-address=.*/, `--metrics-bind-address=${bind.metrics}`)
      .replace(/^--health-probe-bind-address=.*/, `--health-probe-bind-address=${bind.health}`)
      .replace(/^--webhook-bind-address=.*/, `--webhook-bind-address=${bind.webhook}`),
  );
  const downward: Record<string, string> = { "metadata.name": podName, "metadata.namespace": settings.namespace };
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const value = variable.value ?? downward[variable.valueFrom?.fieldRef?.fieldPath ?? ""];
    assert.ok(value !== undefined, `env ${variable.name}: the test resolves only the downward API fields it knows`);
    env[variable.name] = value;
  }
  const mounted = (container.volumeMounts ?? []).map((mount) => ({
    mount,
    volume: pod.volumes?.find((v) => v.name === mount.name),
  }));
  const emptyDirs = mounted.flatMap(({ mount, volume }) =>
    volume?.emptyDir
      ? [{ mountPath: mount.mountPath, sizeBytes: quantityBytes(volume.emptyDir.sizeLimit ?? "64Mi") }]
      : [],
  );
  // configMap volumes, as the kubelet writes them: the ConfigMap's data, read from the cluster
  const configMaps = [];
  for (const { mount, volume } of mounted) {
    if (!volume?.configMap) continue;
    const source = await client.get<KubeObject & { data?: Record<string, string> }>(
      "v1",
      "ConfigMap",
      volume.configMap.name,
      settings.namespace,
    );
    configMaps.push({ mountPath: mount.mountPath, files: source.data ?? {} });
  }
  assert.equal(emptyDirs.length + configMaps.length, mounted.length, "every volume is an emptyDir or a ConfigMap");

  // The ServiceAccount volume, from a TokenRequest (what the kubelet's projected volume holds).
  const kubeconfig = parse(await serviceAccountKubeconfig(client, settings.namespace, settings.name)) as {
    clusters: { cluster: { server: string; "certificate-authority-data": string } }[];
    users: { user: { token: string } }[];
  };
  const server = new URL(kubeconfig.clusters[0]!.cluster.server);
  return {
    id: podName,
    imageRef,
    args,
    env,
    runAsUser: pod.securityContext?.runAsUser ?? 0,
    runAsGroup: pod.securityContext?.runAsGroup ?? 0,
    readOnlyRootFilesystem: container.securityContext?.readOnlyRootFilesystem ?? false,
    allowPrivilegeEscalation: container.securityContext?.allowPrivilegeEscalation ?? true,
    dropAllCapabilities: container.securityContext?.capabilities?.drop?.includes("ALL") ?? false,
    emptyDirs,
    configMaps,
    apiServer: { host: server.hostname, port: Number(server.port || 443) },
    serviceAccount: {
      token: kubeconfig.users[0]!.user.token,
      caCrt: Buffer.from(kubeconfig.clusters[0]!.cluster["certificate-authority-data"], "base64").toString(),
      namespace: settings.namespace,
    },
  };
}

/** "64Mi" → bytes (the binary suffixes the component uses). */
function quantityBytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  assert.ok(match, `a quantity the test understands: ${quantity}`);
  return Number(match[1]) * { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, "": 1 }[match[2] ?? ""]!;
}

/**
 * A chart repository serving the example chart over HTTPS on 127.0.0.1 (the container shares the host's network),
 * its certificate signed by a CA of its own: the URL, and the CA's PEM. Closed by `defer`.
 */
async function privateChartRepository(defer: (undo: () => unknown) => void): Promise<{ url: string; ca: string }> {
  const nowMs = Date.now();
  const ca = await createCertificateAuthority({ validityMs: minutes(60), nowMs, commonName: "e2e-charts-ca" });
  const serving = await createServingCertificate({ ca, hosts: ["127.0.0.1"], validityMs: minutes(60), nowMs });
  const chart = await packChart(chartDir);
  const server = createHttpsServer({ cert: serving.cert, key: serving.key }, (request, response) => {
    if (request.url === "/charts/index.yaml") {
      const entry = { name: "myapp", version: "0.1.0", urls: ["myapp-0.1.0.tgz"] };
      response.end(stringify({ apiVersion: "v1", entries: { myapp: [entry] } }));
    } else if (request.url === "/charts/myapp-0.1.0.tgz") response.end(chart);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/charts/`, ca: ca.cert };
}
