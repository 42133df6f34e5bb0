/**
 * Instances live where the platform lives. Two local clusters: the platform's (the test run's cluster) and
 * another one, started here, that KUBECONFIG names while Pulumi runs:
 * - `up` installs the platform and puts its instance in the platform's cluster, not the ambient one; `refresh`,
 *   a no-change `preview` and `destroy` act on the platform's cluster whatever KUBECONFIG says;
 * - an instance that follows the ambient kubeconfig fails `refresh` and `destroy` naming both clusters when
 *   KUBECONFIG names the other cluster, and nothing changes in either cluster or in the state;
 * - the platform's provider (a ClusterProvider) pointed at the other cluster: `preview` and `up` (which previews
 *   first, as the CLI does by default) fail naming both clusters, changing nothing in either cluster or in the
 *   state; `refresh` and `destroy`, which use the connection the state records, act on the platform's cluster
 *   only, and nothing reaches the other one.
 *
 * Needs the toolchain and the local cluster: `npm test -- test/e2e/two-clusters.test.ts` (it starts the second
 * cluster, `e2e-other`, and stops it again if it started it).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { LocalWorkspace } from "@pulumi/pulumi/automation/index.js";
import { apiVersion, crdName, isReady, kind, type MyAppInstanceObject } from "../../api/index.ts";
import { KubeClient, loadKubeConfig } from "../../kube/index.ts";
import { clusterDown, clusterStatus, clusterUp } from "../../tools/lib/cluster.ts";
import { kubeconfigPath, localDir, repoRoot } from "../../tools/lib/paths.ts";
import { adminClient, type Typed } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { destroyStack, log, projectStack, runCli } from "./support/project.ts";

const minutes = (n: number) => n * 60_000;
const otherName = "e2e-other";
const platformClient = adminClient();
type Live = Typed<MyAppInstanceObject>;

describe("two clusters: instances follow the platform, never the ambient kubeconfig", { timeout: minutes(20) }, () => {
  let otherKubeconfig = "";
  let startedOther = false;
  before(async () => {
    startedOther = !(await clusterStatus(otherName)).healthy;
    otherKubeconfig = (await clusterUp(otherName)).kubeconfig;
  });
  after(async () => {
    if (startedOther) await clusterDown(otherName);
  });

  it("up, refresh and destroy act on the platform's cluster; another cluster is refused by name", async (t) => {
    const otherClient = new KubeClient(loadKubeConfig({ path: otherKubeconfig }));
    const suffix = randomBytes(3).toString("hex");
    const appNamespace = `e2e-two-${suffix}`;
    const operator = await startOperator(t, { namespaces: [appNamespace], leaderElection: false, label: "two" });
    const workDir = path.join(localDir, "e2e", `two-clusters-${suffix}`);
    mkdirSync(workDir, { recursive: true });
    writeFileSync(
      path.join(workDir, "Pulumi.yaml"),
      "name: two-clusters-e2e\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.ts\n",
    );
    writeFileSync(path.join(workDir, "index.ts"), program());
    // Pulumi runs with KUBECONFIG naming the other cluster throughout.
    const stack = await projectStack(workDir, { KUBECONFIG: otherKubeconfig });
    const workspace = stack.workspace as LocalWorkspace;
    t.after(async () => {
      workspace.envVars["KUBECONFIG"] = kubeconfigPath;
      await stack.setConfig("platformKubeconfig", { value: kubeconfigPath });
      await destroyStack(t, stack);
      rmSync(workDir, { recursive: true, force: true });
    });
    await stack.setAllConfig({
      platformKubeconfig: { value: kubeconfigPath },
      namespace: { value: appNamespace },
      suffix: { value: suffix },
    });
    const failWith = (error: unknown) => new Error(`${String(error)}\noperator log (tail):\n${operator.logTail()}`);
    const platformUid = (await platformClient.get("v1", "Namespace", "kube-system")).metadata.uid!;
    const otherUid = (await otherClient.get("v1", "Namespace", "kube-system")).metadata.uid!;
    assert.notEqual(platformUid, otherUid, "two clusters");
    const bothNamed = (error: Error) => {
      assert.match(error.message, new RegExp(`lives in cluster \\S+ \\(kube-system uid ${platformUid}\\)`));
      assert.match(error.message, new RegExp(`now reaches cluster \\S+ \\(kube-system uid ${otherUid}\\)`));
      return true;
    };
    // The instances as the state records them (ids, inputs, outputs): what a wrong-cluster operation must not touch.
    const exported = async () => {
      const deployment = (await stack.exportStack()).deployment as {
        resources: { type: string; id?: string; inputs?: unknown; outputs?: unknown }[];
      };
      const instances = deployment.resources.filter((r) => r.type.endsWith(":MyAppInstance"));
      return JSON.stringify(instances.map(({ id, inputs, outputs }) => ({ id, inputs, outputs })));
    };

    let webName = "";
    await t.test("up: the platform and its instance go to the platform's cluster", async () => {
      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      webName = String(up.outputs.webName?.value);
      assert.ok(isReady(await platformClient.get<Live>(apiVersion, kind, webName, appNamespace)));
      assert.equal((up.outputs.webCluster?.value as { uid: string }).uid, platformUid, "the cluster it lives in");
      assert.equal(await otherClient.find("v1", "Namespace", appNamespace), undefined, "nothing in the other one");
    });

    await t.test("refresh and a preview act on the platform's cluster: no changes", async () => {
      await stack.refresh({ expectNoChanges: true, onOutput: log(t) });
      await stack.preview({ expectNoChanges: true, onOutput: log(t) });
    });

    await t.test("an instance following the ambient kubeconfig: refresh and destroy elsewhere fail", async () => {
      // GIVEN an instance without platform or kubeconfig, created while KUBECONFIG named the platform's cluster
      workspace.envVars["KUBECONFIG"] = kubeconfigPath;
      await stack.setConfig("loose", { value: "true" });
      await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      const state = await exported();
      // WHEN KUBECONFIG names the other cluster
      workspace.envVars["KUBECONFIG"] = otherKubeconfig;
      // THEN refresh and destroy fail naming both clusters, and nothing changed
      await assert.rejects(stack.refresh({ onOutput: log(t) }), bothNamed);
      // (Only this one: a whole-stack destroy would rightly remove `web` from its platform's cluster meanwhile.)
      const deployment = (await stack.exportStack()).deployment as { resources: { urn: string }[] };
      const loose = deployment.resources.find((r) => r.urn.endsWith("::loose"))!.urn;
      await assert.rejects(stack.destroy({ target: [loose], onOutput: log(t) }), bothNamed);
      assert.equal(await exported(), state, "the state is unchanged");
      const { items } = await platformClient.list<Live>(apiVersion, kind, { namespace: appNamespace });
      assert.equal(items.length, 2, "both instances still run in the platform's cluster");
      // Cleanup of the step: the loose instance goes where it lives.
      workspace.envVars["KUBECONFIG"] = kubeconfigPath;
      await stack.setConfig("loose", { value: "false" });
      await stack.up({ onOutput: log(t) });
      workspace.envVars["KUBECONFIG"] = otherKubeconfig;
    });

    // Everything of the stack in the state, and whether anything of it reached the other cluster.
    const wholeState = async () =>
      JSON.stringify(((await stack.exportStack()).deployment as { resources: unknown[] }).resources);
    const nothingInTheOther = async () => {
      assert.equal(await otherClient.find("v1", "Namespace", appNamespace), undefined, "no app namespace there");
      assert.equal(await otherClient.find("v1", "Namespace", `e2e-two-sys-${suffix}`), undefined, "no platform there");
      const crd = await otherClient.find("apiextensions.k8s.io/v1", "CustomResourceDefinition", crdName);
      assert.equal(crd, undefined, "no CRD there");
    };

    await t.test("the platform's provider pointed at the other cluster: preview and up fail naming both", async () => {
      // GIVEN the platform's ClusterProvider pointed at the other cluster
      const state = await wholeState();
      const live = await platformClient.get<Live>(apiVersion, kind, webName, appNamespace);
      await stack.setConfig("platformKubeconfig", { value: otherKubeconfig });
      // WHEN previewing, and running `pulumi up` as the CLI does by default (its preview first)
      await assert.rejects(stack.preview({ onOutput: log(t) }), bothNamed);
      await assert.rejects(runCli(stack, workDir, ["up", "--yes"], t), bothNamed);
      // THEN nothing changed in the state, in the platform's cluster or in the other cluster
      assert.equal(await wholeState(), state, "the state is unchanged");
      const after = await platformClient.get<Live>(apiVersion, kind, webName, appNamespace);
      assert.deepEqual(
        [after.metadata.uid, after.metadata.generation, after.metadata.resourceVersion],
        [live.metadata.uid, live.metadata.generation, live.metadata.resourceVersion],
        "the instance is untouched",
      );
      await nothingInTheOther();
    });

    await t.test("refresh, still pointed at the other cluster, acts where the instances live", async () => {
      const state = await exported();
      await stack.refresh({ expectNoChanges: true, onOutput: log(t) });
      assert.equal(await exported(), state, "the instances' state is unchanged");
      await nothingInTheOther();
    });

    await t.test("destroy acts on the platform's cluster, whatever KUBECONFIG and the provider say", async () => {
      const destroy = await stack.destroy({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(destroy.summary.result, "succeeded");
      assert.equal(await platformClient.find(apiVersion, kind, webName, appNamespace), undefined);
      await nothingInTheOther();
    });
  });
});

/** The platform on the cluster of `platformKubeconfig`, one instance on it, and optionally one without platform. */
function program(): string {
  return `import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterProvider, MyAppOperator } from ${JSON.stringify(path.join(repoRoot, "components/index.ts"))};
import { MyAppInstance } from ${JSON.stringify(path.join(repoRoot, "provider/index.ts"))};

const config = new pulumi.Config();
const suffix = config.require("suffix");
const cluster = new ClusterProvider("platform-cluster", { kubeconfig: config.require("platformKubeconfig") });
const platform = new MyAppOperator(
  \`e2e-two-\${suffix}\`,
  { namespace: \`e2e-two-sys-\${suffix}\`, operatorPlacement: "external" },
  { provider: cluster },
);
const apps = new k8s.core.v1.Namespace("apps", { metadata: { name: config.require("namespace") } }, { provider: cluster });
const web = new MyAppInstance("web", { platform, namespace: apps.metadata.name, image: "nginx:1.27" });
export const webName = web.name;
export const webCluster = web.cluster;
if (config.getBoolean("loose")) {
  new MyAppInstance("loose", { namespace: apps.metadata.name, image: "nginx:1.27" }, { dependsOn: [platform] });
}
`;
}
