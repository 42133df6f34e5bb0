#!/usr/bin/env node
/**
 * The operator process: flags → the runtime's Manager around operator/reconcile. Informers feed one controller;
 * reconcile reads from their stores; with --leader-elect only the Lease holder reconciles (standbys keep warm
 * caches).
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { pino, type Logger } from "pino";
import { apiVersion, kind } from "../api/index.ts";
import { parseOptions, usage, UsageRequested, type OperatorOptions } from "./options.ts";
import { chartDeps } from "./chart-wiring.ts";
import { fieldManager, kubePort, reconciler, recordStalled, reportingController } from "./reconcile/index.ts";
import { onTerminationSignal, startManager, type Manager } from "./runtime/index.ts";
import { cachedKinds, indexedLabels, watchedOwnedKinds } from "./watched-kinds.ts";

export async function runOperator(options: OperatorOptions, logger: Logger): Promise<Manager> {
  const identity = `${hostname()}-${randomBytes(4).toString("hex")}`;
  const manager = await startManager(
    {
      name: "myappinstance",
      logger,
      identity,
      ...(options.kubeconfig ? { kubeconfig: { path: options.kubeconfig } } : {}),
      for: { apiVersion, kind },
      owns: watchedOwnedKinds(options.chartKinds),
      watches: cachedKinds,
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
      ...(options.metricsCertDir ? { metricsTls: readMetricsTls(options.metricsCertDir) } : {}),
      reportingController,
      fieldManager,
    },
    ({ client, cache, events }) => {
      const deps = { port: kubePort(client, { cache, events }), logger, chart: chartDeps(client, options) };
      return {
        reconcile: reconciler(deps),
        onStalled: (key, error, _failures, retryIntervalMs) => recordStalled(key, error, deps, retryIntervalMs),
      };
    },
  );
  logger.info(
    {
      identity,
      namespaces: options.namespaces,
      leaderElect: options.leaderElect,
      metricsPort: manager.metricsPort,
      probePort: manager.probePort,
    },
    "operator starting",
  );
  return manager;
}

/** The serving certificate of an HTTPS /metrics: tls.crt and tls.key, as a Secret mounted by cert-manager. */
function readMetricsTls(dir: string): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(path.join(dir, "tls.crt")), key: readFileSync(path.join(dir, "tls.key")) };
}

/**
 * The command line: `--help` prints the usage (exit 0); a bad flag prints the error and the usage (exit 2); a
 * failure to start is logged as a structured error (exit 1), without the usage.
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  let options: OperatorOptions;
  try {
    options = parseOptions(argv, env);
  } catch (error) {
    if (error instanceof UsageRequested) {
      console.log(usage);
      process.exit(0);
    }
    console.error(`myapp-operator: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    process.exit(2);
  }
  const logger = pino({ level: options.logLevel, base: { component: "myapp-operator" } });
  try {
    const manager = await runOperator(options, logger);
    onTerminationSignal(async () => {
      const { drained } = await manager.stop();
      logger.info({ drained }, "operator stopped");
      process.exit(0);
    });
  } catch (error) {
    logger.fatal({ err: error }, "operator failed to start");
    process.exit(1);
  }
}

if (import.meta.main) await main(process.argv.slice(2), process.env);
