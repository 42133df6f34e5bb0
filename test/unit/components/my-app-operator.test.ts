/**
 * The component's wiring under pulumi.runtime.setMocks: which resources it registers, with which parents, names,
 * inputs and options. No engine, no cluster.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { defaultChartKinds } from "../../../api/index.ts";
import { chartKindRules } from "../../../components/chart-kinds.ts";
import { before, beforeEach, describe, it } from "node:test";
import * as pulumi from "@pulumi/pulumi";
import type { MyAppOperatorArgs } from "../../../components/settings.ts";
import type { AdmissionApiReader, NodeReader } from "../../../components/my-app-operator.ts";
import type { CrdRevisionReader } from "../../../components/crd-revision-guard.ts";
import { crdRevision, crdRevisionAnnotation } from "../../../api/index.ts";
import type { NodeSummary } from "../../../components/node-runtime.ts";
import { testImage } from "./settings-fixture.ts";

interface Registered {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, unknown>;
}

const execFileAsync = promisify(execFile);

/** Every resource the mock engine saw, and every resource's options as the SDK prepared them. */
let registered: Registered[] = [];
let options: Map<string, pulumi.CustomResourceOptions> = new Map();

pulumi.runtime.setMocks(
  {
    newResource: (args) => {
      registered.push({ type: args.type, name: args.name, inputs: args.inputs as Record<string, unknown> });
      return { id: `${args.name}-id`, state: args.inputs as Record<string, unknown> };
    },
    call: (args) => args.inputs as Record<string, unknown>,
  },
  "myapp",
  "unit",
  false,
);

// Loaded after setMocks, so no resource can be created against a real engine.
const { MyAppOperator, myAppOperatorType } = await import("../../../components/my-app-operator.ts");
const { clusterScopedRules, clusterWideRules, leaderElectionRules, secureMetricsRules, watchedNamespaceRules } =
  await import("../../../components/rbac-rules.ts");
const { policyRules } = await import("../../../components/rbac-objects.ts");
const { webhookClusterRules } = await import("../../../components/webhooks.ts");

function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

/** A node of a cluster that runs containers, and one of kwok's fake nodes (as `kwokctl scale node` makes them). */
const realNode: NodeSummary = { metadata: { name: "worker-1" }, status: { nodeInfo: { kubeletVersion: "v1.36.0" } } };
const fakeNode = (name: string): NodeSummary => ({
  metadata: { name, annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" } },
  status: { nodeInfo: { kubeletVersion: "fake" } },
});
/** A node reader that answers `nodes`, recording that it was asked. */
let nodeReads = 0;
const nodesOf =
  (...nodes: NodeSummary[]): NodeReader =>
  async () => {
    nodeReads += 1;
    return { nodes };
  };

/** An admission API reader that answers `served` (or that the cluster cannot be read), counting the questions. */
let admissionApiReads = 0;
const policyServed =
  (served: boolean | "unreadable"): AdmissionApiReader =>
  async () => {
    admissionApiReads += 1;
    return served === "unreadable" ? { unavailable: "connect ECONNREFUSED 127.0.0.1:6443" } : { served };
  };

/** A reader of the live CRD's revision annotation that answers `revision` (undefined: none), counting the questions. */
let crdRevisionReads = 0;
const liveCrdAt =
  (revision: string | undefined): CrdRevisionReader =>
  async () => {
    crdRevisionReads += 1;
    return { revision };
  };

/**
 * Builds the component (with an image unless the test gives its own arguments for one; nodes that run containers
 * unless told otherwise; a live CRD at this package's revision), waits until every child is registered, and
 * returns it.
 */
async function install(
  name: string,
  args: MyAppOperatorArgs = {},
  readNodes: NodeReader = nodesOf(realNode),
  readAdmissionApis: AdmissionApiReader = policyServed(false),
  readCrdRevision: CrdRevisionReader = liveCrdAt(String(crdRevision)),
) {
  const component = new MyAppOperator(
    name,
    // An external operator has no pods, so no image.
    { ...(args.operatorPlacement === "external" ? {} : { image: testImage }), ...args },
    {
      readNodes,
      readAdmissionApis,
      readCrdRevision,
      // Legacy transformations run in the SDK (unlike `transforms`), so they show each child's options under mocks.
      transformations: [
        (child) => {
          options.set(child.name, child.opts as pulumi.CustomResourceOptions);
          return undefined;
        },
      ],
    },
  );
  const children = allChildren(component.resources);
  await Promise.all(children.map((child) => valueOf(child.urn)));
  return { component, children };
}

function allChildren(resources: InstanceType<typeof MyAppOperator>["resources"]): pulumi.CustomResource[] {
  return Object.values(resources).flatMap((value) => (Array.isArray(value) ? value : value ? [value] : []));
}

function inputsOf(name: string): Record<string, unknown> {
  const found = registered.find((resource) => resource.name === name);
  assert.ok(found, `resource ${name} was registered (have: ${registered.map((r) => r.name).join(", ")})`);
  return found.inputs;
}

describe("MyAppOperator", () => {
  before(() => {
    assert.equal(myAppOperatorType, "myapp:index:MyAppOperator");
  });
  beforeEach(() => {
    registered = [];
    options = new Map();
    nodeReads = 0;
    admissionApiReads = 0;
    crdRevisionReads = 0;
  });

  it("installs CRD, namespace, ServiceAccount, RBAC, Deployment, Services and webhooks, all parented to it", async () => {
    // GIVEN the defaults WHEN installed
    const { component, children } = await install("op");
    // THEN the resource graph is exactly this, with deterministic names
    assert.deepEqual(registered.map((r) => `${r.type} ${r.name}`).sort(), [
      "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration op-mutating-webhook",
      "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy op-admission-policy",
      "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding op-admission-policy-binding",
      "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration op-validating-webhook",
      "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition op-crd",
      "kubernetes:apps/v1:Deployment op-deployment",
      "kubernetes:core/v1:Namespace op-namespace",
      "kubernetes:core/v1:Service op-metrics-service",
      "kubernetes:core/v1:Service op-webhook-service",
      "kubernetes:core/v1:ServiceAccount op-service-account",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole op-cluster-role",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole op-metrics-reader",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole op-tenant-edit",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole op-tenant-view",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding op-cluster-role-binding",
      "kubernetes:rbac.authorization.k8s.io/v1:Role op-role-webhook-cert",
      "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding op-role-binding-webhook-cert",
      "myapp:index:MyAppOperator op",
    ]);
    // AND the webhooks come after the operator's pods (until one answers, creating an instance fails)
    const webhookDependencies = options.get("op-validating-webhook")?.dependsOn as unknown[];
    assert.ok(webhookDependencies.includes(component.resources.deployment));
    // AND every child's URN records the component as its parent
    for (const child of children) {
      const urn = await valueOf(child.urn);
      assert.match(urn, /::myapp:index:MyAppOperator\$kubernetes:/, urn);
    }
    const childOptions = [...options].filter(([name]) => name !== "op");
    assert.equal(childOptions.length, children.length);
    for (const [name, opts] of childOptions) assert.ok(opts.parent instanceof MyAppOperator, `${name}'s parent`);
  });

  it("grants exactly the shared RBAC definition (cluster-wide)", async () => {
    await install("op");
    assert.deepEqual(
      inputsOf("op-cluster-role").rules,
      policyRules([
        ...clusterWideRules(),
        ...chartKindRules(defaultChartKinds),
        ...secureMetricsRules,
        ...webhookClusterRules("op", [], "webhook"),
      ]),
    );
    // The operator's /metrics asks for `get /metrics`: a ClusterRole that grants it, for the scraper to be bound to.
    assert.deepEqual(inputsOf("op-metrics-reader").rules, [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }]);
    assert.deepEqual(inputsOf("op-cluster-role-binding").subjects, [
      { kind: "ServiceAccount", name: "op", namespace: "myapp-system" },
    ]);
  });

  it("namespaced with 2 replicas: Roles per namespace, a small ClusterRole, leader election and a PDB", async () => {
    // GIVEN two watched namespaces and two replicas WHEN installed
    const { component } = await install("op", { watchNamespaces: ["team-a", "team-b"], replicas: 2 });
    // THEN
    assert.deepEqual(
      inputsOf("op-cluster-role").rules,
      policyRules([
        ...clusterScopedRules,
        ...secureMetricsRules,
        ...webhookClusterRules("op", ["team-a", "team-b"], "webhook"),
      ]),
    );
    for (const ns of ["team-a", "team-b"]) {
      const role = inputsOf(`op-role-watch-${ns}`);
      assert.deepEqual(role.rules, policyRules([...watchedNamespaceRules, ...chartKindRules(defaultChartKinds)]));
      assert.equal((role.metadata as { namespace: string }).namespace, ns);
      assert.equal((inputsOf(`op-role-binding-watch-${ns}`).metadata as { namespace: string }).namespace, ns);
    }
    assert.deepEqual(inputsOf("op-role-leader-election").rules, policyRules(leaderElectionRules("op-leader")));
    assert.ok(registered.some((r) => r.type === "kubernetes:policy/v1:PodDisruptionBudget"));
    const args = (inputsOf("op-deployment") as { spec: { template: { spec: { containers: { args: string[] }[] } } } })
      .spec.template.spec.containers[0]?.args;
    assert.ok(args?.includes("--leader-elect"));
    assert.ok(args?.includes("--namespaces=team-a,team-b"));
    assert.equal(component.resources.roles.length, 4);
  });

  it("external placement: no Deployment, Service or PDB, and no metrics endpoint", async () => {
    const { component } = await install("op", { operatorPlacement: "external" });
    const types = registered.map((r) => r.type);
    for (const absent of ["Deployment", "Service", "PodDisruptionBudget"]) {
      assert.ok(!types.some((type) => type.endsWith(`:${absent}`)), absent);
    }
    assert.ok(types.includes("kubernetes:core/v1:ServiceAccount"));
    assert.equal(await valueOf(component.metricsEndpoint), undefined);
  });

  it("external placement: says what the operator process must be started with, and only then", async () => {
    const { component } = await install("shop", {
      namespace: "shop-platform",
      operatorPlacement: "external",
      watchNamespaces: ["shop"],
      webhooks: { url: "https://127.0.0.1:9443" },
      policy: { maxReplicas: 5 },
    });
    const flags = await valueOf(component.externalOperatorFlags);
    assert.deepEqual(flags?.slice(0, 4), [
      "--namespaces=shop",
      "--leader-elect",
      "--leader-election-namespace=shop-platform",
      "--leader-election-id=shop-leader",
    ]);
    // The Lease is the one its Role grants; the webhook flags match the configurations pointed at the URL.
    assert.deepEqual(inputsOf("shop-role-leader-election").rules, policyRules(leaderElectionRules("shop-leader")));
    for (const expected of [
      "--webhook-bind-address=127.0.0.1:9443",
      "--webhook-configuration=shop",
      "--webhook-hosts=127.0.0.1",
      "--max-replicas=5",
    ])
      assert.ok(flags?.includes(expected), `${expected} in ${flags?.join(" ")}`);
    // Where the process listens is its own choice.
    assert.ok(!flags?.some((flag) => /^--(metrics|health-probe)-bind-address|^--metrics-secure/.test(flag)));
    const inCluster = await install("op", { image: testImage });
    assert.equal(await valueOf(inCluster.component.externalOperatorFlags), undefined);
  });

  it("retains the CRD on destroy unless told otherwise, waits for Established, and owns its fields", async () => {
    await install("kept");
    assert.equal(options.get("kept-crd")?.retainOnDelete, true);
    const annotations = (inputsOf("kept-crd").metadata as { annotations: Record<string, string> }).annotations;
    assert.equal(annotations["pulumi.com/waitFor"], "condition=Established");
    assert.equal(annotations["pulumi.com/patchForce"], "true", "the install owns the CRD, whoever applied it first");
    await install("dropped", { deleteCrdOnDestroy: true });
    assert.equal(options.get("dropped-crd")?.retainOnDelete, false);
  });

  it("applies its CRD, with its revision, over none, an older build's without one, a lower or the same", async () => {
    const crdOf = (name: string) => inputsOf(`${name}-crd`).metadata as { annotations: Record<string, string> };
    for (const [name, live] of [
      ["none", undefined],
      ["older", String(crdRevision - 1)],
      ["same", String(crdRevision)],
    ] as const) {
      await install(name, { operatorPlacement: "external" }, undefined, undefined, liveCrdAt(live));
      assert.equal(crdOf(name).annotations[crdRevisionAnnotation], String(crdRevision), name);
    }
    assert.equal(crdRevisionReads, 3, "the live CRD is read once per install");
  });

  it("reads the live CRD's revision before the CRD is registered, and only then registers it", async () => {
    // GIVEN a read of the live CRD that has not answered yet
    let answer: (revision: string | undefined) => void = () => undefined;
    const answered = new Promise<string | undefined>((resolve) => (answer = resolve));
    const component = new MyAppOperator(
      "waiting",
      { operatorPlacement: "external" },
      { readCrdRevision: async () => ({ revision: await answered }), readAdmissionApis: false },
    );
    await valueOf(component.resources.serviceAccount.urn);
    // THEN the rest of the platform registers, the CRD does not
    assert.ok(!registered.some((r) => r.name === "waiting-crd"), "the CRD waits for the check");
    // WHEN it answers with this package's revision THEN the CRD registers
    answer(String(crdRevision));
    await valueOf(component.resources.crd.urn);
    assert.ok(registered.some((r) => r.name === "waiting-crd"));
  });

  it("refuses to put its CRD back over a newer revision, naming both and what to do", async () => {
    // GIVEN a cluster whose CRD a platform on a newer build applied, in a child process
    // (fixtures/crd-downgrade-refusal.ts: the refusal's rejections must not land on this process's tests)
    const { stdout } = await execFileAsync(process.execPath, [
      fileURLToPath(new URL("./fixtures/crd-downgrade-refusal.ts", import.meta.url)),
    ]);
    const { errors, types } = JSON.parse(stdout) as { errors: string[]; types: string[] };
    // THEN one error, the component's (under mocks the SDK prefixes the output it was serializing), says so
    assert.equal(errors.length, 1, errors.join("\n"));
    const newer = crdRevision + 1;
    assert.match(
      errors[0]!,
      new RegExp(
        `MyAppOperator "op": the cluster's CRD myappinstances\\.example\\.com is at schema revision ${newer} ` +
          `\\(annotation myapp\\.example\\.com/schema-revision\\), newer than this myapp-platform package's ` +
          `revision ${crdRevision}`,
      ),
    );
    assert.match(errors[0]!, /Upgrade this project's myapp-platform to that build/);
    assert.match(errors[0]!, /npm install \.\/myapp-platform-VERSION\.tgz/);
    assert.match(errors[0]!, /A shared CRD is never downgraded/);
    // AND the CRD never reaches the engine, while the rest of the install does
    assert.ok(!types.includes("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"), types.join(", "));
    assert.ok(types.includes("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"), types.join(", "));
  });

  it("asks nothing about the live CRD when told not to, or when its own manifest has no revision", async () => {
    const component = new MyAppOperator(
      "skipped",
      { operatorPlacement: "external" },
      { readCrdRevision: false, readAdmissionApis: false },
    );
    await valueOf(component.resources.crd.urn);
    // A fork's manifest without the annotation: nothing to compare, applied as given.
    const { loadCrdManifest } = await import("../../../components/crd.ts");
    const manifest = loadCrdManifest();
    const fork = new MyAppOperator(
      "fork",
      { operatorPlacement: "external" },
      {
        crdManifest: { ...manifest, metadata: { name: manifest.metadata?.name } },
        readCrdRevision: liveCrdAt("999"),
        readAdmissionApis: false,
      },
    );
    await valueOf(fork.resources.crd.urn);
    assert.equal(crdRevisionReads, 0);
  });

  it("starts the operator only after its CRD and permissions exist", async () => {
    const { component } = await install("op", { watchNamespaces: ["team-a"], replicas: 2 });
    // The last one is the node check (an Output of the CRD; see the kwok tests below).
    const dependsOn = options.get("op-deployment")?.dependsOn as pulumi.Input<pulumi.Resource>[];
    assert.ok(pulumi.Output.isInstance(dependsOn.at(-1)), "the Deployment waits for the node check");
    const r = component.resources;
    for (const needed of [r.crd, r.serviceAccount, r.clusterRoleBinding, ...r.roleBindings]) {
      assert.ok(dependsOn.includes(needed), "the Deployment depends on each of them");
    }
  });

  it("uses an existing namespace when asked, creating nothing for it", async () => {
    const { component } = await install("op", { createNamespace: false, namespace: "existing" });
    assert.ok(!registered.some((r) => r.type === "kubernetes:core/v1:Namespace"));
    assert.equal(await valueOf(component.namespace), "existing");
  });

  it("outputs names and the metrics URL, none of them secret; the instances' connection is a secret", async () => {
    const { component } = await install("op");
    assert.equal(await pulumi.isSecret(component.clusterConnection), true);
    const outputs = {
      namespace: component.namespace,
      serviceAccountName: component.serviceAccountName,
      crdName: component.crdName,
      metricsEndpoint: component.metricsEndpoint,
      metricsReaderClusterRole: component.metricsReaderClusterRole,
      externalOperatorFlags: component.externalOperatorFlags,
      namespaceDefaultsBy: component.namespaceDefaultsBy,
    };
    assert.deepEqual(
      Object.keys(component)
        .filter((key) => !["urn", "clusterConnection"].includes(key))
        .filter((key) => pulumi.Output.isInstance((component as never)[key]))
        .sort(),
      Object.keys(outputs).sort(),
      "no other Output properties",
    );
    for (const output of Object.values<pulumi.Output<unknown>>(outputs))
      assert.equal(await pulumi.isSecret(output), false);
    assert.deepEqual(
      {
        namespace: await valueOf(outputs.namespace),
        serviceAccountName: await valueOf(outputs.serviceAccountName),
        crdName: await valueOf(outputs.crdName),
        metricsEndpoint: await valueOf(outputs.metricsEndpoint),
        metricsReaderClusterRole: await valueOf(outputs.metricsReaderClusterRole),
        externalOperatorFlags: await valueOf(outputs.externalOperatorFlags),
        namespaceDefaultsBy: await valueOf(outputs.namespaceDefaultsBy),
      },
      {
        namespace: "myapp-system",
        serviceAccountName: "op",
        crdName: "myappinstances.example.com",
        metricsEndpoint: "https://op-metrics.myapp-system.svc:8080/metrics",
        metricsReaderClusterRole: "op-metrics-reader",
        externalOperatorFlags: undefined,
        namespaceDefaultsBy: ["webhook"],
      },
    );
    // Nor does any child carry credentials: no Secret, no token.
    assert.ok(!registered.some((r) => r.type.endsWith(":Secret")));
    assert.ok(!JSON.stringify(registered).match(/"token"|kubeconfig|password/i));
  });

  it("by default puts the defaults policy before the webhook where the cluster serves it, the webhook alone elsewhere", async () => {
    const policyKind = "kubernetes:admissionregistration.k8s.io/v1:MutatingAdmissionPolicy";
    const bindingKind = "kubernetes:admissionregistration.k8s.io/v1:MutatingAdmissionPolicyBinding";
    const webhookKind = "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration";
    const cases = [
      { served: true, givers: ["policy", "webhook"] },
      { served: false, givers: ["webhook"] },
      { served: "unreadable", givers: ["webhook"] },
    ] as const;
    for (const { served, givers } of cases) {
      registered = [];
      admissionApiReads = 0;
      const { component } = await install("op", {}, nodesOf(realNode), policyServed(served));
      assert.deepEqual(await valueOf(component.namespaceDefaultsBy), givers, `served: ${served}`);
      assert.equal(admissionApiReads, 1);
      const types = registered.map((r) => r.type);
      assert.equal(types.includes(policyKind), served === true, `served: ${served}: ${types.join(" ")}`);
      assert.equal(types.includes(bindingKind), served === true);
      assert.ok(types.includes(webhookKind), "the webhook stays: it gives the default wherever the policy does not");
      if (served === true)
        assert.equal(
          (inputsOf("op-defaults-policy-binding")["spec"] as { policyName: string }).policyName,
          "op-defaults",
        );
    }
  });

  it("asks the cluster nothing when the platform chose who gives the defaults, or turned the webhooks off", async () => {
    for (const [args, givers] of [
      [{ webhooks: { defaults: "webhook" } }, ["webhook"]],
      [{ webhooks: { defaults: "policy" } }, ["policy"]],
      [{ webhooks: { enabled: false } }, []],
    ] as const) {
      admissionApiReads = 0;
      const { component } = await install("op", args, nodesOf(realNode), policyServed(true));
      assert.deepEqual(await valueOf(component.namespaceDefaultsBy), givers, JSON.stringify(args));
      assert.equal(admissionApiReads, 0, JSON.stringify(args));
    }
  });

  it("requires an image for an in-cluster operator: a ResourceError naming it and how to build and push one", () => {
    assert.throws(
      () => new MyAppOperator("op", {}, { readNodes: false }),
      (error: unknown) =>
        pulumi.ResourceError.isInstance(error) &&
        /MyAppOperator "op" has invalid arguments:\n {2}image: is required for operatorPlacement "in-cluster"/.test(
          error.message,
        ) &&
        error.message.includes("npm run image -- --push REGISTRY/NAME:TAG"),
    );
  });

  it("gives pulumi's Deployment await a deadline of minutes, not its default ten", async () => {
    await install("op");
    assert.deepEqual(options.get("op-deployment")?.customTimeouts, { create: "5m", update: "5m" });
    const metadata = inputsOf("op-deployment")["metadata"] as { annotations?: Record<string, string> };
    assert.equal(metadata.annotations?.["pulumi.com/skipAwait"], undefined, "pulumi waits for the pods");
  });

  it("refuses an in-cluster operator on a cluster of kwok fake nodes, naming the local recipe", async () => {
    // GIVEN a cluster whose every node is a kwok fake node (pods look Running there, nothing runs), in a child
    // process (fixtures/kwok-refusal.ts: the refusal's rejections must not land on this process's tests)
    const { stdout } = await execFileAsync(process.execPath, [
      fileURLToPath(new URL("./fixtures/kwok-refusal.ts", import.meta.url)),
    ]);
    const { errors, types } = JSON.parse(stdout) as { errors: string[]; types: string[] };
    // THEN one error, the component's, says why and what to do instead
    assert.equal(errors.length, 1, errors.join("\n"));
    assert.match(errors[0]!, /^MyAppOperator "op": operatorPlacement "in-cluster" cannot run on this cluster/);
    assert.match(errors[0]!, /all 3 of its nodes \(kwok-node-0, kwok-node-1, kwok-node-2\) are kwok fake nodes/);
    assert.match(errors[0]!, /operatorPlacement: "external"/);
    assert.match(errors[0]!, /npx --no-install myapp-operator/);
    // AND the Deployment never reaches the engine, while the rest of the install does
    assert.ok(types.includes("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"), types.join(", "));
    assert.ok(!types.includes("kubernetes:apps/v1:Deployment"), types.join(", "));
  });

  it("installs on a mix of real and fake nodes with a warning, and skips the check when told", async (t) => {
    const warnings: string[] = [];
    t.mock.method(pulumi.log, "warn", async (message: string) => void warnings.push(message));
    await install("op", {}, nodesOf(realNode, fakeNode("kwok-node-0")));
    assert.ok(registered.some((r) => r.type === "kubernetes:apps/v1:Deployment"));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /1 of the cluster's 2 nodes \(kwok-node-0\) are kwok fake nodes/);

    registered = [];
    nodeReads = 0;
    const component = new MyAppOperator(
      "unchecked",
      { image: testImage },
      { readNodes: false, readAdmissionApis: false, readCrdRevision: false },
    );
    await Promise.all(allChildren(component.resources).map((child) => valueOf(child.urn)));
    assert.ok(registered.some((r) => r.type === "kubernetes:apps/v1:Deployment"));
  });

  it("reads no nodes for an external operator (nothing of it runs in the cluster)", async () => {
    await install("op", { operatorPlacement: "external" }, nodesOf(fakeNode("kwok-node-0")));
    assert.equal(nodeReads, 0);
  });

  it("rejects invalid arguments with a ResourceError that names each field, printed as its message alone", () => {
    assert.throws(
      () => new MyAppOperator("op", { replicas: -1, watchNamespaces: ["Team_A"] }),
      (error: unknown) =>
        pulumi.ResourceError.isInstance(error) &&
        // Without it pulumi prints the whole error object, the component and its parent stack included.
        error.hideStack === true &&
        /replicas: -1 must be a whole number/.test(error.message) &&
        /watchNamespaces\[0\]: "Team_A" is not a namespace name/.test(error.message),
    );
  });
});
