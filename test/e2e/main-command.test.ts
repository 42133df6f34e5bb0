/**
 * The README's main command, end to end on a clean state: `npm start` brings up the dev stack and prints a table
 * that matches the cluster; a change of the stack's platform applied with `npm run pulumi -- up` restarts its
 * operator with the new flags; a second operator (`npm run operator`) beside it waits as a standby; `npm run down
 * --keep-cluster` removes the stack and stops the operator; neither leaves anything in the user's temporary directory.
 * (It resets the local `dev` stack: run it on a machine where that is fine, as CI is.)
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { parse as parseYaml } from "yaml";
import { repoRoot } from "../../tools/lib/paths.ts";
import { operatorPid, operatorRecord } from "../../tools/lib/operator-process.ts";
import { findCondition, type Condition } from "../../api/index.ts";
import { adminClient, waitFor, type Typed } from "../support/cluster.ts";
import { packChart, podinfoChartDir } from "../support/helm.ts";
import { readmeSectionFiles } from "../../tools/lib/readme-project.ts";

/**
 * The environment a user's `npm start` has: no toolchain directory on PATH and none of the test run's own
 * variables (MYAPP_TOOLCHAIN_BIN, MYAPP_HELM, KWOK_WORKDIR, the suite's PULUMI_*), so whatever the scripts need they
 * must find themselves; what a user may well have exported for other work (a KUBECONFIG of another cluster, the
 * passphrase of their own project); and a temporary directory of its own, to see what they leave there.
 */
const userTmp = mkdtempSync(path.join(os.tmpdir(), "user-tmp-"));
function userEnv(): NodeJS.ProcessEnv {
  const toolchain = process.env.MYAPP_TOOLCHAIN_BIN;
  const env = { ...process.env };
  delete env.MYAPP_TOOLCHAIN_BIN;
  delete env.MYAPP_HELM;
  delete env.KWOK_WORKDIR;
  for (const name of Object.keys(env)) if (name.startsWith("PULUMI_")) delete env[name];
  env.KUBECONFIG = path.join(userTmp, "another-cluster.kubeconfig");
  env.PULUMI_CONFIG_PASSPHRASE = "the passphrase of the user's own project";
  env.TMPDIR = userTmp;
  env.PATH = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => dir !== toolchain && !dir.includes("myapp-platform/toolchain"))
    .join(path.delimiter);
  return env;
}

function runScript(script: string, args: string[] = []): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, script), ...args], {
      cwd: repoRoot,
      env: userEnv(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout }));
  });
}

/** `npm run operator` as a user types it (free ports: the defaults may be taken), its output kept; stop() ends it. */
function startSecondOperator(): { output: () => string; stop: () => Promise<void> } {
  const child = spawn(
    process.execPath,
    [
      path.join(repoRoot, "tools/operator.ts"),
      "--metrics-bind-address=127.0.0.1:0",
      "--health-probe-bind-address=127.0.0.1:0",
    ],
    // Without KUBECONFIG, as after `npm start`: then it runs as the dev stack's ServiceAccount, on its Lease.
    { cwd: repoRoot, env: { ...userEnv(), KUBECONFIG: undefined }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const keep = (chunk: Buffer) => (output += chunk.toString());
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  return {
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await closed;
      clearTimeout(killer);
    },
  };
}

type Instance = Typed<{
  spec: { image: string; replicas: number };
  status?: { readyReplicas?: number; phase?: string };
}>;

test("npm start brings up the dev stack with every instance Ready and prints what the cluster says", async (t) => {
  const client = adminClient();
  // (node:test runs `after` hooks first-registered-first: the directory goes once the down is done)
  t.after(() => runScript("tools/down.ts", ["--keep-cluster"]));
  t.after(() => rmSync(userTmp, { recursive: true, force: true }));
  assert.equal((await runScript("tools/down.ts", ["--keep-cluster"])).code, 0, "clean state");

  const start = await runScript("tools/main.ts");
  assert.equal(start.code, 0, start.stdout);
  assert.ok(operatorPid(), "the operator runs as a local process");
  assert.ok(existsSync(path.join(repoRoot, ".local/operator.kubeconfig")), "with the ServiceAccount's kubeconfig");

  // The dev stack takes the component's default (`webhooks.defaults: "auto"`): the local cluster runs Kubernetes
  // 1.36, so the apiserver gives namespace defaults with a MutatingAdmissionPolicy, the mutating webhook behind it,
  // and the local operator injects its CA into both configurations.
  const admission = "admissionregistration.k8s.io/v1";
  assert.ok(await client.find(admission, "MutatingAdmissionPolicyBinding", "myapp-operator-defaults"));
  for (const configuration of ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]) {
    const live = await client.get<Typed<{ webhooks: { clientConfig: { caBundle?: string } }[] }>>(
      admission,
      configuration,
      "myapp-operator",
    );
    assert.ok(
      live.webhooks.every((webhook) => webhook.clientConfig.caBundle),
      `the CA is injected into the ${configuration}`,
    );
  }

  const lines = start.stdout.split("\n");
  const header = lines.findIndex((l) => l.startsWith("NAMESPACE"));
  assert.ok(header >= 0, `a table was printed:\n${start.stdout}`);
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(header + 1)) {
    if (!line.trim()) break;
    const cells = line.trim().split(/\s+/);
    rows.set(`${cells[0]}/${cells[1]}`, cells);
  }
  for (const name of ["web", "db"]) {
    const live = await client.get<Instance>("example.com/v1", "MyAppInstance", name, "default");
    const row = rows.get(`default/${name}`);
    assert.ok(row, `${name} is in the table`);
    const service = await client.get<Typed<{ spec: { ports: { port: number }[] } }>>("v1", "Service", name, "default");
    assert.deepEqual(row, [
      "default",
      name,
      live.spec.image,
      `${live.status?.readyReplicas}/${live.spec.replicas}`,
      "Running",
      `${name}.default.svc:${service.spec.ports[0]!.port}`,
    ]);
    assert.equal(live.status?.readyReplicas, live.spec.replicas, `${name} is Ready`);
  }

  // The README's chart walkthrough right after `npm start`, with its instance as the README shows it: the operator
  // it started renders with the toolchain's helm, though helm is on no PATH of the user's, and the instance's name
  // is not one the dev stack already uses.
  const walkthrough = readmeChartInstance();
  const { name: chartName, namespace: chartNamespace } = walkthrough.metadata;
  assert.equal(
    chartNamespace,
    "default",
    "the walkthrough's instance is in the namespace npm start's operator watches",
  );
  assert.ok(
    !["web", "db"].includes(chartName),
    `the walkthrough's instance ${chartName} is not one of the dev stack's`,
  );
  const chartConfigMap = walkthrough.spec.chart.configMap;
  await client.apply(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: chartConfigMap, namespace: chartNamespace },
      binaryData: { "chart.tgz": (await packChart(await podinfoChartDir())).toString("base64") },
    },
    { fieldManager: "main-command-test", force: true },
  );
  t.after(() => client.delete("v1", "ConfigMap", chartConfigMap, chartNamespace).catch(() => undefined));
  await client.apply(walkthrough, { fieldManager: "main-command-test", force: true });
  t.after(() => client.delete("example.com/v1", "MyAppInstance", chartName, chartNamespace).catch(() => undefined));
  const chartReady = await waitFor(
    `the chart instance ${chartName} to be Ready`,
    async () => {
      const live = await client.get<Typed<{ status?: { conditions?: Condition[] } }>>(
        "example.com/v1",
        "MyAppInstance",
        chartName,
        chartNamespace,
      );
      const ready = findCondition(live.status?.conditions, "Ready");
      const degraded = findCondition(live.status?.conditions, "Degraded");
      if (degraded?.status === "True") return degraded;
      return ready?.status === "True" ? ready : undefined;
    },
    { timeoutMs: 180_000 },
  );
  assert.equal(chartReady.type, "Ready", `${chartName}: ${chartReady.reason}: ${chartReady.message}`);

  // The platform changed on the dev stack and applied with `npm run pulumi -- up`: npm start's operator (a local
  // process, not a resource of the stack) is restarted with the flags the stack now gives it, then back.
  const devConfig = path.join(repoRoot, "stacks/Pulumi.dev.yaml");
  const originalConfig = readFileSync(devConfig, "utf8");
  t.after(() => writeFileSync(devConfig, originalConfig));
  const up = () =>
    runScript("tools/pulumi.ts", ["up", "--stack", "dev", "--yes", "--non-interactive", "--skip-preview"]);
  const startedBefore = operatorRecord();
  const set = await runScript("tools/pulumi.ts", ["config", "set", "webhookDefaults", "policy", "--stack", "dev"]);
  assert.equal(set.code, 0, set.stdout);
  const changed = await up();
  assert.equal(changed.code, 0, changed.stdout);
  const restarted = operatorRecord();
  assert.ok(restarted && restarted.pid !== startedBefore?.pid, "the operator was restarted");
  assert.ok(restarted.started?.flags.includes("--webhook-defaults=policy"), JSON.stringify(restarted.started));
  writeFileSync(devConfig, originalConfig);
  const restored = await up();
  assert.equal(restored.code, 0, restored.stdout);
  assert.ok(!operatorRecord()?.started?.flags.includes("--webhook-defaults=policy"), "and back");

  // `npm run operator` beside npm start's: the two elect one leader on the dev stack's Lease, so the second waits as
  // a standby and does not reconcile what the first does, here the walkthrough instance's deletion.
  const standby = startSecondOperator();
  t.after(() => standby.stop());
  await waitFor(
    "the second operator to see npm start's lead",
    async () => standby.output().includes("observed leader") || undefined,
    { timeoutMs: 60_000 },
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}; its output:\n${standby.output()}`);
  });
  assert.match(standby.output(), /this one waits as a standby/);
  await client.delete("example.com/v1", "MyAppInstance", chartName, chartNamespace);
  await waitFor(
    `${chartName} to be finalized and gone`,
    async () => ((await client.find("example.com/v1", "MyAppInstance", chartName, chartNamespace)) ? undefined : true),
    { timeoutMs: 120_000 },
  );
  await standby.stop();
  assert.doesNotMatch(standby.output(), /"msg":"(became leader|reconciled)"/, "the standby reconciled nothing");

  const down = await runScript("tools/down.ts", ["--keep-cluster"]);
  assert.equal(down.code, 0);
  assert.equal(operatorPid(), undefined, "down stopped the operator");
  for (const name of ["web", "db"]) {
    assert.equal(await client.find("example.com/v1", "MyAppInstance", name, "default"), undefined, `${name} destroyed`);
  }
  assert.equal(await client.find(admission, "MutatingAdmissionPolicy", "myapp-operator-defaults"), undefined);
  // pulumi-kubernetes writes its kubeconfig to a new temporary file at every start and never removes it; the
  // scripts run pulumi in a temporary directory of its own, removed after the command, so none of it is left here.
  // Node's code cache, which the provider's host keeps there so the next command starts warm, is all there is.
  const left = readdirSync(userTmp).filter((name) => name !== "node-compile-cache");
  assert.deepEqual(left, [], "nothing but Node's code cache left in the user's temporary directory");
});

/** The instance of the README's chart walkthrough, exactly as its `podinfo.yaml` block shows it. */
function readmeChartInstance(): Typed<{
  metadata: { name: string; namespace: string };
  spec: { chart: { configMap: string } };
}> {
  const heading = "## Charts: an existing Helm chart as the template engine";
  return parseYaml(readmeSectionFiles(heading, ["podinfo.yaml"]).get("podinfo.yaml")!);
}
