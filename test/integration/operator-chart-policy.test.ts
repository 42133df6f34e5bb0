/**
 * Rendered objects obey policy before they are applied, against the local cluster with the real operator and
 * helm: a chart whose values ask for a privileged, host-mounting pod, one that borrows a ServiceAccount of the
 * namespace, one with a Service on externalIPs, one whose Secret would take over an existing Secret, and two
 * instances rendering one Secret name. Each is refused with its reason (Degraded) and nothing it asked for exists;
 * the victims survive untouched. And the platform policy's per-instance limits hold for what a chart renders: an
 * image from a registry the platform does not allow, more replicas than an instance may have; and a namespace's
 * budget, counted on what each chart instance runs rather than on its spec.
 *
 * Needs KUBECONFIG pointing at the local cluster (`npm run cluster -- up`).
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test, type TestContext } from "node:test";
import { apiVersion, kind, reconcileRequestAnnotation } from "../../api/index.ts";
import { adminClient, testNamespace, type Typed } from "../support/cluster.ts";
import { helmBinary, packChart } from "../support/helm.ts";
import {
  conditionOf,
  createInstance,
  getInstance,
  isCurrent,
  startOperator,
  waitForInstance,
  type Instance,
} from "../support/operator.ts";

const client = adminClient();

/** One chart whose values decide the pod spec, a Service's spec and a Secret: each case is an instance's values. */
const templates: Record<string, string> = {
  "Chart.yaml": "apiVersion: v2\nname: policy\nversion: 0.1.0\n",
  "values.yaml": "pod: {}\nsvc: null\nsecret: null\n",
  "templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas | default 1 }}
  selector:
    matchLabels: { app: {{ .Release.Name }} }
  template:
    metadata:
      labels: { app: {{ .Release.Name }} }
    spec:
      {{- toYaml .Values.pod | nindent 6 }}
`,
  "templates/service.yaml": `{{- with .Values.svc }}
apiVersion: v1
kind: Service
metadata:
  name: {{ $.Release.Name }}
spec:
  {{- toYaml . | nindent 2 }}
{{- end }}
`,
  "templates/secret.yaml": `{{- with .Values.secret }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .name }}
stringData:
  password: {{ .password | quote }}
{{- end }}
`,
};

/** A pod that meets Pod Security "restricted". */
const restrictedPod = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  containers: [
    {
      name: "app",
      image: "nginx:1.27",
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    },
  ],
};

function degradedWith(reason: string) {
  return (instance: Instance) => isCurrent(instance) && conditionOf(instance, "Degraded")?.reason === reason;
}

type Secret = Typed<{ data?: Record<string, string> }>;

/** The chart above, packed into the ConfigMap `policy-chart` of `namespace`. */
async function chartConfigMap(t: TestContext, namespace: string): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-chart-policy-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [file, text] of Object.entries(templates)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  await client.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "policy-chart", namespace },
    binaryData: { "chart.tgz": (await packChart(dir)).toString("base64") },
  });
}

test("charts that break policy are refused before anything is applied; nothing is taken over", async (t) => {
  const namespace = await testNamespace(t, client, "op-chart-policy");
  await chartConfigMap(t, namespace);
  // The victims: a ServiceAccount someone granted rights to, and a Secret of someone else's.
  await client.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "deployer", namespace } });
  const victim = await client.create<Secret>({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "db", namespace },
    data: { password: Buffer.from("victim").toString("base64") },
  } as Secret);
  await startOperator(t, { namespaces: [namespace], args: [`--helm=${await helmBinary()}`] });

  const chart = { configMap: "policy-chart" };
  const instance = (name: string, values: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    createInstance(client, namespace, name, { image: "nginx:1.27", chart, values, ...extra });

  // WHEN tenants ask for a privileged pod with the node's root (even at Baseline), a borrowed ServiceAccount, a
  // Service on an external IP, the existing Secret, and two instances one Secret name
  await instance(
    "privileged",
    {
      pod: {
        volumes: [{ name: "root", hostPath: { path: "/" } }],
        containers: [{ name: "app", image: "nginx:1.27", securityContext: { privileged: true } }],
      },
    },
    { podSecurityLevel: "Baseline" },
  );
  await instance("borrower", { pod: { ...restrictedPod, serviceAccountName: "deployer" } });
  await instance("external", { pod: restrictedPod, svc: { ports: [{ port: 80 }], externalIPs: ["203.0.113.7"] } });
  await instance("taker", { pod: restrictedPod, secret: { name: "db", password: "attacker" } });
  await instance("first", { pod: restrictedPod, secret: { name: "shared", password: "first" } });

  // THEN each is Degraded with the reason of its cause, naming the object and the field
  const privileged = await waitForInstance(
    client,
    namespace,
    "privileged",
    "refused",
    degradedWith("ChartPodSecurity"),
  );
  const message = conditionOf(privileged, "Degraded")?.message ?? "";
  assert.match(message, /^Deployment\/privileged does not meet the Baseline pod security level/);
  assert.match(message, /spec\.template\.spec\.volumes\[0\]\.hostPath/);
  assert.match(message, /spec\.template\.spec\.containers\[0\]\.securityContext\.privileged/);

  const borrower = await waitForInstance(
    client,
    namespace,
    "borrower",
    "refused",
    degradedWith("ChartServiceAccountNotAllowed"),
  );
  assert.match(conditionOf(borrower, "Degraded")?.message ?? "", /serviceAccountName is "deployer"/);

  const external = await waitForInstance(
    client,
    namespace,
    "external",
    "refused",
    degradedWith("ChartServiceExternalIPs"),
  );
  assert.match(conditionOf(external, "Degraded")?.message ?? "", /^Service\/external spec\.externalIPs/);

  const taker = await waitForInstance(client, namespace, "taker", "refused", degradedWith("ChildOwnedElsewhere"));
  assert.match(
    conditionOf(taker, "Degraded")?.message ?? "",
    /^Secret\/db already exists .* not controlled by this instance/,
  );

  // ... and nothing a refused render asked for exists, nor was the victim Secret touched
  for (const name of ["privileged", "borrower", "external"]) {
    assert.equal(await client.find("apps/v1", "Deployment", name, namespace), undefined, `Deployment/${name}`);
  }
  assert.equal(await client.find("v1", "Service", "external", namespace), undefined);
  const after = await client.get<Secret>("v1", "Secret", "db", namespace);
  assert.equal(after.metadata.resourceVersion, victim.metadata.resourceVersion, "the victim Secret was written to");
  assert.equal(Buffer.from(after.data?.["password"] ?? "", "base64").toString(), "victim");
  assert.equal(after.metadata.ownerReferences, undefined);

  // WHEN a second instance renders the Secret the first one created
  const first = await waitForInstance(
    client,
    namespace,
    "first",
    "applied",
    (i) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "False",
  );
  const shared = await client.get<Secret>("v1", "Secret", "shared", namespace);
  assert.equal(shared.metadata.ownerReferences?.[0]?.uid, first.metadata.uid);
  await instance("second", { pod: restrictedPod, secret: { name: "shared", password: "second" } });

  // THEN the second is refused and the first keeps its Secret, for good: no flapping between them
  const second = await waitForInstance(client, namespace, "second", "refused", degradedWith("ChildOwnedElsewhere"));
  assert.match(conditionOf(second, "Degraded")?.message ?? "", /^Secret\/shared already exists/);
  // Both are reconciled again, twice each, on request (the slow lane would look at the refused one only in 300 s)
  for (const request of ["again-1", "again-2"]) {
    for (const name of ["first", "second"]) {
      await client.mergePatch(apiVersion, kind, name, namespace, {
        metadata: { annotations: { [reconcileRequestAnnotation]: request } },
      });
      await waitForInstance(client, namespace, name, `reconciled on ${request}`, (i) => {
        return i.status?.lastHandledReconcileAt === request;
      });
    }
  }
  const sharedLater = await client.get<Secret>("v1", "Secret", "shared", namespace);
  assert.equal(sharedLater.metadata.resourceVersion, shared.metadata.resourceVersion, "the shared Secret changed");
  assert.equal(Buffer.from(sharedLater.data?.["password"] ?? "", "base64").toString(), "first");
  assert.equal(conditionOf(await getInstance(client, namespace, "first"), "Degraded")?.status, "False");
  const secondLater = await getInstance(client, namespace, "second");
  assert.equal(
    conditionOf(secondLater, "Degraded")?.lastTransitionTime,
    conditionOf(second, "Degraded")?.lastTransitionTime,
  );
});

test("the platform's registries and replica limit hold for what a chart renders, not only for the spec", async (t) => {
  // GIVEN an operator whose platform allows Docker Hub's official images and 3 replicas an instance
  const namespace = await testNamespace(t, client, "op-chart-limits-policy");
  await chartConfigMap(t, namespace);
  await startOperator(t, {
    namespaces: [namespace],
    args: [`--helm=${await helmBinary()}`, "--allowed-registries=docker.io/library", "--max-replicas=3"],
  });
  const chart = { configMap: "policy-chart" };
  const foreignPod = {
    ...restrictedPod,
    containers: [{ ...restrictedPod.containers[0], image: "evil.example/miner:1" }],
  };

  // WHEN one tenant's chart values run an image from elsewhere, another's 50 replicas, a third stays within both
  await createInstance(client, namespace, "foreign", { image: "nginx:1.27", chart, values: { pod: foreignPod } });
  await createInstance(client, namespace, "crowd", {
    image: "nginx:1.27",
    chart,
    values: { pod: restrictedPod, replicas: 50 },
  });
  await createInstance(client, namespace, "fair", {
    image: "nginx:1.27",
    chart,
    values: { pod: restrictedPod, replicas: 3 },
  });

  // THEN the first two are Degraded naming the field, the rule and the limit, and nothing of theirs exists
  const foreign = await waitForInstance(client, namespace, "foreign", "refused", degradedWith("ChartImageNotAllowed"));
  assert.match(
    conditionOf(foreign, "Degraded")?.message ?? "",
    /^Deployment\/foreign spec\.template\.spec\.containers\[0\]\.image is "evil\.example\/miner:1", not from a registry the platform allows \(only docker\.io\/library, --allowed-registries\)/,
  );
  const crowd = await waitForInstance(client, namespace, "crowd", "refused", degradedWith("ChartReplicasNotAllowed"));
  assert.match(conditionOf(crowd, "Degraded")?.message ?? "", /spec\.replicas is 50, .*\(at most 3, --max-replicas\)/);
  for (const name of ["foreign", "crowd"]) {
    assert.equal(await client.find("apps/v1", "Deployment", name, namespace), undefined, `Deployment/${name}`);
  }
  // AND the one within the limits is applied
  await waitForInstance(
    client,
    namespace,
    "fair",
    "applied",
    (i) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "False",
  );
  assert.ok(await client.find("apps/v1", "Deployment", "fair", namespace));
});

test("a namespace's budget holds for what charts render; each chart instance counts what it runs", async (t) => {
  // GIVEN a namespace whose label gives it 5 replicas in all, and an operator that renders charts
  const namespace = await testNamespace(t, client, "op-chart-budget");
  await client.mergePatch("v1", "Namespace", namespace, undefined, {
    metadata: { labels: { "myapp.example.com/max-replicas": "5" } },
  });
  await chartConfigMap(t, namespace);
  // (a refusal for want of room is looked at again in the slow lane: every 10 s here, not 5 min)
  await startOperator(t, {
    namespaces: [namespace],
    args: [`--helm=${await helmBinary()}`, "--slow-retry-interval=10"],
  });
  const chart = { configMap: "policy-chart" };
  const applied = (i: Instance) => isCurrent(i) && conditionOf(i, "Degraded")?.status === "False";

  // WHEN one tenant's chart runs 3 replicas (its spec asks for 1, which is all admission sees)
  await createInstance(client, namespace, "first", {
    image: "nginx:1.27",
    chart,
    values: { pod: restrictedPod, replicas: 3 },
  });
  const first = await waitForInstance(client, namespace, "first", "applied", applied);
  // THEN it runs, and its status says what it takes of the budget
  assert.deepEqual(first.status?.chartUsage, { replicas: 3, storage: "0" });

  // WHEN a second chart instance asks for 3 more
  await createInstance(client, namespace, "second", {
    image: "nginx:1.27",
    chart,
    values: { pod: restrictedPod, replicas: 3 },
  });
  // THEN it is refused naming the namespace, its budget and what the first runs, and nothing of it exists
  const second = await waitForInstance(client, namespace, "second", "refused", degradedWith("ChartOverBudget"));
  assert.match(
    conditionOf(second, "Degraded")?.message ?? "",
    new RegExp(
      `^the chart runs up to 3 replicas .*namespace ${namespace} may run at most 5 in total \\(the namespace's ` +
        "label myapp\\.example\\.com/max-replicas, in place of --namespace-max-replicas\\); it runs 3 without this instance",
    ),
  );
  assert.equal(await client.find("apps/v1", "Deployment", "second", namespace), undefined);

  // WHEN the first shrinks to 1 replica (its values: the second does not change)
  await client.mergePatch(apiVersion, kind, "first", namespace, {
    spec: { values: { pod: restrictedPod, replicas: 1 } },
  });
  // THEN the second is looked at again and runs: 1 + 3 fit in 5
  await waitForInstance(client, namespace, "second", "applied after the room was freed", applied, 120_000);
  assert.ok(await client.find("apps/v1", "Deployment", "second", namespace));
});
