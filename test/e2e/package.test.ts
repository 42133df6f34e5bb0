/**
 * The first hour of a user, played: `npm pack`, a brand-new Pulumi project in a temporary directory outside the
 * repository made of the README's "Your own project" files verbatim (they are also the template
 * examples/new-project, which a unit test keeps identical), `npm install` of the tarball, then the README's local
 * recipe: the operator started from the project's own `npx --no-install myapp-operator`, `pulumi preview`, `up` (instances
 * Ready), `preview --expect-no-changes`, `refresh --expect-no-changes`, an image change whose preview shows exactly
 * that, and `destroy`, after which the claims the platform keeps are still there. Played twice: on this repository's
 * Node and on the oldest Node the README's project says it runs on (its `engines.node`, fetched from the npm
 * registry into the cache: support/oldest-node.ts), first on PATH for everything the project runs.
 *
 * Needs the toolchain and the local cluster: `npm test -- test/e2e/package.test.ts`.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it, type TestContext } from "node:test";
import { promisify } from "node:util";
import { apiVersion, isReady, kind, type MyAppInstanceObject } from "../../api/index.ts";
import { NotFoundError } from "../../kube/index.ts";
import { parseOptions } from "../../operator/options.ts";
import { kubeconfigPath, repoRoot } from "../../tools/lib/paths.ts";
import { adminClient, waitFor, type Typed } from "../support/cluster.ts";
import { allProcesses, descendants, stillRunning, type ProcessInfo } from "../support/process-tree.ts";
import { enginesNodeOf, nodeBinDir, oldestVersionOf } from "../support/oldest-node.ts";
import { teardown, type Defer } from "../support/teardown.ts";
import { npmInstall, packedProject } from "../../tools/lib/packed-project.ts";
import { readmeOperatorFlags, readmeProjectFiles } from "../../tools/lib/readme-project.ts";
import { binDir, destroyStack, log, toolPath, userProjectStack, userPulumiEnv } from "./support/project.ts";

const run = promisify(execFile);
const minutes = (n: number) => n * 60_000;
const client = adminClient();
/** The namespace the README's program declares. */
const appNamespace = "shop";

/**
 * `npx --no-install myapp-operator FLAGS` with the flags of the README's local recipe, from the project's own install
 * (free ports instead of the defaults, so it cannot collide with another operator of the test run). `stop` is what a
 * script does to it: SIGTERM to npx's pid, nothing to the operator under it.
 */
function startProjectOperator(defer: Defer, project: string, env: NodeJS.ProcessEnv) {
  const child = spawn(
    "npx",
    [
      "--no-install",
      "myapp-operator",
      ...readmeOperatorFlags(),
      "--metrics-bind-address=127.0.0.1:0",
      "--health-probe-bind-address=127.0.0.1:0",
    ],
    { cwd: project, env: { ...env, KUBECONFIG: kubeconfigPath }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => lines.push(line));
  }
  // npx's own exit: "close" would also wait for its pipes, which an operator left behind would hold open.
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let tree: ProcessInfo[] = [];
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  defer(async () => {
    await stop();
    // Whatever a failed assertion left under npx goes too: by pid, each the very process seen.
    for (const p of tree.filter(stillRunning)) process.kill(p.pid, "SIGKILL");
  });
  return {
    logTail: () => lines.slice(-40).join("\n"),
    /** npm, its shell and the operator, once the operator has started. */
    started: async () => {
      await waitFor(
        "the operator to start under npx",
        async () => (lines.some((line) => line.includes('"operator starting"')) ? true : undefined),
        {
          timeoutMs: minutes(2),
        },
      );
      tree = descendants(child.pid ?? 0);
      return tree;
    },
    stop,
  };
}

/** The Node a project runs on: this repository's, and the oldest the README's project names (engines.node). */
const oldestNode = oldestVersionOf(enginesNodeOf(readmeProjectFiles().get("package.json")!));
const runtimes = [
  { label: `Node ${process.versions.node} (this repository's)`, binDir: async () => path.dirname(process.execPath) },
  { label: `Node ${oldestNode}, the oldest the README names`, binDir: () => nodeBinDir(oldestNode) },
];

describe("the installable package, from a new project outside the repository", { timeout: minutes(30) }, () => {
  // One tarball for both runtimes, packed as the README says (`npm pack` builds first: prepack) by this Node.
  const packed = mkdtempSync(path.join(tmpdir(), "myapp-pack-"));
  before(() => packedProject(packed, new Map(), { ...process.env, PATH: toolPath() }));
  after(() => rmSync(packed, { recursive: true, force: true }));

  for (const runtime of runtimes) {
    it(`the README's project on ${runtime.label}: npm install, preview, up, no-change preview and refresh, an image change, destroy`, async (t) => {
      await userProject(t, await runtime.binDir(), packed);
    });
  }
});

/** The README's project, from the tarball in `packed`, with `nodeDir`'s Node first on PATH. */
async function userProject(t: TestContext, nodeDir: string, packed: string): Promise<void> {
  // Undone last-registered-first: the stack while its operator runs, then the operator, the namespace, the directory.
  const defer = teardown(t);
  const home = mkdtempSync(path.join(tmpdir(), "myapp-user-"));
  assert.equal(home.startsWith(repoRoot), false, "the project lives outside the repository");
  // Everything the project runs (npm, the operator, pulumi's language host and dynamic provider) finds this Node.
  const env = { ...process.env, PATH: toolPath(nodeDir) };
  defer(() => rmSync(home, { recursive: true, force: true }));

  // GIVEN a project of the README's files, exactly as a user copies them, and the tarball beside them
  const project = path.join(home, "shop");
  mkdirSync(project);
  for (const [name, text] of readmeProjectFiles()) writeFileSync(path.join(project, name), text);
  const tarballs = readdirSync(packed).filter((file) => file.endsWith(".tgz"));
  assert.equal(tarballs.length, 1, `npm pack wrote the tarball: ${tarballs.join(", ")}`);
  copyFileSync(path.join(packed, tarballs[0]!), path.join(project, tarballs[0]!));
  // The namespace is the program's, kept by destroy on purpose (retainOnDelete): the test removes it at the end,
  // and waits until it is gone, for the next runtime's project declares it again.
  defer(async () => {
    await client.delete("v1", "Namespace", appNamespace).catch(() => undefined);
    const gone = () =>
      client.get("v1", "Namespace", appNamespace).then(
        () => undefined,
        (error: unknown) => (error instanceof NotFoundError ? true : Promise.reject(error)),
      );
    await waitFor("the project's namespace to be gone", gone, { timeoutMs: minutes(3) });
  });
  await npmInstall(project, env);
  const installed = path.join(project, "node_modules/myapp-platform");
  assert.ok(readdirSync(path.join(installed, "build/config/crd")).length > 0, "the CRD ships inside the package");
  assert.equal(readdirSync(installed).includes("api"), false, "no TypeScript sources in the package");
  // What the provider host loads (provider/impl-loader.js): one module; the previews and ups below run through it.
  assert.ok(readdirSync(path.join(installed, "build/provider")).includes("impl.bundle.js"), "the provider's bundle");
  // The thread that parses a chart's large rendered documents, beside the module that starts it: the provider's
  // bundle and the operator's chart engine each find theirs, and it runs on the package's installed dependencies.
  for (const worker of ["build/provider/render-yaml-worker.js", "build/chart/render-yaml-worker.js"]) {
    const parsed = await run(process.execPath, ["--input-type=module", "-e", parseOnce, path.join(installed, worker)], {
      env,
      cwd: project,
    });
    assert.equal(parsed.stdout, '{"value":{"items":[1,2]},"expandedBytes":0}\n', worker);
  }
  const help = await run(path.join(project, "node_modules/.bin/myapp-operator"), ["--help"], { env });
  assert.match(help.stdout, /--namespaces=a,b/, "the myapp-operator bin runs the operator's flags");
  assert.match(help.stdout, /^Usage: myapp-operator \[flags\]/, "the usage names the command as installed");
  // --version from build/operator/main.js: the installed package's own package.json, found above it
  const { version } = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string };
  const printed = await run(path.join(project, "node_modules/.bin/myapp-operator"), ["--version"], { env });
  // and the build it was packed from (this checkout's commit, "+dirty" with changes: tools/lib/build-info.ts)
  assert.match(
    printed.stdout,
    new RegExp(`^myapp-operator ${version.replaceAll(".", "\\.")} \\(build [0-9a-f]{4,}(\\+dirty)?\\)\n$`),
  );

  // The README's local recipe: the operator outside the cluster (kwok's pods do not execute), from the project.
  const operator = startProjectOperator(defer, project, env);
  // Pulumi as the README has the user run it: `pulumi login --local`, KUBECONFIG exported, plugins beside the CLI.
  const stack = await userProjectStack(project, userPulumiEnv(home, kubeconfigPath, nodeDir));
  defer(() => destroyStack(t, stack));
  const failWith = (error: unknown) => new Error(`${String(error)}\noperator log (tail):\n${operator.logTail()}`);

  await t.test(
    "preview: the platform and both instances would be created, by the package's provider launcher",
    async () => {
      // The engine's log says which launcher started the instances' provider host: the Pulumi.yaml's project plugin.
      let engineLog = "";
      const preview = await stack.preview({
        onOutput: log(t),
        logVerbosity: 9,
        logToStdErr: true,
        onError: (text) => (engineLog += text),
      });
      assert.ok((preview.changeSummary.create ?? 0) >= 10, JSON.stringify(preview.changeSummary));
      const launched = /Launching plugin 'pulumi-nodejs \(resource\)' from '([^']+)'/.exec(engineLog)?.[1];
      assert.ok(launched, "the engine's log names no launcher of the provider host");
      const packaged = path.join(installed, "pulumi-plugin/pulumi-resource-pulumi-nodejs");
      assert.equal(realpathSync(launched), realpathSync(packaged));
      // ... and the kubernetes plugin is the one beside the CLI on PATH, as the README says (nothing registered)
      const kubernetes = /Launching plugin 'kubernetes \(resource\)' from '([^']+)'/.exec(engineLog)?.[1];
      assert.ok(kubernetes, "the engine's log names no kubernetes plugin");
      assert.equal(realpathSync(path.dirname(kubernetes)), realpathSync(binDir));
      assert.deepEqual(readdirSync(path.join(home, ".pulumi")).includes("plugins"), false, "no plugin installed");
    },
  );

  await t.test(
    "up: both instances Ready, in the platform's cluster; the runner had the package's preload",
    async () => {
      // The program's runner lives through the whole up: its command line shows the README's `nodeargs`.
      const runners = new Set<string>();
      const sampler = setInterval(() => {
        for (const p of allProcesses()) if (/cmd[\\/]run[\\/]index\.js/.test(p.command)) runners.add(p.command);
      }, 100);
      const up = await stack
        .up({ onOutput: log(t) })
        .catch((error: unknown) => {
          throw failWith(error);
        })
        .finally(() => clearInterval(sampler));
      assert.equal(up.summary.result, "succeeded");
      const seen = [...runners].join("\n") || "no runner seen";
      assert.ok(
        [...runners].some((command) => command.includes("--import=myapp-platform/pulumi-preload")),
        seen,
      );
      const { items } = await client.list<Typed<MyAppInstanceObject>>(apiVersion, kind, { namespace: appNamespace });
      assert.deepEqual(items.map((item) => item.metadata.name?.replace(/-[0-9a-f]{8}$/, "")).sort(), ["db", "web"]);
      for (const item of items) assert.ok(isReady(item), `${item.metadata.name} is Ready`);
      assert.match(String(up.outputs.webEndpoint?.value), /^web-[0-9a-f]{8}\.shop\.svc:8080$/);
      // ... and the program lists the flags its operator was started with (`pulumi stack output operatorFlags`)
      const listed = up.outputs.operatorFlags?.value as string[] | undefined;
      assert.ok(Array.isArray(listed), `operatorFlags: ${JSON.stringify(listed)}`);
      assert.deepEqual(parseOptions(listed, {}), parseOptions(readmeOperatorFlags(), {}));
      // ... reconciled by the README's operator as the leader on the platform's Lease, which it waited for until
      // `up` made the platform's namespace (a second process started so would wait as a standby)
      const lease = await client.find<Typed<{ spec?: { holderIdentity?: string } }>>(
        "coordination.k8s.io/v1",
        "Lease",
        "shop-platform-leader",
        "shop-platform",
      );
      assert.ok(lease?.spec?.holderIdentity, "the README's operator holds the platform's Lease");
    },
  );

  await t.test("preview and refresh right after: no changes", async () => {
    await stack.preview({ expectNoChanges: true, onOutput: log(t) });
    await stack.refresh({ expectNoChanges: true, onOutput: log(t) });
  });

  await t.test("a namespace the platform does not watch fails the preview, naming the ones it does", async () => {
    const program = path.join(project, "index.ts");
    const before = readFileSync(program, "utf8");
    const placed = 'namespace: shop.metadata.name, image: "nginx:1.27"';
    assert.ok(before.includes(placed));
    writeFileSync(program, before.replace(placed, 'namespace: "default", image: "nginx:1.27"'));
    try {
      await assert.rejects(
        stack.preview({ onOutput: log(t) }),
        /namespace "default" is not one shop-platform's operator watches \(watchNamespaces: shop\)/,
      );
    } finally {
      writeFileSync(program, before);
    }
  });

  await t.test("an image change: the preview shows exactly that, and up rolls it out", async () => {
    const program = path.join(project, "index.ts");
    const before = readFileSync(program, "utf8");
    assert.ok(before.includes('image: "nginx:1.27"'));
    writeFileSync(program, before.replace('image: "nginx:1.27"', 'image: "nginx:1.28"'));
    const preview = await stack.preview({ diff: true, onOutput: log(t) });
    assert.deepEqual(preview.changeSummary, { same: preview.changeSummary.same, update: 1 });
    assert.match(preview.stdout, /~ image\s*:\s*"nginx:1\.27" => "nginx:1\.28"/);
    const changed = preview.stdout.split("\n").filter((line) => /^\s+[~+-] \w+\s*:/.test(line));
    assert.equal(changed.length, 1, `only the image changes:\n${changed.join("\n")}`);
    await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
      throw failWith(error);
    });
    const { items } = await client.list<Typed<MyAppInstanceObject>>(apiVersion, kind, { namespace: appNamespace });
    const web = items.find((item) => item.metadata.name?.startsWith("web-"));
    assert.equal(web?.spec.image, "nginx:1.28");
    assert.ok(web && isReady(web), "web is Ready on the new image");
  });

  await t.test("destroy: the instances are gone, the namespace and db's claims are kept", async () => {
    const claimsBefore = await client.list<Typed<object>>("v1", "PersistentVolumeClaim", {
      namespace: appNamespace,
    });
    assert.ok(claimsBefore.items.length > 0, "db has a claim");
    const destroy = await stack.destroy({ onOutput: log(t) }).catch((error: unknown) => {
      throw failWith(error);
    });
    assert.equal(destroy.summary.result, "succeeded");
    const left = await client.list(apiVersion, kind, { namespace: appNamespace }).catch(() => ({ items: [] }));
    assert.deepEqual(left.items, []);
    const namespace = await client.get<Typed<{ status?: { phase?: string } }>>("v1", "Namespace", appNamespace);
    assert.equal(namespace.status?.phase, "Active", "destroy leaves the namespace (retainOnDelete)");
    const claimsAfter = await client.list<Typed<object>>("v1", "PersistentVolumeClaim", { namespace: appNamespace });
    assert.deepEqual(
      claimsAfter.items.map((claim) => claim.metadata.uid).sort(),
      claimsBefore.items.map((claim) => claim.metadata.uid).sort(),
      "every claim is still there, the very same ones",
    );
  });

  await t.test("stopping npx as a script does (SIGTERM to its pid) stops the operator under it", async () => {
    // npm forwards the signal to the shell it runs the command in, which does not pass it on
    const tree = await operator.started();
    const running = tree.find((p) => /^\S*node \S*node_modules\/\.bin\/myapp-operator /.test(p.command));
    assert.ok(running, `the operator runs under npx: ${JSON.stringify(tree)}`);
    assert.equal(
      readlinkSync(`/proc/${running.pid}/exe`),
      realpathSync(path.join(nodeDir, "node")),
      "on the Node found first on PATH",
    );
    await operator.stop();
    await waitFor("every process npx started to end", async () => (tree.some(stillRunning) ? undefined : true), {
      timeoutMs: minutes(1),
    });
    assert.match(operator.logTail(), /the npm process that started the operator is gone/);
    assert.match(operator.logTail(), /"operator stopped"/, "the graceful path: drained, lease released");
  });
}

/** A script that sends the parsing thread's module at argv[1] one document and prints its answer. */
const parseOnce = [
  'import { Worker } from "node:worker_threads";',
  "const worker = new Worker(process.argv[1], { execArgv: [] });",
  'worker.on("message", (answer) => { console.log(JSON.stringify(answer)); void worker.terminate(); });',
  'worker.postMessage({ text: "items: [1, 2]\\n", budget: 1024 });',
].join("\n");
