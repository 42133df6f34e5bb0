/**
 * The operator process: flags → wiring. Informers feed one controller whose reconcile is operator/reconcile;
 * with --leader-elect only the Lease holder reconciles (standbys keep warm caches and queues).
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { apiVersion, kind } from "../api/index.ts";
import { KubeClient, loadKubeConfig, type KubeObject } from "../kube/index.ts";
import { labelKeys, managedBy } from "./desired/index.ts";
import { parseOptions, usage, UsageRequested, type OperatorOptions } from "./options.ts";
import { chartDeps } from "./chart-wiring.ts";
import { fieldManager, kubePort, reconciler, recordStalled } from "./reconcile/index.ts";
import {
  Controller,
  enqueueObject,
  enqueueOwner,
  Informer,
  informerReadiness,
  KubeLeasePort,
  LeaderElector,
  onTerminationSignal,
  OperatorMetrics,
  shutdownGracefully,
  specOrMetadataChanged,
  startHealthServer,
  WriteCounter,
  type HealthServer,
} from "./runtime/index.ts";

/** The kinds the operator owns; their events are mapped back to the owning instance. */
const ownedKinds = [
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "apps/v1", kind: "StatefulSet" },
  { apiVersion: "v1", kind: "Service" },
] as const;

export async function runOperator(options: OperatorOptions): Promise<void> {
  const logger = pino({ level: options.logLevel, base: { component: "myapp-operator" } });
  const identity = `${hostname()}-${randomBytes(4).toString("hex")}`;
  const metrics = new OperatorMetrics();
  const writes = new WriteCounter((verb, k) => metrics.apiWrite(verb, k));
  const client = new KubeClient(loadKubeConfig(options.kubeconfig ? { path: options.kubeconfig } : {}), {
    onWrite: writes.record,
  });

  const port = kubePort(client, { reportingInstance: identity, logger });
  const deps = { port, logger, chart: chartDeps(client, options) };
  const instances: Informer[] = [];
  const children: Informer[] = [];
  const scopes = options.namespaces.length > 0 ? options.namespaces : [undefined];
  for (const namespace of scopes) {
    const scope = namespace ? { namespace } : {};
    instances.push(new Informer({ client, apiVersion, kind, logger, ...scope }));
    for (const owned of ownedKinds) {
      // Only our children: the label every desired object carries keeps unrelated workloads out of memory.
      const labelSelector = `${labelKeys.managedBy}=${managedBy}`;
      children.push(new Informer({ client, ...owned, labelSelector, logger, ...scope }));
    }
  }
  const controller = new Controller({
    name: "myappinstance",
    reconcile: reconciler(deps),
    onStalled: (key, error) => recordStalled(key, error, deps),
    logger,
    metrics,
    writes,
    concurrency: options.concurrency,
    maxConsecutiveFailures: options.maxConsecutiveFailures,
    resyncPeriodMs: options.resyncPeriodMs,
    listKeys: () => instances.flatMap((i) => [...i.store.keys()]),
  });
  const enqueue = (key: string) => controller.enqueue(key);
  for (const informer of instances) informer.addHandlers(enqueueObject<KubeObject>(enqueue, specOrMetadataChanged));
  for (const informer of children) informer.addHandlers(enqueueOwner({ apiVersion, kind }, enqueue));

  const elector = options.leaderElect
    ? new LeaderElector({
        lease: new KubeLeasePort(client, options.leaderElectionNamespace, options.leaderElectionId, fieldManager),
        identity,
        name: options.leaderElectionId,
        logger,
        metrics,
        onStartedLeading: () => controller.start(),
        onStoppedLeading: (reason) => {
          if (reason === "lost") {
            // Like controller-runtime: a process that lost its lease may still have reconciles running; exit and
            // let the restart rejoin as a standby.
            logger.error("leader election lost; exiting");
            process.exit(1);
          }
        },
      })
    : undefined;

  const readiness = [...instances, ...children].map((informer) => informerReadiness(informer));
  const servers: HealthServer[] = [];
  const probe = await startHealthServer({ ...options.probeAddress, registry: metrics.registry, readiness, logger });
  servers.push(probe);
  const sameAddress =
    options.metricsAddress.port === options.probeAddress.port &&
    options.metricsAddress.host === options.probeAddress.host;
  const metricsServer = sameAddress
    ? probe
    : await startHealthServer({ ...options.metricsAddress, registry: metrics.registry, readiness, logger });
  if (metricsServer !== probe) servers.push(metricsServer);
  logger.info(
    {
      identity,
      namespaces: options.namespaces,
      leaderElect: options.leaderElect,
      metricsPort: metricsServer.port,
      probePort: probe.port,
    },
    "operator starting",
  );

  onTerminationSignal(async () => {
    const { drained } = await shutdownGracefully(
      {
        informers: [...instances, ...children],
        controllers: [controller],
        ...(elector ? { elector } : {}),
        server: { close: () => Promise.all(servers.map((s) => s.close())).then(() => undefined) },
      },
      { logger },
    );
    logger.info({ drained }, "operator stopped");
    process.exit(0);
  });

  for (const informer of [...instances, ...children]) informer.start();
  if (elector) elector.start();
  else controller.start();
}

if (import.meta.main) {
  try {
    await runOperator(parseOptions(process.argv.slice(2), process.env));
  } catch (error) {
    if (error instanceof UsageRequested) {
      console.log(usage);
      process.exit(0);
    }
    console.error(`myapp-operator: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    process.exit(2);
  }
}
