/**
 * The controller runtime: informers, a keyed work queue with backoff, the controller loop, leader election,
 * metrics/health endpoints and graceful shutdown. operator/main.ts wires them; the shape (see
 * test/integration/runtime-leader-election.test.ts for a runnable version):
 *
 * ```ts
 * const metrics = new OperatorMetrics();
 * const writes = new WriteCounter((verb, kind) => metrics.apiWrite(verb, kind));
 * const client = new KubeClient(loadKubeConfig(), { onWrite: writes.record });
 * const instances = new Informer({ client, apiVersion, kind, logger });
 * const deployments = new Informer({ client, apiVersion: "apps/v1", kind: "Deployment", logger });
 * const controller = new Controller({ name: "myappinstance", reconcile, onStalled, logger, metrics, writes,
 *   listKeys: () => instances.store.keys() });
 * instances.addHandlers(enqueueObject((key) => controller.enqueue(key), specOrMetadataChanged));
 * deployments.addHandlers(enqueueOwner({ apiVersion, kind }, (key) => controller.enqueue(key)));
 * const elector = new LeaderElector({ lease: new KubeLeasePort(client, ns, "myapp-operator", "myapp-operator"),
 *   identity, name: "myapp-operator", logger, metrics,
 *   onStartedLeading: () => controller.start(),
 *   onStoppedLeading: (reason) => { if (reason === "lost") process.exit(1); } });
 * const server = await startHealthServer({ port: 8080, registry: metrics.registry, logger,
 *   readiness: [instances, deployments].map((i) => informerReadiness(i)) });
 * onTerminationSignal(async () => {
 *   await shutdownGracefully({ informers: [instances, deployments], controllers: [controller], elector, server },
 *     { logger });
 *   process.exit(0);
 * });
 * instances.start(); deployments.start(); elector.start();
 * ```
 */
export * from "../../kube/clock.ts";
export * from "./controller.ts";
export * from "./errors.ts";
export * from "./event-handlers.ts";
export * from "./health-server.ts";
export * from "./informer.ts";
export * from "./leader-election.ts";
export * from "./metrics.ts";
export * from "./metrics-auth.ts";
export * from "./object-key.ts";
export * from "./owner-mapping.ts";
export * from "./rate-limiter.ts";
export * from "./shutdown.ts";
export * from "./store.ts";
export * from "./workqueue.ts";
export * from "./write-counter.ts";
