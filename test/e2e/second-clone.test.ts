/**
 * State outlives the checkout: a stack brought up from one clone of the repository is refreshed and destroyed from
 * another clone in another directory, after the first is gone. The serialized provider in state names its
 * implementation by package specifier, which each clone resolves to its own copy.
 *
 * Needs the toolchain and the local cluster: `npm test -- test/e2e/second-clone.test.ts`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation/index.js";
import { apiVersion, isReady, kind, type MyAppInstanceObject } from "../../api/index.ts";
import { pulumiEnv, repoRoot } from "../../tools/lib/paths.ts";
import { adminClient, testNamespace, type Typed } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { destroyStack, log, projectStack, toolPath } from "./support/project.ts";

const minutes = (n: number) => n * 60_000;
const client = adminClient();

describe("state written from one clone works from another", { timeout: minutes(15) }, () => {
  it("up from clone A; with A gone, refresh and destroy from clone B in another directory", async (t) => {
    const namespace = await testNamespace(t, client, "e2e-clone");
    const operator = await startOperator(t, { namespaces: [namespace], leaderElection: false, label: "clone" });
    const home = mkdtempSync(path.join(tmpdir(), "myapp-clones-"));
    // One hook, in order: the stack (from whichever clone still has it), then the clones.
    let stackCleanup: () => Promise<unknown> = async () => undefined;
    t.after(async () => {
      await stackCleanup();
      rmSync(home, { recursive: true, force: true });
    });
    const cloneA = cloneRepository(path.join(home, "a"));
    const cloneB = cloneRepository(path.join(home, "elsewhere", "b"));
    const failWith = (error: unknown) => new Error(`${String(error)}\noperator log (tail):\n${operator.logTail()}`);

    // GIVEN a stack of a project inside clone A, up and Ready
    const stack = await projectStack(path.join(cloneA, "e2e-project"));
    stackCleanup = () => destroyStack(t, stack);
    await stack.setConfig("namespace", { value: namespace });
    await stack.setConfig("kubeconfig", { value: readFileSync(process.env.KUBECONFIG!, "utf8"), secret: true });
    const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
      throw failWith(error);
    });
    const name = String(up.outputs.name?.value);
    assert.ok(isReady(await client.get<Typed<MyAppInstanceObject>>(apiVersion, kind, name, namespace)));
    // (Only the engine's debug `sourcePosition` may name a file; what the operations load must not.)
    const state = (await stack.exportStack()).deployment as {
      resources: { type: string; inputs?: unknown; outputs?: unknown }[];
    };
    const instance = state.resources.find((r) => r.type.endsWith(":MyAppInstance"));
    const recorded = JSON.stringify([instance?.inputs, instance?.outputs]);
    assert.match(recorded, /myapp-platform\/provider-impl/, "the provider names its package");
    assert.equal(recorded.includes(cloneA), false, "the state names no path of clone A");

    // WHEN clone A is gone and clone B selects the same stack
    rmSync(cloneA, { recursive: true, force: true });
    process.env.PATH = toolPath();
    const fromB = await LocalWorkspace.selectStack(
      { stackName: stack.name, workDir: path.join(cloneB, "e2e-project") },
      {
        pulumiCommand: await PulumiCommand.get({ skipVersionCheck: true }),
        envVars: { ...pulumiEnv(), KUBECONFIG: process.env.KUBECONFIG ?? "", PATH: toolPath() },
      },
    );
    stackCleanup = () => destroyStack(t, fromB);

    // THEN refresh sees the same instance, unchanged, and destroy removes it
    await fromB.refresh({ expectNoChanges: true, onOutput: log(t) });
    const destroyed = await fromB.destroy({ onOutput: log(t) }).catch((error: unknown) => {
      throw failWith(error);
    });
    assert.equal(destroyed.summary.result, "succeeded");
    assert.equal(await client.find(apiVersion, kind, name, namespace), undefined, "gone from the cluster");
  });
});

/**
 * A clone of the working tree at `target`: its tracked and new files (so it tests the code as it stands), the
 * dependencies linked rather than installed again, and a one-instance project inside it that imports the clone's
 * own sources by relative path.
 */
function cloneRepository(target: string): string {
  mkdirSync(target, { recursive: true });
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], {
    cwd: repoRoot,
    encoding: "utf8",
  })
    .split("\0")
    .filter((file) => file !== "" && existsSync(path.join(repoRoot, file)));
  for (const file of files) cpSync(path.join(repoRoot, file), path.join(target, file), { recursive: true });
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(target, "node_modules"));
  const project = path.join(target, "e2e-project");
  mkdirSync(project);
  writeFileSync(
    path.join(project, "Pulumi.yaml"),
    "name: clone-e2e\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.ts\n",
  );
  writeFileSync(
    path.join(project, "index.ts"),
    `import * as pulumi from "@pulumi/pulumi";
import { MyAppInstance } from "../provider/index.ts";

const config = new pulumi.Config();
const web = new MyAppInstance("web", {
  namespace: config.require("namespace"),
  image: "nginx:1.27",
  kubeconfig: config.requireSecret("kubeconfig"),
});
export const name = web.name;
`,
  );
  return target;
}
