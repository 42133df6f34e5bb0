/**
 * The controller runtime: informers whose stores are the cached reader, a keyed work queue with backoff, the
 * controller loop, an event recorder, leader election, metrics/health endpoints and graceful shutdown, assembled by
 * one function, startManager (manager.ts):
 *
 * ```ts
 * const manager = await startManager(
 *   { name: "myappinstance", logger, identity, for: { apiVersion, kind }, owns: [{ apiVersion: "apps/v1",
 *     kind: "Deployment" }], probeAddress, metricsAddress, reportingController, fieldManager },
 *   ({ client, cache, events }) => ({ reconcile: (key, { writes }) => ... }),
 * );
 * onTerminationSignal(async () => { await manager.stop(); process.exit(0); });
 * ```
 *
 * The runtime is generic: it never imports the domain (api, desired, reconcile); a reconciler uses only its
 * contract (errors.ts, the Reconciler type).
 */
export * from "../../kube/clock.ts";
export * from "./cache.ts";
export * from "./cached-identity.ts";
export * from "./controller.ts";
export * from "./errors.ts";
export * from "./event-handlers.ts";
export * from "./event-recorder.ts";
export * from "./health-server.ts";
export * from "./informer.ts";
export * from "./launcher-watch.ts";
export * from "./leader-election.ts";
export * from "./manager.ts";
export * from "./metrics.ts";
export * from "./metrics-auth.ts";
export * from "./owner-mapping.ts";
export * from "./rate-limiter.ts";
export * from "./shutdown.ts";
export * from "./store.ts";
export * from "./workqueue.ts";
