#!/usr/bin/env node
/**
 * The operator process: flags → the runtime's Manager around operator/reconcile. Informers feed one controller;
 * reconcile reads from their stores; with --leader-elect only the Lease holder reconciles (standbys keep warm
 * caches).
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { getHeapStatistics } from "node:v8";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { pino, type Logger } from "pino";
import { setTimeout as sleep } from "node:timers/promises";
import { apiVersion, kind, labelValue } from "../api/index.ts";
import { disableProto } from "../chart/proto-guard.ts";
import {
  KubeClient,
  loadKubeConfig,
  realClock,
  TransportError,
  type KubeConfigSource,
  type KubeObject,
} from "../kube/index.ts";
import { boundedLogOptions } from "./log-bounds.ts";
import { logsWritten, stdoutDestination } from "./log-output.ts";
import { parseOptions, usage, UsageRequested, VersionRequested, type OperatorOptions } from "./options.ts";
import { chartDeps } from "./chart-wiring.ts";
import { chartInstanceLabel, RenderedChildren } from "./chart/index.ts";
import { heapBudgets } from "./heap-budgets.ts";
import { fieldManager, clusterClient, reconciler, recordStalled, reportingController } from "./reconcile/index.ts";
import { npmWrappers, onLauncherGone, onTerminationSignal, startManager, type Manager } from "./runtime/index.ts";
import { operatorVersion, versionLine } from "./version.ts";
import { nodeVersionProblem } from "./node-version.ts";
import { instanceAsRead } from "./instance-as-read.ts";
import { cachedKinds, indexedLabels, watchedOwnedKinds } from "./watched-kinds.ts";

export async function runOperator(options: OperatorOptions, logger: Logger): Promise<Manager> {
  const identity = `${hostname()}-${randomBytes(4).toString("hex")}`;
  // Secure metrics are served over HTTPS: with the mounted certificate, else a self-signed one. The certificate
  // code (X.509, ASN.1) is loaded only by an operator that makes certificates (self-signed metrics, webhooks).
  const metricsTls = options.metricsCertDir
    ? readMetricsTls(options.metricsCertDir)
    : options.metricsSecure
      ? await import("./metrics-certificate.ts").then((m) => m.selfSignedMetricsTls(realClock.wallTimeMs()))
      : undefined;
  const { webhook } = options;
  const webhooks = webhook
    ? await import("./admission-wiring.ts").then((m) => new m.AdmissionWebhooks({ ...options, webhook }, logger))
    : undefined;
  // What of a chart's objects the cache keeps whole: the chart step records each render, the transforms ask.
  const budgets = heapBudgets(getHeapStatistics().heap_size_limit, options.renderLimits.outputMiB * 1024 * 1024);
  const renderedChildren = new RenderedChildren(budgets.keptChildren);
  const manager = await startManager(
    {
      name: "myappinstance",
      logger,
      identity,
      kubeconfig: kubeconfigSource(options),
      for: { apiVersion, kind, transform: instanceAsRead(options.renderLimits.valuesKiB) },
      // Changed while no replica led (or since its status was last written): served before the look at the rest.
      startPriority: (object) => (observedGeneration(object) === object.metadata.generation ? "low" : "normal"),
      owns: watchedOwnedKinds(options.chartKinds, renderedChildren, budgets.partialObjectsPerNamespace),
      watches: cachedKinds(budgets.partialObjectsPerNamespace),
      indexedLabels,
      namespaces: options.namespaces,
      concurrency: options.concurrency,
      maxConsecutiveFailures: options.maxConsecutiveFailures,
      slowRetryIntervalMs: options.slowRetryIntervalMs,
      resyncPeriodMs: options.resyncPeriodMs,
      ...(options.leaderElect
        ? {
            leaderElection: {
              namespace: options.leaderElectionNamespace,
              id: options.leaderElectionId,
              fieldManager,
            },
          }
        : {}),
      probeAddress: options.probeAddress,
      metricsAddress: options.metricsAddress,
      ...(options.metricsSecure ? { secureMetrics: true } : {}),
      ...(metricsTls ? { metricsTls } : {}),
      reportingController,
      fieldManager,
      ...(webhooks ? { readinessChecks: [webhooks.readiness] } : {}),
    },
    ({ client, cache, events, wake, busy }) => {
      // What the cache kept whole of a render it may keep whole no longer is kept again as an identity at once.
      renderedChildren.whenWithdrawn(({ namespace, name }) =>
        cache.transformAgain(namespace, chartInstanceLabel, labelValue(name)),
      );
      const chart = chartDeps(client, options, logger, {
        cache,
        wake,
        busy,
        renderedChildren,
        renderCacheBytes: budgets.renderCacheBytes,
      });
      const deps = { cluster: clusterClient(client, { cache, events }), logger, chart };
      return {
        reconcile: reconciler(deps),
        onStalled: (key, error, _failures, retryIntervalMs) => recordStalled(key, error, deps, retryIntervalMs),
      };
    },
  );
  // Every replica serves the webhooks, leader or not: they read the caches standbys keep warm too.
  let webhookPort: number | undefined;
  try {
    webhookPort = await webhooks?.start(manager.client, manager.cache, manager.metrics.webhooks);
  } catch (error) {
    await manager.stop();
    throw error;
  }
  logger.info(
    {
      version: operatorVersion(),
      identity,
      namespaces: options.namespaces,
      leaderElect: options.leaderElect,
      metricsPort: manager.metricsPort,
      metricsScheme: metricsTls ? "https" : "http",
      probePort: manager.probePort,
      ...(webhookPort !== undefined ? { webhookPort } : {}),
    },
    "operator starting",
  );
  if (!webhooks) return manager;
  // The webhooks close first: a replica that stops answers what it already accepted, then lets the others answer.
  // A close that fails must not cost the drain and the lease's release that follow.
  return {
    ...manager,
    stop: async () => {
      try {
        await webhooks.close();
      } catch (error) {
        logger.warn({ err: error }, "the webhook server did not close cleanly; stopping the rest");
      }
      return manager.stop();
    },
  };
}

/** The serving certificate of an HTTPS /metrics: tls.crt and tls.key, as a Secret mounted by cert-manager. */
function readMetricsTls(dir: string): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(path.join(dir, "tls.crt")), key: readFileSync(path.join(dir, "tls.key")) };
}

/** What the command line asks for: run with these options, or print this and exit with this code. */
export type CommandLine =
  { readonly run: OperatorOptions } | { readonly exit: number; readonly stdout?: string; readonly stderr?: string };

/**
 * The command line, without side effects: `--help`/`-h` → the usage (exit 0); `--version` → the version, and the
 * build where it is known (exit 0); a bad flag → one line on stderr naming it (exit 1), as any failure to start.
 */
export function commandLine(argv: readonly string[], env: NodeJS.ProcessEnv): CommandLine {
  try {
    return { run: parseOptions(argv, env) };
  } catch (error) {
    if (error instanceof UsageRequested) return { exit: 0, stdout: usage };
    if (error instanceof VersionRequested) return { exit: 0, stdout: `myapp-operator ${versionLine()}` };
    return { exit: 1, stderr: fatalLine(flagError(error)) };
  }
}

/** Prints what the command line answered instead of running, and exits with its code. */
export function answerAndExit(answer: {
  readonly exit: number;
  readonly stdout?: string;
  readonly stderr?: string;
}): never {
  if (answer.stdout !== undefined) console.log(answer.stdout);
  if (answer.stderr !== undefined) console.error(answer.stderr);
  process.exit(answer.exit);
}

/** Node's parseArgs says "Unknown option '--x'. To specify a positional argument ..."; one clause is enough. */
function flagError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /^Unknown option '([^']+)'/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag) return `unknown flag ${flag} (see myapp-operator --help)`;
  return message;
}

/** `myapp-operator: <message>`, on one line whatever the message holds. */
function fatalLine(message: string): string {
  return `myapp-operator: ${message.replace(/\s*\n\s*/g, " ").trim()}`;
}

/** `--kubeconfig` (one file that must exist), else the KUBECONFIG of the environment main was given (a list). */
function kubeconfigSource(options: Pick<OperatorOptions, "kubeconfig" | "kubeconfigList">): KubeConfigSource {
  if (options.kubeconfig) return { path: options.kubeconfig };
  return options.kubeconfigList ? { list: options.kubeconfigList } : {};
}

/**
 * Fails fast when the cluster cannot be reached at start, as controller-runtime's manager does, instead of
 * retrying its watches forever: one GET /version (public to every authenticated user), retried for `deadlineMs`
 * while no HTTP answer comes, so a brief apiserver restart does not stop a pod. An answer that is an error (401,
 * 403, 5xx) fails at once.
 */
export async function reachCluster(options: OperatorOptions, deadlineMs = 5000): Promise<void> {
  const config = loadKubeConfig(kubeconfigSource(options));
  const server = config.getCurrentCluster()?.server ?? "the cluster";
  const client = new KubeClient(config, { requestTimeoutMs: deadlineMs });
  const giveUpAt = realClock.monotonicMs() + deadlineMs;
  try {
    for (;;) {
      try {
        await client.raw("/version");
        return;
      } catch (error) {
        if (!(error instanceof TransportError) || realClock.monotonicMs() >= giveUpAt) {
          const detail = error instanceof Error ? error.message : String(error);
          const listed = options.kubeconfigList ? ` (KUBECONFIG ${options.kubeconfigList})` : "";
          const source = options.kubeconfig ? ` (kubeconfig ${options.kubeconfig})` : listed;
          throw new Error(`cannot reach the cluster at ${server}${source}: ${detail}`, { cause: error });
        }
        await sleep(500);
      }
    }
  } finally {
    await client.close();
  }
}

/**
 * The operator's command line (see {@link commandLine}). A failure to start (an unreadable kubeconfig, an
 * unreachable cluster, a port in use) is one line on stderr and exit 1; its stack is logged only at
 * --log-level=debug or trace.
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const oldNode = nodeVersionProblem(process.version, process.execPath);
  if (oldNode) {
    console.error(fatalLine(oldNode));
    process.exit(1);
  }
  // Before any tenant data is read: whatever command line started us (the bin, the bundle, tools/operator.ts),
  // Object.prototype.__proto__ throws, as under --disable-proto=throw.
  disableProto();
  const parsed = commandLine(argv, env);
  if ("exit" in parsed) answerAndExit(parsed);
  const options = parsed.run;
  const destination = stdoutDestination();
  const logger = pino(
    { level: options.logLevel, base: { component: "myapp-operator" }, ...boundedLogOptions },
    destination,
  );
  try {
    await reachCluster(options);
    const manager = await runOperator(options, logger);
    let stopWatchingLauncher = () => {};
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        stopWatchingLauncher();
        let exitCode = 0;
        try {
          const { drained } = await manager.stop();
          logger.info({ drained }, "operator stopped");
        } catch (error) {
          logger.error({ err: error }, "operator failed to stop cleanly");
          exitCode = 1;
        }
        if (logger.isLevelEnabled("info")) await logsWritten(destination);
        process.exit(exitCode);
      })());
    onTerminationSignal(stop);
    // Under npx or `npm run`, npm's end is the signal that never reaches us (see launcher-watch.ts). Not a signal
    // of its own: a group SIGTERM ends npm's shell at once, and its end must not cut short the drain it began.
    const wrappers = npmWrappers(env);
    if (wrappers) {
      stopWatchingLauncher = onLauncherGone(wrappers, () => {
        logger.info(wrappers, "the npm process that started the operator is gone: stopping");
        void stop();
      });
    }
  } catch (error) {
    logger.debug({ err: error }, "operator failed to start");
    console.error(fatalLine(error instanceof Error ? error.message : String(error)));
    if (logger.isLevelEnabled("debug")) await logsWritten(destination);
    process.exit(1);
  }
}

// Not `if (import.meta.main)`: before Node 22.18 it is undefined, and the bin would exit 0 without a word instead of
// saying which Node it needs.
if (import.meta.main !== false) await main(process.argv.slice(2), process.env);

/** The generation an instance's status says the operator last carried out (undefined before its first status). */
function observedGeneration(object: KubeObject): number | undefined {
  const status = (object as { status?: { observedGeneration?: unknown } }).status;
  return typeof status?.observedGeneration === "number" ? status.observedGeneration : undefined;
}
