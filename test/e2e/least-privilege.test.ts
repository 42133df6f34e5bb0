/**
 * The operator's reach, as `pulumi up` of MyAppOperator installs it, asked of the apiserver itself with the
 * ServiceAccount's token (SelfSubjectAccessReview): every verb the operator does not need is denied (Secrets,
 * `update` where it only patches, `watch` where it does not watch, other Leases, other namespaces in namespaced
 * mode), and in cluster-wide mode the admission policy keeps the token from creating a privileged Deployment in
 * kube-system although RBAC would allow a Deployment there. What it does need is proven by
 * test/integration/least-privilege.test.ts, which runs the operator with these rules.
 *
 * Needs the toolchain and the local cluster: `npm test -- test/e2e/least-privilege.test.ts`.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, it, type TestContext } from "node:test";
import * as k8s from "@pulumi/kubernetes";
import type { Stack } from "@pulumi/pulumi/automation/index.js";
import { group, plural } from "../../api/index.ts";
import { MyAppOperator } from "../../components/my-app-operator.ts";
import { operatorObjectNames } from "../../components/metadata.ts";
import { serviceAccountKubeconfig } from "../../components/service-account-kubeconfig.ts";
import { resolveSettings, type MyAppOperatorArgs } from "../../components/settings.ts";
import { AdmissionDeniedError, ForbiddenError, KubeClient, loadKubeConfig } from "../../kube/index.ts";
import { privilegedDeployment } from "../support/privileged-deployment.ts";
import { inlineStack } from "../support/pulumi.ts";
import { adminClient, waitFor, type Typed } from "../support/cluster.ts";

const client = adminClient();
const minutes = (n: number) => n * 60_000;

/** One question for SelfSubjectAccessReview: `verb group/resource[/subresource]`, in a namespace, of a name. */
interface Access {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}

type Review = Typed<{ status?: { allowed?: boolean; reason?: string } }>;

/** The verbs a token must not have, whatever the mode (namespace filled in by the caller). */
function neverGranted(namespace: string, leaseNamespace: string, leaseName: string): Access[] {
  const inNamespace = (verb: string, groupName: string, resource: string, subresource?: string): Access => ({
    verb,
    group: groupName,
    resource,
    namespace,
    ...(subresource ? { subresource } : {}),
  });
  return [
    // Charts may create and patch Secrets where the platform opts into them, never read them.
    ...["get", "list", "watch"].map((verb) => inNamespace(verb, "", "secrets")),
    ...["get", "create"].map((verb) => inNamespace(verb, "", "pods")),
    inNamespace("update", "apps", "deployments"),
    inNamespace("update", "apps", "statefulsets"),
    inNamespace("update", "", "services"),
    inNamespace("update", group, plural),
    inNamespace("create", group, plural),
    inNamespace("delete", group, plural),
    inNamespace("update", group, plural, "status"),
    inNamespace("get", "", "persistentvolumeclaims"),
    inNamespace("create", "", "persistentvolumeclaims"),
    inNamespace("update", "events.k8s.io", "events"),
    { verb: "watch", group: "storage.k8s.io", resource: "storageclasses" },
    {
      verb: "get",
      group: "coordination.k8s.io",
      resource: "leases",
      namespace: leaseNamespace,
      name: "kube-scheduler",
    },
    { verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: leaseNamespace, name: "x" },
    { verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: leaseNamespace, name: leaseName },
  ];
}

describe("the operator's ServiceAccount, as MyAppOperator installs it", { timeout: minutes(15) }, () => {
  it("namespaced: denied everything it does not use, and everything outside its namespaces", async (t) => {
    const suffix = randomBytes(3).toString("hex");
    const name = `e2e-lp-${suffix}`;
    const apps = await namespaceFor(t, `e2e-lp-apps-${suffix}`);
    const other = await namespaceFor(t, `e2e-lp-other-${suffix}`);
    const args: MyAppOperatorArgs = {
      namespace: `e2e-lp-${suffix}`,
      watchNamespaces: [apps],
      operatorPlacement: "external",
      // A kind beyond the default, opted into: granted in the watched namespace only.
      chartKinds: ["apps/v1/Deployment", "apps/v1/StatefulSet", "v1/Service", "v1/ConfigMap"],
    };
    const asOperator = await installAndConnect(t, name, args);
    const operatorNamespace = args.namespace ?? "";

    // What it needs here is granted (a spot check; the integration test proves the whole set), once the apiserver's
    // RBAC authorizer, which learns of new bindings from informers, has caught up with the up...
    for (const access of [
      { verb: "patch", group: "apps", resource: "deployments", namespace: apps },
      { verb: "patch", group, resource: plural, subresource: "status", namespace: apps },
      { verb: "patch", group: "", resource: "configmaps", namespace: apps },
      {
        verb: "update",
        group: "coordination.k8s.io",
        resource: "leases",
        namespace: operatorNamespace,
        name: `${name}-leader`,
      },
    ]) {
      await untilAllowed(asOperator, access);
    }
    // ...the lease only while elected: it may not read other Leases, and the grant above is its own one.
    const denied = [
      ...neverGranted(apps, operatorNamespace, "kube-scheduler"),
      // other namespaces: nothing at all
      ...["get", "list", "watch", "patch", "create", "delete"].flatMap((verb) => [
        { verb, group, resource: plural, namespace: other },
        { verb, group: "apps", resource: "deployments", namespace: other },
        { verb, group: "", resource: "services", namespace: other },
        { verb, group: "", resource: "persistentvolumeclaims", namespace: other },
        { verb, group: "", resource: "configmaps", namespace: other },
      ]),
      { verb: "create", group: "", resource: "secrets", namespace: apps },
      { verb: "list", group, resource: plural },
      { verb: "list", group: "apps", resource: "deployments" },
      { verb: "list", group: "", resource: "events", namespace: other },
      { verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: apps },
    ];
    await assertDenied(asOperator, denied);
  });

  it("cluster-wide: denied what it does not use, and the admission policy stops a privileged Deployment in kube-system", async (t) => {
    const suffix = randomBytes(3).toString("hex");
    const name = `e2e-lpc-${suffix}`;
    const args: MyAppOperatorArgs = { namespace: `e2e-lpc-${suffix}`, operatorPlacement: "external" };
    const asOperator = await installAndConnect(t, name, args);

    // RBAC alone would allow a Deployment in kube-system (cluster-wide mode needs Deployments everywhere)...
    await untilAllowed(asOperator, {
      verb: "create",
      group: "apps",
      resource: "deployments",
      namespace: "kube-system",
    });
    // ...but the admission policy denies the privileged one, as it denies anything not made for an instance (the
    // apiserver picks a new policy up within a moment, so the first dry-runs may still pass; only admission's 403
    // ends the wait).
    const refusal = await waitFor("the admission policy to deny the privileged Deployment in kube-system", () =>
      asOperator.create(privilegedDeployment("kube-system"), { dryRun: true }).then(
        () => undefined,
        (error: unknown) => (error instanceof AdmissionDeniedError ? error : Promise.reject(error)),
      ),
    );
    assert.match(refusal.message, /ValidatingAdmissionPolicy .* denied request: the myapp operator may only write/);
    // Even dressed up with the operator's labels and an owner, a privileged template is denied.
    const disguised = privilegedDeployment("kube-system", {
      labels: { "app.kubernetes.io/managed-by": "myapp-operator", "app.kubernetes.io/name": "myapp" },
      ownerReferences: [
        {
          apiVersion: "example.com/v1",
          kind: "MyAppInstance",
          name: "x",
          uid: "00000000-0000-4000-8000-000000000000",
          controller: true,
        },
      ],
    });
    await assert.rejects(
      asOperator.create(disguised, { dryRun: true }),
      (error: unknown) => error instanceof ForbiddenError && /host namespaces/.test(error.message),
    );
    // Admins are not matched by the policy: the same dry-run passes for them.
    await client.create(privilegedDeployment("kube-system"), { dryRun: true });

    await assertDenied(asOperator, [
      ...neverGranted("kube-system", args.namespace ?? "", "kube-controller-manager"),
      // By default charts render only the built-in template's kinds: no write on configuration, credentials,
      // identities or routing anywhere (a leaked token cannot edit kube-system/coredns).
      ...["create", "patch", "delete"].flatMap((verb) =>
        ["configmaps", "secrets", "serviceaccounts"].map((resource) => ({
          verb,
          group: "",
          resource,
          namespace: "kube-system",
        })),
      ),
      { verb: "patch", group: "networking.k8s.io", resource: "ingresses", namespace: "kube-system" },
      { verb: "get", group: "", resource: "secrets" },
      { verb: "list", group: "", resource: "secrets" },
    ]);
  });
});

/** `pulumi up` of the component (external placement: no workload to wait for); the SA's token as a client. */
async function installAndConnect(t: TestContext, name: string, args: MyAppOperatorArgs): Promise<KubeClient> {
  const stack = await operatorStack(t, name, args);
  const up = await stack.up();
  assert.equal(up.summary.result, "succeeded");
  const resolved = resolveSettings(name, args);
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.issues));
  const policy = await client.get("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", `${name}-children`);
  assert.ok(policy, "the component installed the admission policy");
  const kubeconfig = await serviceAccountKubeconfig(
    client,
    resolved.settings.namespace,
    operatorObjectNames(resolved.settings).serviceAccount,
  );
  return new KubeClient(loadKubeConfig({ kubeconfig }));
}

async function allowed(asOperator: KubeClient, access: Access): Promise<boolean> {
  const review = await asOperator.create<Review>({
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    metadata: {},
    spec: { resourceAttributes: access },
  } as Review);
  return review.status?.allowed === true;
}

/** Waits until the apiserver allows `access` (a binding just stored takes effect a moment later). */
async function untilAllowed(asOperator: KubeClient, access: Access): Promise<void> {
  await waitFor(`${JSON.stringify(access)} to be allowed`, async () =>
    (await allowed(asOperator, access)) ? true : undefined,
  );
}

async function assertDenied(asOperator: KubeClient, accesses: readonly Access[]): Promise<void> {
  const wrongly: Access[] = [];
  for (const access of accesses) if (await allowed(asOperator, access)) wrongly.push(access);
  assert.deepEqual(wrongly, [], "every verb the operator does not need is denied");
}

async function namespaceFor(t: TestContext, name: string): Promise<string> {
  await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  t.after(() => client.delete("v1", "Namespace", name).then(() => undefined));
  return name;
}

/** An inline program with just the component, run by the built CLI offline; destroyed at the end. */
async function operatorStack(t: TestContext, name: string, args: MyAppOperatorArgs): Promise<Stack> {
  const kubeconfigPath = process.env.KUBECONFIG;
  if (!kubeconfigPath)
    throw new Error("KUBECONFIG is not set: run with `npm test -- test/e2e/least-privilege.test.ts`");
  const kubeconfig = readFileSync(kubeconfigPath, "utf8");
  const program = async () => {
    const provider = new k8s.Provider("local", { kubeconfig });
    const platform = new MyAppOperator(name, args, { provider });
    return { serviceAccountName: platform.serviceAccountName };
  };
  return inlineStack({
    stackName: name,
    projectName: "least-privilege-e2e",
    program,
    kubeconfigPath,
    defer: (step) => t.after(step),
  });
}
