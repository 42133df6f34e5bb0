/**
 * The operator's admission webhooks on the user's path: `pulumi up` of a MyAppOperator (external placement, a
 * webhook URL, a platform policy) installs the webhook configurations; two operator processes run with the flags
 * the component derives, as its ServiceAccount, behind a TCP balancer that plays the Service; the real apiserver
 * calls them. Each policy rule refuses at the door (server-side apply, dry-run, `kubectl scale`, `pulumi preview`),
 * a namespace's chart-sources annotation narrows the platform's chart sources there, the mutation shows in the
 * stored object, a second replica serves while the first restarts, and with every replica down instances cannot be
 * created or changed but can still be labelled and released.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import * as k8s from "@pulumi/kubernetes";
import type { Stack } from "@pulumi/pulumi/automation/index.js";
import {
  apiVersion,
  appName,
  instanceLabelValue,
  kind,
  labelKeys,
  managedBy,
  namespaceChartSourcesAnnotation,
} from "../../api/index.ts";
import { MyAppOperator } from "../../components/my-app-operator.ts";
import { operatorFlags } from "../../components/operator-flags.ts";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import { resolveSettings, type MyAppOperatorArgs, type OperatorSettings } from "../../components/settings.ts";
import { ApiError, ServerError, type KubeObject } from "../../kube/index.ts";
import { parseAllowedRegistries, registryAllowing } from "../../operator/admission/policy.ts";
import { freePort, launchOperator, type LaunchedOperator } from "../../tools/lib/operator-launcher.ts";
import { repoRoot } from "../../tools/lib/paths.ts";
import { getMetrics } from "../../bench/support/prometheus.ts";
import { adminClient, kubectl, namespaceReleasingInstances, waitFor } from "../support/cluster.ts";
import { getInstance, type Instance } from "../support/operator.ts";
import { pulumiProject } from "../support/pulumi-cli.ts";
import { inlineStack } from "../support/pulumi.ts";
import { startTcpBalancer, type TcpBalancer } from "../support/tcp-balancer.ts";

const client = adminClient();
const minutes = (n: number) => n * 60_000;
const suffix = randomBytes(3).toString("hex");
const name = `wh-${suffix}`;

/** Cleanup steps, run in reverse order after the suite. */
const cleanups: (() => Promise<void>)[] = [];
const defer = (step: () => Promise<void>) => void cleanups.push(step);
const hooks = { after: defer };

interface Replica {
  readonly port: number;
  process: LaunchedOperator;
}

let settings: OperatorSettings;
let balancer: TcpBalancer;
let apps: string;
let baseline: string;
/** A namespace whose label allows one instance: the preview test's own. */
let capped: string;
let fixedClass: string;
const replicas: Replica[] = [];
let launchReplica: (port: number) => Promise<LaunchedOperator>;
/** The component's output: what gives the namespace defaults. */
let namespaceDefaultsBy: unknown;

/** How many /mutate calls the replicas have answered, from their metrics. */
async function mutateCalls(): Promise<number> {
  let calls = 0;
  for (const replica of replicas) {
    const { metricsUrl } = await replica.process.started();
    const text = (await getMetrics(metricsUrl)).body;
    const line = text
      .split("\n")
      .find(
        (l) => l.startsWith("controller_runtime_webhook_latency_seconds_count{") && l.includes('webhook="/mutate"'),
      );
    calls += Number(line?.split(" ").at(-1) ?? 0);
  }
  return calls;
}

const instance = (namespace: string, instanceName: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: instanceName, namespace },
  spec: { replicas: 1, image: "nginx:1.27", port: 80, ...spec },
});

/**
 * `write`'s result or its error, once the webhook judged it: its 500 "could not judge ...; try again" (a lookup over
 * its 4 s allowance on a loaded machine) is no verdict and stores nothing, so the write is sent again.
 */
async function judged<T>(write: () => Promise<T>): Promise<T> {
  const outcome = await waitFor(
    'a verdict on the write (not the webhook\'s "try again")',
    async () => {
      try {
        return { value: await write() };
      } catch (error) {
        if (error instanceof ServerError && /could not judge\b.*\btry again/s.test(error.message)) throw error;
        return { error };
      }
    },
    { timeoutMs: minutes(1), intervalMs: 500 },
  );
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

/** The apiserver's refusal of `write`, as its message; fails when the write is admitted. */
async function refusal(write: () => Promise<unknown>): Promise<string> {
  try {
    await judged(write);
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error));
    return error.message;
  }
  assert.fail("the write was admitted");
}

describe("the operator's admission webhooks", { timeout: minutes(15) }, () => {
  before(async () => {
    balancer = await startTcpBalancer(hooks, () => replicas.map((replica) => replica.port));
    apps = await namespaceReleasingInstances(client, defer, `wh-apps-${suffix}`);
    baseline = await namespaceReleasingInstances(client, defer, `wh-base-${suffix}`);
    capped = await namespaceReleasingInstances(client, defer, `wh-cap-${suffix}`);
    await client.mergePatch("v1", "Namespace", capped, undefined, {
      metadata: { labels: { "myapp.example.com/max-instances": "1" } },
    });
    await client.mergePatch("v1", "Namespace", baseline, undefined, {
      metadata: { labels: { "pod-security.kubernetes.io/enforce": "baseline" } },
    });
    // The platform allows one registry path for charts; the apps namespace narrows it to its team's part.
    await client.mergePatch("v1", "Namespace", apps, undefined, {
      metadata: { annotations: { [namespaceChartSourcesAnnotation]: "oci://registry.example/charts/team-a/" } },
    });
    fixedClass = `wh-fixed-${suffix}`;
    await client.create({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: fixedClass },
      provisioner: "example.com/none",
      allowVolumeExpansion: false,
    });
    defer(() => client.delete("storage.k8s.io/v1", "StorageClass", fixedClass).then(() => undefined));

    const args: MyAppOperatorArgs = {
      namespace: `wh-sys-${suffix}`,
      operatorPlacement: "external",
      watchNamespaces: [apps, baseline, capped],
      webhooks: { url: `https://127.0.0.1:${balancer.port}` },
      chartSources: ["oci://registry.example/charts/"],
      policy: {
        allowedRegistries: ["docker.io/library", "registry.example/apps"],
        maxReplicas: 3,
        maxStorage: "2Gi",
        namespaceBudget: { instances: 4, replicas: 6, storage: "3Gi" },
        requireExpandableStorage: true,
      },
    };
    const resolved = resolveSettings(name, args);
    assert.ok(resolved.ok, JSON.stringify(resolved));
    settings = resolved.settings;
    const stack = await operatorStack(args);
    const up = await stack.up();
    assert.equal(up.summary.result, "succeeded");
    namespaceDefaultsBy = up.outputs["namespaceDefaultsBy"]?.value;

    // The replicas run as the component's ServiceAccount with the flags it derives (their own webhook ports).
    const dir = mkdtempSync(path.join(os.tmpdir(), "wh-"));
    defer(async () => rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = path.join(dir, "kubeconfig");
    writeFileSync(kubeconfig, await serviceAccountKubeconfig(client, settings.namespace, name), { mode: 0o600 });
    const flags = operatorFlags(settings).filter(
      (flag) =>
        !/^--(namespaces|metrics-bind-address|metrics-secure|health-probe-bind-address|webhook-bind-address)\b/.test(
          flag,
        ),
    );
    launchReplica = async (port) => {
      const launched = launchOperator({
        namespaces: settings.watchNamespaces,
        args: [...flags, `--webhook-bind-address=127.0.0.1:${port}`],
        // No POD_NAMESPACE: a user starts an external operator without it, and the flags name every namespace
        env: { ...process.env, KUBECONFIG: kubeconfig },
        label: `webhook replica ${port}`,
      });
      await launched.started({ timeoutMs: 60_000 });
      return launched;
    };
    for (const port of [await freePort(), await freePort()]) {
      replicas.push({ port, process: await launchReplica(port) });
    }
    defer(async () => {
      await Promise.all(replicas.map((replica) => replica.process.stop(30_000)));
    });
    // Served once the CA is injected and a replica answers: a dry-run create is admitted. In the baseline namespace
    // the apiserver's MutatingAdmissionPolicy patches it too, which on a fresh cluster answers "Resource kind ... not
    // found" for a few seconds after the CRD is made (its type is not in the apiserver's schemas yet).
    await waitFor(
      "the webhooks and the defaults policy to answer",
      async () => {
        try {
          await client.create(instance(apps, "probe", {}), { dryRun: true });
          await client.create(instance(baseline, "probe", {}), { dryRun: true });
          return true;
        } catch (error) {
          if (
            /failed calling webhook|There can be a delay between when CustomResourceDefinitions/.test(String(error))
          ) {
            return undefined;
          }
          throw error;
        }
      },
      { timeoutMs: minutes(2), intervalMs: 500 },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${replicas.map((replica) => replica.process.tail(30)).join("\n")}`);
    });
  });

  after(async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
  });

  it("injects its CA into both configurations", async () => {
    for (const configurationKind of ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]) {
      const live = await client.get<KubeObject & { webhooks: { clientConfig: { caBundle?: string } }[] }>(
        "admissionregistration.k8s.io/v1",
        configurationKind,
        name,
      );
      const bundle = Buffer.from(live.webhooks[0]?.clientConfig.caBundle ?? "", "base64").toString();
      assert.match(bundle, /-----BEGIN CERTIFICATE-----/, configurationKind);
    }
  });

  it("refuses each rule at server-side apply and dry-run, naming the field, the rule and the limit", async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["registry", { image: "ghcr.io/evil/miner:1" }, /spec\.image.*docker\.io\/library/s],
      ["replicas", { replicas: 4 }, /spec\.replicas.*3/s],
      ["storage", { storage: "5Gi" }, /spec\.storage.*2Gi/s],
      ["class", { storage: "1Gi", storageClassName: "no-such-class" }, /no-such-class/],
      ["expansion", { storage: "1Gi", storageClassName: fixedClass }, new RegExp(`${fixedClass}.*expan`, "s")],
      ["chart", { chart: { configMap: "no-such-chart" } }, /no-such-chart/],
      ["source", { chart: { oci: "oci://ghcr.io/evil/charts/x", version: "1.0.0" } }, /oci:\/\/ghcr\.io\/evil/],
      // Measured by the webhook: CEL cannot (the default --render-values).
      [
        "values",
        { values: { blob: "x".repeat(200 * 1024 - 11) } },
        /spec\.values: is 200 KiB as JSON.*128 KiB.*--render-values/s,
      ],
    ];
    // The rules that need only the instance are the apiserver's own (components/instance-policy.ts); the rest the
    // webhook's.
    const decidedInApiserver = new Set(["registry", "replicas", "storage"]);
    for (const [label, spec, expected] of cases) {
      const object = instance(apps, `bad-${label}`, spec);
      const applied = await refusal(() => client.apply(object, { fieldManager: "wh-test", force: true }));
      assert.match(
        applied,
        decidedInApiserver.has(label)
          ? new RegExp(`ValidatingAdmissionPolicy '${name}-instances' with binding '${name}-instances' denied request`)
          : /admission webhook "validate\.myappinstances\.example\.com" denied the request/,
        label,
      );
      assert.match(applied, expected, label);
      assert.match(await refusal(() => client.create(object, { dryRun: true })), expected, `${label} (dry-run)`);
    }
    // kubectl, as a user runs it
    const dir = mkdtempSync(path.join(os.tmpdir(), "wh-"));
    defer(async () => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "bad.yaml");
    writeFileSync(file, JSON.stringify(instance(apps, "bad-kubectl", { replicas: 9 })));
    await assert.rejects(kubectl("apply", "--server-side", "-f", file), /spec\.replicas.*3/s);
  });

  it("counts a volume claim kept past its instance against the namespace's storage budget", async () => {
    // GIVEN a 2Gi claim of the built-in template's, kept from an instance that is gone (the budget is 3Gi)
    const kept = "data-gone-0";
    await client.create({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: kept,
        namespace: baseline,
        labels: {
          [labelKeys.name]: appName,
          [labelKeys.instance]: instanceLabelValue("gone"),
          [labelKeys.managedBy]: managedBy,
        },
      },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "2Gi" } },
        storageClassName: fixedClass,
      },
    });
    defer(() =>
      client.delete("v1", "PersistentVolumeClaim", kept, baseline).then(
        () => undefined,
        () => undefined,
      ),
    );
    // WHEN an instance asks for 2Gi THEN the webhook refuses it, naming the kept claim
    const wanting = instance(baseline, "after-gone", { storage: "2Gi" });
    assert.match(
      await refusal(() => client.create(wanting, { dryRun: true })),
      /spec\.storage: namespace .* may use at most 3Gi.*1 volume claim \(2Gi: data-gone-0\) kept from deleted or scaled-down/s,
    );
    // AND once the claim is deleted the same create is admitted (within the 5 s a replica reuses its list)
    await client.delete("v1", "PersistentVolumeClaim", kept, baseline);
    await waitFor(
      "the create to be admitted once the kept claim is gone",
      async () => {
        try {
          await client.create(wanting, { dryRun: true });
          return true;
        } catch (error) {
          if (/kept from deleted/.test(String(error))) return undefined;
          throw error;
        }
      },
      { timeoutMs: minutes(1), intervalMs: 500 },
    );
  });

  it("holds a namespace to the chart sources its annotation narrows the platform's list to", async () => {
    const chart = (team: string) => ({ chart: { oci: `oci://registry.example/charts/${team}/web`, version: "1.0.0" } });
    // GIVEN apps allows only team-a's part of the platform's registry path
    // WHEN an instance there names team-b's chart THEN apply and dry-run are refused, naming the annotation
    const object = instance(apps, "other-team-chart", chart("team-b"));
    for (const write of [
      () => client.apply(object, { fieldManager: "wh-test", force: true }),
      () => client.create(object, { dryRun: true }),
    ]) {
      const refused = await refusal(write);
      assert.match(refused, /admission webhook "validate\.myappinstances\.example\.com" denied the request/);
      assert.match(
        refused,
        new RegExp(`spec\\.chart\\.oci: .* in namespace ${apps}: its annotation myapp\\.example\\.com/chart-sources`),
      );
    }
    // AND team-a's chart passes there, team-b's where no annotation narrows (dry-run: nothing is fetched)
    await client.create(instance(apps, "own-team-chart", chart("team-a")), { dryRun: true });
    await client.create(instance(baseline, "other-team-chart", chart("team-b")), { dryRun: true });
  });

  it("the apiserver's policy and the operator's webhook read image references alike", async () => {
    const allowed = parseAllowedRegistries(settings.policy?.allowedRegistries.join(","));
    const images = [
      "nginx",
      "nginx:1.27",
      "library/nginx:1.27",
      "docker.io/nginx",
      "Index.Docker.io/library/nginx@sha256:" + "a".repeat(64),
      "docker.io/library/nginx:1.27@sha256:" + "b".repeat(64),
      "acme/nginx",
      "registry.example/apps/web:2",
      "Registry.Example/apps/team/web",
      "registry.example/apps-evil/web",
      "registry.example/appsweb:1",
      "registry.example:5000/apps/web",
      "ghcr.io/library/nginx",
      "localhost/library/nginx",
      "evil.io/docker.io/library/nginx",
      "index.docker.io/nginx:1",
      "library/nginx/sub:1",
      "docker.io/library/nginx/sub",
      "registry.example/apps",
      "registry.example:443/apps/web",
      "REGISTRY.example/apps@sha256:" + "c".repeat(64),
    ];
    for (const image of images) {
      const expected = registryAllowing(allowed, image) !== undefined;
      const verdict = await client.create(instance(apps, "image-probe", { image }), { dryRun: true }).then(
        () => true,
        (error: unknown) => {
          assert.match(String(error), /is not from a registry the platform allows/, image);
          return false;
        },
      );
      assert.equal(verdict, expected, `${image}: the apiserver's policy ${verdict ? "admits" : "refuses"} it`);
    }
  });

  it("holds each namespace to its budget, and kubectl scale to the maximum", async () => {
    // One replica judges every write: each remembers only the writes it admitted until its cache shows them
    // (operator/admission/admitted-writes.ts), so another replica may judge a create before it has seen the last.
    // The apiserver keeps its connections to a replica open, so the balancer leaves a replica out only once stopped.
    const [, second] = replicas;
    assert.ok(second);
    await second.process.stop(30_000);
    try {
      for (const n of [1, 2, 3]) await judged(() => client.create(instance(apps, `fit-${n}`, { replicas: 2 })));
      // 6 replicas in use: a fourth instance fits the instance count, not the replicas.
      assert.match(await refusal(() => client.create(instance(apps, "fit-4", { replicas: 1 }))), /replicas.*6/s);
      // A change that does not grow is always admitted, whatever the budget.
      await judged(() =>
        client.mergePatch(apiVersion, kind, "fit-1", apps, { spec: { replicas: 1, image: "nginx:1.28" } }),
      );
      await judged(() => client.create(instance(apps, "fit-4", { replicas: 1 })));
      assert.match(await refusal(() => client.create(instance(apps, "fit-5", { replicas: 1 }))), /at most 4/);
      await assert.rejects(kubectl("scale", "myappinstance/fit-4", "-n", apps, "--replicas=5"), /spec\.replicas.*3/s);
      // A tenant's HorizontalPodAutoscaler scales through the same subresource as kube-system's HPA controller,
      // whose other writes admission leaves alone: held to the maximum (the policy) and the budget (the webhook).
      // The controller's own request: a PUT of the Scale under its identity (it may not read the instance itself).
      const dir = mkdtempSync(path.join(os.tmpdir(), "wh-scale-"));
      const scale = async (replicas: number) => {
        const file = path.join(dir, `scale-${replicas}.json`);
        const body = { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "fit-4", namespace: apps } };
        writeFileSync(file, JSON.stringify({ ...body, spec: { replicas } }));
        const uri = `/apis/example.com/v1/namespaces/${apps}/myappinstances/fit-4/scale`;
        return kubectl(
          "replace",
          "--raw",
          uri,
          "-f",
          file,
          "--as=system:serviceaccount:kube-system:horizontal-pod-autoscaler",
        );
      };
      await assert.rejects(scale(5), /spec\.replicas.*3/s);
      await assert.rejects(scale(2), /replicas.*6/s);
      assert.equal((await getInstance(client, apps, "fit-4")).spec.replicas, 1);
      // AND a scale-down is never held (it would not wait on a webhook either)
      await scale(0);
      assert.equal((await getInstance(client, apps, "fit-4")).spec.replicas ?? 0, 0);
      rmSync(dir, { recursive: true, force: true });
      // The namespace's label replaces the flag's budget, raised a moment before and at once: a write the budget
      // would refuse is judged again on the Namespace read afresh (the replica's reading of it is 5 s old at most).
      await client.mergePatch("v1", "Namespace", apps, undefined, {
        metadata: { labels: { "myapp.example.com/max-instances": "5", "myapp.example.com/max-replicas": "7" } },
      });
      await judged(() => client.create(instance(apps, "fit-5", { replicas: 1 })));
      assert.match(
        await refusal(() => client.create(instance(apps, "fit-6", { replicas: 1 }))),
        /at most 5 instances \(the namespace's label myapp\.example\.com\/max-instances/,
      );
    } finally {
      second.process = await launchReplica(second.port);
    }
  });

  it("defaults podSecurityLevel from the namespace's Pod Security label, and nothing else", async () => {
    // By default (`webhooks.defaults: "auto"`) on this Kubernetes 1.36 cluster: the policy, then the webhook.
    assert.deepEqual(namespaceDefaultsBy, ["policy", "webhook"]);
    const callsBefore = await mutateCalls();
    await client.create(instance(baseline, "root-app", {}));
    const stored = await getInstance(client, baseline, "root-app");
    assert.equal(stored.spec.podSecurityLevel, "Baseline");
    const chosen = await client.create<Instance>(
      instance(baseline, "chosen", { podSecurityLevel: "Restricted" }) as Instance,
    );
    assert.equal(chosen.spec.podSecurityLevel, "Restricted", "what the tenant wrote stands");
    assert.equal(await mutateCalls(), callsBefore, "the policy gave the default: no call to the operator");
  });

  it("still gives the default by the webhook where the policy is missing", async () => {
    // As on a cluster where the policy was not installed: the webhook behind it answers the same.
    await client.delete("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding", `${name}-defaults`);
    const callsBefore = await mutateCalls();
    await waitFor("the webhook to give the default", async () => {
      const admitted = await client.create<Instance>(instance(baseline, "fallback", {}) as Instance, { dryRun: true });
      assert.equal(admitted.spec.podSecurityLevel, "Baseline");
      return (await mutateCalls()) > callsBefore || undefined;
    });
  });

  it("fails pulumi preview with the admission's message naming the field, before anything is created", async (t) => {
    const provider = JSON.stringify(path.join(repoRoot, "provider/index.ts"));
    // The one instance the capped namespace allows, made first: both replicas' caches show it long before its
    // preview, after the others.
    await judged(() => client.create(instance(capped, "first", {})));
    // The engine stops a preview at the first resource whose check fails: one program per rule.
    const cases: [string, string, string, RegExp][] = [
      [
        "greedy",
        baseline,
        `image: "nginx:1.27", replicas: 7`,
        /replicas.*is more than the platform allows per instance \(at most 3/,
      ],
      [
        "foreign",
        baseline,
        `image: "ghcr.io/evil/miner:1"`,
        /image.*is not from a registry the platform allows \(only docker\.io\/library/,
      ],
      [
        "big",
        baseline,
        `image: "nginx:1.27", storage: "5Gi"`,
        /storage.*is more than the platform allows per volume \(at most 2Gi/,
      ],
      ["one-too-many", capped, `image: "nginx:1.27"`, new RegExp(`namespace ${capped} may have at most 1 instances`)],
    ];
    for (const [name, namespace, spec, expected] of cases) {
      const program = `import { MyAppInstance } from ${provider};
new MyAppInstance(${JSON.stringify(name)}, { namespace: ${JSON.stringify(namespace)}, ${spec} });
`;
      const project = await pulumiProject(t, `webhook-${name}`, program);
      const preview = await project.pulumi("preview", "--non-interactive", "--stack", project.stackName);
      assert.equal(preview.ok, false, preview.output);
      assert.match(preview.output, expected, name);
      await assert.rejects(getInstance(client, namespace, name), /not found/i, `${name} was not created`);
    }
  });

  it("shows in pulumi preview what the mutating webhook will set", async (t) => {
    const provider = JSON.stringify(path.join(repoRoot, "provider/index.ts"));
    const program = `import { MyAppInstance } from ${provider};
new MyAppInstance("rooted", { namespace: ${JSON.stringify(baseline)}, image: "nginx:1.27" });
`;
    const project = await pulumiProject(t, "webhook-default", program);
    const output = await project.must("preview", "--non-interactive", "--stack", project.stackName);
    assert.match(output, /the cluster's admission sets podSecurityLevel: "Baseline" for rooted/);
  });

  it("keeps admitting while one replica restarts", async () => {
    const [first] = replicas;
    assert.ok(first);
    await client.create(instance(baseline, "steady", {}));
    let writes = 0;
    const failures: string[] = [];
    let restarting = true;
    const restart = (async () => {
      await first.process.stop(30_000);
      first.process = await launchReplica(first.port);
      restarting = false;
    })();
    for (let tag = 0; restarting || tag < 20; tag++) {
      try {
        await client.mergePatch(apiVersion, kind, "steady", baseline, { spec: { image: `nginx:1.${tag % 50}` } });
        writes += 1;
      } catch (error) {
        failures.push(String(error));
      }
    }
    await restart;
    const served = JSON.stringify([...balancer.served]);
    assert.deepEqual(failures, [], `${writes} writes admitted; connections per replica port: ${served}`);
    assert.ok(writes >= 20);
    // Both replicas answered at some point: the apiserver moved to the other one while the first was away.
    assert.equal(balancer.served.size, 2, served);
  });

  it("with every replica down: no create or spec change, but labels and finalizers still go through", async () => {
    await Promise.all(replicas.map((replica) => replica.process.stop(30_000)));
    assert.match(await refusal(() => client.create(instance(apps, "late", {}))), /failed calling webhook/);
    assert.match(
      await refusal(() => client.mergePatch(apiVersion, kind, "steady", baseline, { spec: { replicas: 2 } })),
      /failed calling webhook/,
    );
    await client.mergePatch(apiVersion, kind, "steady", baseline, { metadata: { labels: { team: "x" } } });
    await client.mergePatch(apiVersion, kind, "steady", baseline, { metadata: { finalizers: null } });
    // ...and admitting again as soon as one replica is back
    const [first] = replicas;
    assert.ok(first);
    first.process = await launchReplica(first.port);
    await waitFor("a replica to answer again", async () => {
      try {
        await client.create(instance(baseline, "late", {}), { dryRun: true });
        return true;
      } catch (error) {
        if (/failed calling webhook/.test(String(error))) return undefined;
        throw error;
      }
    });
  });
});

/** The component in its own stack, run by the toolchain's pulumi; destroyed after the suite. */
async function operatorStack(args: MyAppOperatorArgs): Promise<Stack> {
  const kubeconfigPath = process.env.KUBECONFIG;
  if (!kubeconfigPath)
    throw new Error("KUBECONFIG is not set: run with `npm test -- test/e2e/admission-webhooks.test.ts`");
  const kubeconfig = readFileSync(kubeconfigPath, "utf8");
  const program = async () => {
    const provider = new k8s.Provider("local", { kubeconfig });
    const platform = new MyAppOperator(name, args, { provider });
    return { namespace: platform.namespace, namespaceDefaultsBy: platform.namespaceDefaultsBy };
  };
  return inlineStack({ stackName: name, projectName: "webhooks-e2e", program, kubeconfigPath, defer });
}
