/**
 * The local operator (pods do not execute on kwok): a background process of the default cluster, running with its
 * ServiceAccount's credentials, so every local run proves the RBAC. Its files in .local/:
 *
 *   operator.json        process record (pid + start time), its ports, and the identity of the cluster it serves
 *   operator.kubeconfig  the cluster's server and CA; the user is `tokenFile: operator.token`
 *   operator.token       a TokenRequest token, renewed by the launcher part of tools/operator.ts before it expires
 *
 * All three are written for one cluster (its identity is recorded) and removed when the operator stops or the
 * cluster goes; a record of another cluster, or of a process that is gone, is never trusted. The process itself
 * is started by the launcher the tests and benchmarks share (operator-launcher.ts), detached.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse, stringify } from "yaml";
import {
  defaultNamespace,
  externalOperatorFlags,
  resolveSettings,
  serviceAccountKubeconfig,
  type NamespaceDefaults,
} from "../../components/index.ts";
import { clusterIdentity, recordedIdentity, sameCluster, type ClusterIdentity } from "../../kube/cluster-identity.ts";
import { KubeClient, loadKubeConfig } from "../../kube/index.ts";
import { freePort, launchOperator, logFileTail, waitForProbe } from "./operator-launcher.ts";
import { kubeconfigPath, localDir, repoRoot } from "./paths.ts";
import {
  isRunning,
  processCommandLine,
  processCwd,
  runningProcess,
  stopProcess,
  writeProcessRecord,
  type ProcessRecord,
} from "./process-record.ts";
import { progress, waitFor } from "./progress.ts";
import { run } from "./run.ts";

const recordFile = path.join(localDir, "operator.json");
export const operatorLog = path.join(localDir, "operator.log");
export const operatorKubeconfig = path.join(localDir, "operator.kubeconfig");
export const operatorTokenFile = path.join(localDir, "operator.token");
/** Token lifetime: short, because the launcher renews it (every third of it). */
export const tokenSeconds = 3 * 3600;

export interface OperatorIdentity {
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Namespaces the local operator watches; empty for all. */
  readonly watchNamespaces: readonly string[];
  /**
   * Every other flag the stack's MyAppOperator says its external operator runs with (its `externalOperatorFlags`):
   * policy, chart limits, webhooks, leader election. `npm start`'s operator is started with exactly these.
   */
  readonly flags?: readonly string[];
  /** The admission webhook flags the stack's webhook configurations expect (`--webhook-*`); none without them. */
  readonly webhookFlags?: readonly string[];
  /**
   * The stack's Lease (`--leader-elect*`, the id its RBAC grants an external operator): `npm start`'s operator and
   * any `npm run operator` beside it elect one leader, and the other waits, rather than both reconciling.
   */
  readonly leaderElectionFlags?: readonly string[];
}

/**
 * The port of this checkout's dev-stack webhooks: one of 20000–29999 (below Linux's ephemeral ports, where kwokctl
 * and every client connection take theirs), chosen by the checkout's path, so two checkouts' `npm start` on one
 * machine do not meet on one port (with a fixed 9443, the second's operator failed to listen and its `pulumi up`
 * waited on the first's webhook).
 */
export function checkoutWebhookPort(checkout: string): number {
  return 20_000 + (createHash("sha256").update(checkout).digest().readUInt32BE(0) % 10_000);
}

/**
 * Where the dev stack's external operator serves the admission webhooks (stacks/index.ts points the webhook
 * configurations here; the operator `npm start` launches listens here).
 */
export const localWebhookUrl = `https://127.0.0.1:${checkoutWebhookPort(repoRoot)}`;

export interface OperatorRecord extends ProcessRecord {
  readonly metricsPort: number;
  readonly probePort: number;
  readonly cluster: ClusterIdentity;
  /** The namespaces and flags it was started with (see OperatorIdentity), to tell when the stack's have changed. */
  readonly started?: { readonly watchNamespaces: readonly string[]; readonly flags: readonly string[] };
}

/**
 * The dev stack's operator (stacks/: MyAppOperator "myapp-operator"). `stackFlags`: the stack's `operatorFlags`
 * output ({@link devStackFlags}), what its last `pulumi up` installed; without them (no stack yet), what
 * stacks/index.ts declares unchanged: the app namespace `default` and the webhooks on this machine.
 */
export function devStackOperator(stackFlags?: readonly string[]): OperatorIdentity {
  const settings = resolveSettings("myapp-operator", {
    operatorPlacement: "external",
    watchNamespaces: ["default"],
    webhooks: { url: localWebhookUrl, defaults: devStackWebhookDefaults() },
  });
  const external = stackFlags ?? ((settings.ok && externalOperatorFlags(settings.settings)) || []);
  const namespaces = external.find((flag) => flag.startsWith("--namespaces="))?.slice("--namespaces=".length);
  return {
    namespace: defaultNamespace,
    serviceAccount: settings.ok ? settings.settings.name : "myapp-operator",
    watchNamespaces: namespaces ? namespaces.split(",") : [],
    flags: external.filter((flag) => !flag.startsWith("--namespaces=")),
    webhookFlags: external.filter((flag) => flag.startsWith("--webhook-")),
    leaderElectionFlags: external.filter((flag) => flag.startsWith("--leader-elect")),
  };
}

/**
 * The dev stack's `operatorFlags` output (stacks/index.ts), as its last `pulumi up` left them; undefined when there
 * is no such stack or output (never run, or the operator placed in the cluster). `pulumiEnv`: the environment
 * `npm run pulumi` gives pulumi.
 */
export async function devStackFlags(
  pulumi: string,
  pulumiEnv: NodeJS.ProcessEnv,
): Promise<readonly string[] | undefined> {
  try {
    const { stdout } = await run(pulumi, ["stack", "output", "operatorFlags", "--json", "--stack", "dev"], {
      env: pulumiEnv,
      cwd: repoRoot,
    });
    const flags: unknown = JSON.parse(stdout);
    return Array.isArray(flags) && flags.every((flag) => typeof flag === "string") ? flags : undefined;
  } catch {
    return undefined;
  }
}

/** What differs between the flags an operator was started with and `identity`'s, in words; undefined when none. */
export function flagChanges(started: OperatorRecord["started"], identity: OperatorIdentity): string | undefined {
  const before = [...(started?.flags ?? []), `--namespaces=${(started?.watchNamespaces ?? []).join(",")}`];
  const after = [...(identity.flags ?? []), `--namespaces=${identity.watchNamespaces.join(",")}`];
  const added = after.filter((flag) => !before.includes(flag));
  const removed = before.filter((flag) => !after.includes(flag));
  if (added.length === 0 && removed.length === 0) return undefined;
  const said = [
    added.length > 0 ? `added ${added.join(" ")}` : "",
    removed.length > 0 ? `removed ${removed.join(" ")}` : "",
  ];
  return said.filter(Boolean).join("; ");
}

/**
 * The dev stack's `webhookDefaults` (stacks/Pulumi.dev.yaml, where `pulumi config set` writes it): the local
 * operator must inject its CA into exactly the webhook configurations the stack installs.
 */
function devStackWebhookDefaults(): NamespaceDefaults {
  try {
    const stack = parse(readFileSync(path.join(repoRoot, "stacks/Pulumi.dev.yaml"), "utf8")) as {
      config?: Record<string, unknown>;
    };
    const configured = stack.config?.["myapp-platform:webhookDefaults"];
    return configured === "policy" || configured === "webhook" ? configured : "auto";
  } catch {
    return "auto";
  }
}

export function operatorRecord(): OperatorRecord | undefined {
  return runningProcess<OperatorRecord>(recordFile);
}

export function operatorPid(): number | undefined {
  return operatorRecord()?.pid;
}

function writeAtomically(file: string, content: string): void {
  const tmp = `${file}.tmp.${process.pid}`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * Mints a token for the ServiceAccount with the admin kubeconfig and writes operator.token and operator.kubeconfig
 * (pointing at the token file) for the running default cluster. Fails while the ServiceAccount does not exist.
 */
export async function writeOperatorCredentials(identity: OperatorIdentity): Promise<void> {
  const admin = new KubeClient(loadKubeConfig({ path: kubeconfigPath }));
  const withToken = parse(
    await serviceAccountKubeconfig(admin, identity.namespace, identity.serviceAccount, {
      expirationSeconds: tokenSeconds,
    }),
  ) as { users: { user: { token?: string; tokenFile?: string; "token-file"?: string } }[] };
  const user = withToken.users[0]!.user;
  writeAtomically(operatorTokenFile, user.token!);
  // kubectl and client-go read `tokenFile`; @kubernetes/client-node's loader reads `token-file`: both name it.
  delete user.token;
  user.tokenFile = operatorTokenFile;
  user["token-file"] = operatorTokenFile;
  writeAtomically(operatorKubeconfig, stringify(withToken));
}

/** Renews operator.token every third of its lifetime while the process lives; returns a stop function. */
export function renewOperatorToken(identity: OperatorIdentity, onError: (error: unknown) => void): () => void {
  const timer = setInterval(() => void writeOperatorCredentials(identity).catch(onError), (tokenSeconds * 1000) / 3);
  timer.unref();
  return () => clearInterval(timer);
}

function logTail(): string {
  return logFileTail(operatorLog).join("\n");
}

/**
 * Lists MyAppInstances with the credentials in operator.kubeconfig (the token the local operator reads), in a
 * namespace it watches (the dev stack grants it those alone): what it needs to do anything at all.
 */
async function listAsOperator(identity: OperatorIdentity): Promise<void> {
  const asOperator = new KubeClient(loadKubeConfig({ path: operatorKubeconfig }));
  const [namespace] = identity.watchNamespaces;
  try {
    await asOperator.list("example.com/v1", "MyAppInstance", { limit: 1, ...(namespace ? { namespace } : {}) });
  } finally {
    await asOperator.close();
  }
}

/**
 * Why a running operator of this cluster must be restarted rather than kept, in words; undefined to keep it.
 * `changes`: its flags against the stack's ({@link flagChanges}); `refused`: why its own token could not list
 * MyAppInstances, if it could not. Pure.
 */
export function restartReason(changes: string | undefined, refused: string | undefined): string | undefined {
  if (changes !== undefined) return `the dev stack's platform changed (${changes})`;
  if (refused !== undefined) return `its ServiceAccount's token cannot list MyAppInstances (${refused})`;
  return undefined;
}

/**
 * Waits until the ServiceAccount exists and its token may list MyAppInstances (CRD served, RBAC bound), then
 * starts the operator on free ports and returns once it answers /healthz. An operator already running for this
 * cluster with these flags is kept while its token still works; one started with other flags (the stack's platform
 * changed) or whose token is refused is restarted, and one left from another cluster is stopped first.
 */
export async function startOperatorWhenReady(identity: OperatorIdentity, timeoutMs = 600_000): Promise<OperatorRecord> {
  const step = progress("operator");
  const cluster = await clusterIdentity(new KubeClient(loadKubeConfig({ path: kubeconfigPath })));
  const running = operatorRecord();
  if (running && sameCluster(recordedIdentity(running.cluster), cluster)) {
    const changes = flagChanges(running.started, identity);
    // Its credentials are checked here, where it would be reused, rather than only stopped by the command that
    // took them (`npm run pulumi -- destroy` does stop it too): a destroy by pulumi itself, a deleted
    // ServiceAccount or RoleBinding all leave an operator whose token is refused (a recreated ServiceAccount has
    // another uid, which the token names), which loses its Lease and exits while `pulumi up` waits on it.
    const refused =
      changes === undefined
        ? await listAsOperator(identity).then(
            () => undefined,
            (error: unknown) => (error instanceof Error ? error.message : String(error)),
          )
        : undefined;
    const reason = restartReason(changes, refused);
    if (reason === undefined) return running;
    step(`${reason}: restarting the operator (pid ${running.pid})`);
    await stopOperator();
  } else if (running) {
    step(`stopping the operator left from an earlier cluster (pid ${running.pid})`);
    await stopOperator();
  }
  step(`waiting for ServiceAccount ${identity.namespace}/${identity.serviceAccount} and its RBAC`);
  await waitFor(
    "the operator ServiceAccount's token to be allowed to list myappinstances",
    async () => {
      await writeOperatorCredentials(identity);
      await listAsOperator(identity);
      return true;
    },
    { timeoutMs, intervalMs: 1000 },
  );
  const [metricsPort, probePort] = [await freePort(), await freePort()];
  // Detached, logging to .local/operator.log: it outlives `npm start`, and `npm run down` stops it by its record.
  const operator = launchOperator({
    script: "tools/operator.ts",
    cwd: repoRoot,
    namespaces: identity.watchNamespaces,
    metricsPort,
    probePort,
    args: [...(identity.flags ?? [])],
    env: {
      ...process.env,
      KUBECONFIG: operatorKubeconfig,
      MYAPP_LOCAL_OPERATOR_RENEW: `${identity.namespace}/${identity.serviceAccount}`,
    },
    logFile: operatorLog,
  });
  const started = { watchNamespaces: identity.watchNamespaces, flags: identity.flags ?? [] };
  const record = writeProcessRecord(recordFile, operator.pid, {
    metricsPort,
    probePort,
    cluster,
    started,
  }) as OperatorRecord;
  await waitForProbe(operator, `http://127.0.0.1:${probePort}`, "/healthz", {
    timeoutMs: 120_000,
    intervalMs: 500,
  }).catch(async (error: unknown) => {
    await stopOperator();
    throw error;
  });
  step(
    `started (pid ${operator.pid}, metrics 127.0.0.1:${metricsPort}) with the ServiceAccount's token; logs: ${path.relative(repoRoot, operatorLog)}`,
  );
  return { ...record, metricsPort, probePort, cluster, started };
}

/**
 * Calls `onExit` (once) if the local operator stops running, so nobody waits on instances it will never
 * reconcile. Returns a function that stops watching.
 */
export function watchOperator(record: ProcessRecord, onExit: (logTail: string) => void): () => void {
  const timer = setInterval(() => {
    if (isRunning(record)) return;
    clearInterval(timer);
    onExit(logTail());
  }, 2000);
  timer.unref();
  return () => clearInterval(timer);
}

/** SIGTERM (the operator drains and exits), SIGKILL after 30 s; then its files go with it. */
export async function stopOperator(): Promise<void> {
  const record = operatorRecord();
  if (record) await stopProcess(record, 30_000);
  // A bare pid file from before process records: trusted only if that pid is this checkout's operator.
  const legacy = path.join(localDir, "operator.pid");
  const pid = Number(existsSync(legacy) ? readFileSync(legacy, "utf8") : 0);
  if (pid > 0 && processCommandLine(pid).includes("tools/operator.ts") && processCwd(pid) === repoRoot) {
    process.kill(pid, "SIGTERM");
  }
  for (const file of [recordFile, legacy, operatorKubeconfig, operatorTokenFile]) rmSync(file, { force: true });
}
