/**
 * The operator-framework Helm operator as a benchmark peer: `helm-operator run` of helm-operator-plugins (the
 * operator-sdk authors' Helm operator, which operator-sdk's Helm projects build on; operator-sdk's own module
 * versions are not served by the Go module proxy here), built from source by the toolchain's optional piece
 * `helm-operator` (tools/go/helm-operator). It runs out of cluster as a user runs it during development: a
 * watches.yaml mapping one kind (PodinfoApp, bench.example.com/v1alpha1) to a chart directory on local disk, the
 * kubeconfig from KUBECONFIG (its counting proxy's), the namespace from WATCH_NAMESPACE, no leader election.
 *
 * Its status has no notion of the workload: `Deployed=True` says the release was installed or upgraded, not that
 * its pods are ready (operator-sdk#2491). A benchmark that waits for "Ready" waits for that condition AND the
 * Deployment's rollout.
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { findCondition, type Condition } from "../../api/index.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../kube/index.ts";
import { freePort } from "../../tools/lib/operator-launcher.ts";
import { benchFieldManager } from "./cluster.ts";
import { startGoOperator, type Subject, type SubjectOptions } from "./subjects.ts";
import { waitUntil } from "./wait.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export const podinfoAppGroup = "bench.example.com";
export const podinfoAppApiVersion = `${podinfoAppGroup}/v1alpha1`;
export const podinfoAppKind = "PodinfoApp";
const plural = "podinfoapps";

/** Its REST type, for a KubeClient (`resources`). */
export const podinfoAppType: ResourceType = {
  apiVersion: podinfoAppApiVersion,
  kind: podinfoAppKind,
  plural,
  namespaced: true,
};

/** Its collection, for support/cleanup.ts (NS: the namespace). */
export const podinfoAppCollection = `/apis/${podinfoAppApiVersion}/namespaces/NS/${plural}`;

/** A PodinfoApp as the Helm operator keeps it: spec = the chart's values; status as helm-operator-plugins writes it. */
export type PodinfoApp = KubeObject & {
  spec?: Record<string, unknown>;
  status?: { conditions?: Condition[]; deployedRelease?: { name?: string; manifest?: string } };
};

/** The CRD a `operator-sdk create api --plugins helm` scaffold makes: any spec, a status subresource. */
const podinfoAppCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.${podinfoAppGroup}` },
  spec: {
    group: podinfoAppGroup,
    names: { kind: podinfoAppKind, listKind: `${podinfoAppKind}List`, plural, singular: "podinfoapp" },
    scope: "Namespaced",
    versions: [
      {
        name: "v1alpha1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      },
    ],
  },
};

/** Installs the PodinfoApp CRD (server-side apply, forced) and waits until PodinfoApps are served. */
export async function ensurePodinfoAppCrd(client: KubeClient, apps: KubeClient, signal: AbortSignal): Promise<void> {
  await client.apply(podinfoAppCrd as unknown as KubeObject, { fieldManager: benchFieldManager, force: true });
  await waitUntil(
    `${podinfoAppKind} to be served`,
    async () => {
      try {
        await apps.list(podinfoAppApiVersion, podinfoAppKind, { namespace: "default", limit: 1 });
        return true;
      } catch {
        return undefined; // not in discovery yet
      }
    },
    { signal, timeoutMs: 60_000 },
  );
}

/**
 * The release the Helm operator reports as deployed for `app`: its manifest, once `Deployed` is True; undefined
 * before the first install and while an install or upgrade fails.
 */
export function deployedManifest(app: PodinfoApp): string | undefined {
  const deployed = findCondition(app.status?.conditions, "Deployed");
  if (deployed?.status !== "True") return undefined;
  return app.status?.deployedRelease?.manifest;
}

/** Writes `watches.yaml` into `dir`: PodinfoApp → the chart directory `chartDir`, everything else the default. */
export function writeWatches(dir: string, chartDir: string): string {
  const file = path.join(dir, "watches.yaml");
  const [group, version] = podinfoAppApiVersion.split("/");
  writeFileSync(file, stringify([{ group, version, kind: podinfoAppKind, chart: chartDir }]));
  return file;
}

/**
 * Starts `helm-operator run` on `watchesFile`, scoped to `options.namespace`, at `options.concurrency`
 * concurrent reconciles, its other flags at their defaults (a reconcile of every release each minute).
 */
export async function startHelmOperator(watchesFile: string, options: SubjectOptions): Promise<Subject> {
  const probePort = await freePort();
  return startGoOperator(
    {
      name: "helm-operator",
      binary: helmOperatorBinary(),
      args: [
        "run",
        `--watches-file=${watchesFile}`,
        `--health-probe-bind-address=127.0.0.1:${probePort}`,
        "--metrics-bind-address=0",
        `--max-concurrent-reconciles=${options.concurrency}`,
      ],
      probePort,
      env: { KUBECONFIG: options.kubeconfig, WATCH_NAMESPACE: options.namespace },
    },
    options,
  );
}

let built: string | undefined;

/**
 * The helm-operator binary: BENCH_HELM_OPERATOR_BINARY, else the toolchain's optional piece (built on first use
 * into the toolchain cache, its progress lines on stderr; minutes when cold).
 */
export function helmOperatorBinary(): string {
  const given = process.env.BENCH_HELM_OPERATOR_BINARY;
  if (given) return given;
  if (built) return built;
  process.stderr.write("helm-operator: tools/toolchain.sh build helm-operator (cached after the first build)\n");
  const binDir = execFileSync("bash", [path.join(repoRoot, "tools/toolchain.sh"), "build", "helm-operator"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  })
    .trim()
    .split("\n")
    .at(-1)!;
  const binary = path.join(binDir, "helm-operator");
  if (!existsSync(binary)) throw new Error(`tools/toolchain.sh build helm-operator made no ${binary}`);
  return (built = binary);
}
