/**
 * The package as a user gets it: `npm pack`, a brand-new Pulumi project in a temporary directory outside the
 * repository, `npm install` of the tarball, the README's "Use it from your own stack" program (read from the README,
 * so the README cannot drift), then `pulumi preview`, `up` (instances Ready), `preview --expect-no-changes`,
 * `refresh --expect-no-changes` and `destroy` against the local cluster.
 *
 * Needs the toolchain and the local cluster: `npm test -- test/e2e/package.test.ts`.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { apiVersion, isReady, kind, type MyAppInstance } from "../../api/index.ts";
import { kubeconfigPath, repoRoot } from "../../tools/lib/paths.ts";
import { adminClient, type Typed } from "../support/cluster.ts";
import { startOperator } from "../support/operator.ts";
import { destroyStack, log, projectStack, readmeProgram, toolPath } from "./support/project.ts";

const run = promisify(execFile);
const minutes = (n: number) => n * 60_000;
const client = adminClient();
/** The namespace the README's program declares. */
const appNamespace = "shop";

describe("the installable package, from a new project outside the repository", { timeout: minutes(20) }, () => {
  it("npm pack, npm install, the README's program: preview, up, no-change preview and refresh, destroy", async (t) => {
    const home = mkdtempSync(path.join(tmpdir(), "myapp-user-"));
    assert.equal(home.startsWith(repoRoot), false, "the project lives outside the repository");
    const env = { ...process.env, PATH: toolPath() };
    t.after(() => rmSync(home, { recursive: true, force: true }));

    // GIVEN the tarball (`npm pack` builds first: prepack) ...
    await run("npm", ["pack", "--pack-destination", home], { cwd: repoRoot, env, maxBuffer: 1 << 26 });
    const tarball = readdirSync(home).find((file) => file.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote a tarball");

    // ... a project made from the template, installing the tarball instead of the registry's version ...
    const project = path.join(home, "shop");
    await run("cp", ["-r", path.join(repoRoot, "examples/new-project"), project]);
    const manifest = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    manifest.dependencies["myapp-platform"] = `file:${path.join(home, tarball)}`;
    writeFileSync(path.join(project, "package.json"), JSON.stringify(manifest, null, 2));
    // ... and the README's program, exactly.
    writeFileSync(path.join(project, "index.ts"), readmeProgram());
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: project,
      env,
      maxBuffer: 1 << 26,
    });
    const installed = path.join(project, "node_modules/myapp-platform");
    assert.ok(readdirSync(path.join(installed, "build/config/crd")).length > 0, "the CRD ships inside the package");
    assert.equal(readdirSync(installed).includes("api"), false, "no TypeScript sources in the package");
    const help = await run(path.join(project, "node_modules/.bin/myapp-operator"), ["--help"], { env });
    assert.match(help.stdout, /--namespaces=a,b/, "the myapp-operator bin runs the operator's flags");

    // The operator itself runs as a local process here (kwok's pods do not execute): watching only `shop`.
    const operator = await startOperator(t, { namespaces: [appNamespace], leaderElection: false, label: "package" });
    const stack = await projectStack(project);
    t.after(() => destroyStack(t, stack));
    await stack.setConfig("kubeconfig", { value: kubeconfigPath });
    const failWith = (error: unknown) => new Error(`${String(error)}\noperator log (tail):\n${operator.logTail()}`);

    await t.test("preview: the platform and both instances would be created", async () => {
      const preview = await stack.preview({ onOutput: log(t) });
      assert.ok((preview.changeSummary.create ?? 0) >= 10, JSON.stringify(preview.changeSummary));
    });

    await t.test("up: both instances Ready, in the platform's cluster", async () => {
      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(up.summary.result, "succeeded");
      const { items } = await client.list<Typed<MyAppInstance>>(apiVersion, kind, { namespace: appNamespace });
      assert.deepEqual(items.map((item) => item.metadata.name?.replace(/-[0-9a-f]{8}$/, "")).sort(), ["db", "web"]);
      for (const item of items) assert.ok(isReady(item), `${item.metadata.name} is Ready`);
      assert.match(String(up.outputs.webEndpoint?.value), /^web-[0-9a-f]{8}\.shop\.svc:8080$/);
    });

    await t.test("preview and refresh right after: no changes", async () => {
      await stack.preview({ expectNoChanges: true, onOutput: log(t) });
      await stack.refresh({ expectNoChanges: true, onOutput: log(t) });
    });

    await t.test("destroy: the instances are gone (the operator's finalizer ran)", async () => {
      const destroy = await stack.destroy({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(destroy.summary.result, "succeeded");
      const left = await client.list(apiVersion, kind, { namespace: appNamespace }).catch(() => ({ items: [] }));
      assert.deepEqual(left.items, []);
    });
  });
});
