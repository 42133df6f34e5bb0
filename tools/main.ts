/**
 * `npm start`: the whole platform on the local cluster, end to end. Builds (or finds) the toolchain, starts the
 * cluster, runs `pulumi up` on the `dev` stack (which installs the CRD, namespace, ServiceAccount and RBAC, and
 * declares the instances), starts the operator as a local process with its ServiceAccount's token as soon as
 * that exists, and prints the instances. Running it again is safe and fast.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { defaultNamespace, resolveSettings } from "../components/index.ts";
import { KubeClient, loadKubeConfig } from "../kube/index.ts";
import { clusterUp } from "./lib/cluster.ts";
import { formatTable, instanceRows } from "./lib/instances-table.ts";
import { operatorLog, startOperatorWhenReady } from "./lib/operator-process.ts";
import { kubeconfigPath, localDir, repoRoot } from "./lib/paths.ts";
import { progress } from "./lib/progress.ts";
import { prepareToolchain } from "./lib/toolchain.ts";
import { run } from "./lib/run.ts";

/** The dev stack's MyAppOperator component name (stacks/index.ts); its ServiceAccount carries the same name. */
const platformName = "myapp-operator";
const stack = "dev";
/** The local operator watches the dev stack's app namespace only, so test operators elsewhere never compete. */
const appNamespace = "default";

const step = progress("start");
step("toolchain (a cold build takes a while; cached pieces are skipped)");
const { binDir, env } = await prepareToolchain();
await clusterUp();

const settings = resolveSettings(platformName, {});
const serviceAccount = settings.ok ? settings.settings.name : platformName;
const operator = startOperatorWhenReady({
  namespace: defaultNamespace,
  serviceAccount,
  watchNamespaces: [appNamespace],
});
operator.catch(() => undefined); // awaited below; this only keeps an early failure from being unhandled

const pulumi = path.join(binDir, "pulumi");
await run(pulumi, ["stack", "select", stack, "--create", "--non-interactive"], { env, cwd: repoRoot });
step(`pulumi up --stack ${stack} (installs the platform, then waits for every instance to be Ready)`);
const up = await new Promise<number>((resolve) => {
  const child = spawn(pulumi, ["up", "--yes", "--non-interactive", "--skip-preview", "--stack", stack], {
    env,
    cwd: repoRoot,
    stdio: ["ignore", "inherit", "inherit"],
  });
  child.on("close", (code) => resolve(code ?? 1));
});
await operator;
if (up !== 0) {
  console.error(`\npulumi up failed (exit ${up}). The operator's log is ${path.relative(repoRoot, operatorLog)}.`);
  process.exit(up);
}

const rows = await instanceRows(new KubeClient(loadKubeConfig({ path: kubeconfigPath })));
console.log(`\n${formatTable(rows)}\n`);
console.log(`Next:
  edit stacks/index.ts, then   npm run pulumi -- preview --stack dev     # the exact diff
  npm run kubectl -- get myappinstances -A
  npm run kubectl -- describe myappinstance web                         # conditions and events
  operator logs: ${path.relative(repoRoot, operatorLog)}; metrics: curl 127.0.0.1:18080/metrics
  npm run down                                                          # destroy the stack, stop everything
  (state: ${path.relative(repoRoot, localDir)}/)`);
