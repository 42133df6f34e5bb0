/**
 * One namespace's chart instances, each rendering megabytes within the output limit: a chart may set anything in a
 * Deployment (here a 1 MB environment value in each of six), and the informer cache kept every object of every
 * current render whole. One instance after another, a tenant filled the heap: 37 such instances killed an operator
 * on the component's default heap, 10 one on 256 MiB ("JavaScript heap out of memory"). Now renders kept for reuse
 * and the objects kept whole each have a share of the heap, and a namespace a share of that
 * (operator/heap-budgets.ts): past it, a render's objects are kept as identities and read live when needed.
 *
 * The real cluster, helm and operator process, on a 128 MiB heap. Needs KUBECONFIG pointing at the local cluster
 * (`npm run cluster -- up`) and the toolchain's helm.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { adminClient, testNamespace, waitFor } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import { conditionOf, createInstance, exitOf, getInstance, isCurrent, startOperator } from "../support/operator.ts";

const client = adminClient();
const minutes = (n: number) => n * 60_000;
/** Instances, each rendering {@link deployments} Deployments of {@link padBytes} of environment. */
const instances = 12;
const deployments = 6;
const padBytes = 1_000_000;

/** Deployments that run nothing (replicas from the spec: 0), each carrying `pad` bytes of environment. */
const template = `{{- range $i := until (int .Values.deployments) }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ if eq $i 0 }}{{ $.Release.Name }}{{ else }}{{ $.Release.Name }}-{{ $i }}{{ end }}
spec:
  replicas: {{ $.Values.replicaCount }}
  selector:
    matchLabels: { app: {{ $.Release.Name }}-{{ $i }} }
  template:
    metadata:
      labels: { app: {{ $.Release.Name }}-{{ $i }} }
    spec:
      securityContext: { runAsNonRoot: true, seccompProfile: { type: RuntimeDefault } }
      containers:
        - name: app
          image: {{ $.Values.image.repository }}:{{ $.Values.image.tag }}
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
          env:
            - name: PAD
              value: {{ repeat (int $.Values.pad) "a" | quote }}
{{- end }}
`;

test(
  "a namespace's instances rendering megabytes each leave the operator running, every one of them served",
  { timeout: minutes(20) },
  async (t) => {
    const namespace = await testNamespace(t, client, "heavy-renders");
    const work = await mkdtemp(path.join(tmpdir(), "myapp-heavy-chart-"));
    t.after(() => rm(work, { recursive: true, force: true }));
    const dir = path.join(work, "heavy");
    await mkdir(path.join(dir, "templates"), { recursive: true });
    await writeFile(path.join(dir, "Chart.yaml"), "apiVersion: v2\nname: heavy\nversion: 0.1.0\n");
    await writeFile(path.join(dir, "templates/deployments.yaml"), template);
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "heavy-chart", namespace },
      binaryData: { "chart.tgz": (await packChart(dir)).toString("base64") },
    });
    const operator = await startOperator(t, {
      namespaces: [namespace],
      leaderElection: false,
      args: [`--helm=${await helmBinary()}`],
      env: { NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1" },
    });
    const exited = exitOf(operator);

    // GIVEN a tenant's instances, each rendering six Deployments of 1 MB: 72 MB in all, created one after another
    const names = Array.from({ length: instances }, (_, i) => `heavy-${i}`);
    for (const name of names) {
      await createInstance(client, namespace, name, {
        image: "nginx:1.27",
        replicas: 0,
        chart: { configMap: "heavy-chart" },
        values: { deployments, pad: padBytes },
      });
    }

    // THEN every one becomes Ready, its six Deployments applied, and the operator lives throughout
    const ready = async (name: string) => {
      const instance = await getInstance(client, namespace, name);
      return isCurrent(instance) && conditionOf(instance, "Ready")?.status === "True" ? instance : undefined;
    };
    await Promise.race([
      waitFor(
        `all ${instances} heavy instances Ready`,
        async () => ((await Promise.all(names.map(ready))).every(Boolean) ? true : undefined),
        { timeoutMs: minutes(12) },
      ),
      exited,
    ]);
    const applied = await client.list("apps/v1", "Deployment", { namespace });
    assert.equal(applied.items.length, instances * deployments);
    assert.equal(operator.process.exitCode, null, "the operator is still running");
  },
);
