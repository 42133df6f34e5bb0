/**
 * The Manager, as controller-runtime's: the one function that assembles an operator process from its generic parts,
 * so operator/main.ts, the tests and the benchmarks run the same wiring. It builds the cluster connection (one
 * connection pool), an informer per watched kind and namespace whose stores form the cached reader, the
 * event recorder, one controller (primary kind `for`, owned kinds `owns` mapped to their controlling owner),
 * leader election, the health and metrics servers, and the ordered shutdown. The reconciler is the caller's: it
 * gets the connection, the cache and the recorder, and returns the reconcile function.
 */
import type { Logger } from "pino";
import { KubeClient, loadKubeConfig, type KubeConfigSource, type KubeObject } from "../../kube/index.ts";
import { formatObjectKey, objectKeyOf, type ObjectKey } from "../../kube/object-key.ts";
import { InformerCache } from "./cache.ts";
import { Controller, type Reconciler, type StalledHandler } from "./controller.ts";
import { EventRecorder } from "./event-recorder.ts";
import { enqueueObject, enqueueOwner, specOrMetadataChanged } from "./event-handlers.ts";
import { informerReadiness, startHealthServer, type HealthServer, type ReadinessCheck } from "./health-server.ts";
import { bearerTokenAuthorizer, kubeAccessReviews } from "./metrics-auth.ts";
import { Informer, reconnectBackoffCapMs, type NamespaceLimit } from "./informer.ts";
import { KubeLeaseClient, LeaderElector, leadershipLostMessage } from "./leader-election.ts";
import { OperatorMetrics } from "./metrics.ts";
import { shutdownGracefully } from "./shutdown.ts";
import type { Priority } from "./workqueue.ts";

/** A kind the manager watches. */
export interface WatchedKind {
  readonly apiVersion: string;
  readonly kind: string;
  /** Only objects matching this label selector are watched (and cached). */
  readonly labelSelector?: string;
  /**
   * What the cache keeps of each object (cached-identity.ts for an owned kind's objects no primary controls).
   * @default stripUnread
   */
  readonly transform?: (object: KubeObject) => KubeObject;
  /** What one namespace's objects no owner accounts for may cost the cache (informer.ts). @default unbounded */
  readonly namespaceLimit?: NamespaceLimit;
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

export interface ManagerOptions {
  /** Names the controller in metrics and logs. */
  readonly name: string;
  readonly logger: Logger;
  /** Unique per process: the Lease holder identity and the events' reportingInstance. */
  readonly identity: string;
  /** Where the credentials come from. @default loadKubeConfig() (KUBECONFIG, ~/.kube/config, else in-cluster) */
  readonly kubeconfig?: KubeConfigSource;
  /** @default 60_000 */
  readonly requestTimeoutMs?: number;
  /** The primary kind: its events enqueue its own key. */
  readonly for: WatchedKind;
  /** Owned kinds: their events enqueue the key of their controlling `for` object. */
  readonly owns?: readonly WatchedKind[];
  /** Kinds only cached for the reconciler to read (their events enqueue nothing). */
  readonly watches?: readonly WatchedKind[];
  /** Primary updates that should not trigger a reconcile are filtered here. @default specOrMetadataChanged */
  readonly updateFilter?: (oldObject: KubeObject, newObject: KubeObject) => boolean;
  /**
   * The priority of a primary's look when the workers start (after a start or a leader change): "normal" for one
   * whose change is still to be carried out, so it goes before the look at everything. @default always "low"
   */
  readonly startPriority?: (object: KubeObject) => Priority;
  /**
   * Label keys the cache indexes per namespace (client-go's indexers): a reconcile's list by one of them reads
   * only the matching objects instead of scanning every cached object of the kind.
   */
  readonly indexedLabels?: readonly string[];
  /** Watched namespaces; empty or undefined: the whole cluster. */
  readonly namespaces?: readonly string[];
  readonly concurrency?: number;
  readonly maxConsecutiveFailures?: number;
  /** After maxConsecutiveFailures fast retries, a failing key is retried this often (with jitter). */
  readonly slowRetryIntervalMs?: number;
  readonly resyncPeriodMs?: number;
  /** Only the holder of this Lease reconciles; standbys keep warm caches. Off when undefined. */
  readonly leaderElection?: { readonly namespace: string; readonly id: string; readonly fieldManager: string };
  /** /healthz and /readyz (and /metrics). */
  readonly probeAddress: Address;
  /** /metrics; the probe server serves it too when the addresses are equal. */
  readonly metricsAddress: Address;
  /**
   * /metrics only for bearer tokens that a TokenReview authenticates and a SubjectAccessReview allows to
   * `get /metrics` (controller-runtime's secure metrics). @default false
   */
  readonly secureMetrics?: boolean;
  /** Serve /metrics over HTTPS with this certificate. */
  readonly metricsTls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** events.k8s.io reportingController, e.g. `example.com/my-operator`. */
  readonly reportingController: string;
  /** The field manager of the runtime's own writes (Lease, Events). */
  readonly fieldManager: string;
  /** How long shutdown waits for running reconciles. @default 20_000 */
  readonly drainTimeoutMs?: number;
  /** Called when leadership is lost. @default exits the process with status 1, as controller-runtime does */
  readonly onLeadershipLost?: () => void;
  /** More /readyz lines after the informers' (a server the process runs beside the controller, say). */
  readonly readinessChecks?: readonly ReadinessCheck[];
}

/** What a reconciler is built from. */
export interface ReconcilerContext {
  readonly client: KubeClient;
  /** The informers' stores: read what the manager watches from here. */
  readonly cache: InformerCache;
  readonly events: EventRecorder;
  readonly logger: Logger;
  /**
   * Asks for a reconcile of a key now, once work the reconciler left running in the background has settled; a
   * later look the key asked for meanwhile is cancelled (Controller.wake).
   */
  readonly wake: (key: ObjectKey) => void;
  /** Whether the controller has work waiting or running (Controller.hasWork): background work can give way. */
  readonly busy: () => boolean;
}

export interface ReconcilerSetup {
  readonly reconcile: Reconciler;
  readonly onStalled?: StalledHandler;
}

export interface Manager {
  readonly client: KubeClient;
  readonly cache: InformerCache;
  readonly metrics: OperatorMetrics;
  readonly controller: Controller;
  readonly informers: readonly Informer[];
  readonly probePort: number;
  readonly metricsPort: number;
  /** Stops intake, drains reconciles, releases the lease, closes the servers and the connection pool. */
  stop(): Promise<{ drained: boolean }>;
}

/** Builds and starts the operator process's runtime around the reconciler `setup` returns. */
export async function startManager(
  options: ManagerOptions,
  setup: (context: ReconcilerContext) => ReconcilerSetup,
): Promise<Manager> {
  const { logger } = options;
  const metrics = new OperatorMetrics();
  const client = new KubeClient(loadKubeConfig(options.kubeconfig ?? {}), {
    // Every write the process sends (myapp_operator_api_writes_total); each reconcile counts its own for its log line.
    onWrite: (verb, kind) => metrics.processApiWrite(verb, kind),
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
  });

  const primaries: Informer[] = [];
  const owned: Informer[] = [];
  const watched: Informer[] = [];
  const scopes = options.namespaces && options.namespaces.length > 0 ? options.namespaces : [undefined];
  const maxBackoffMs = reconnectBackoffCapMs(
    scopes.length * (1 + (options.owns?.length ?? 0) + (options.watches?.length ?? 0)),
  );
  const informer = (kind: WatchedKind, namespace: string | undefined) =>
    new Informer({
      client,
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      logger,
      maxBackoffMs,
      ...(kind.labelSelector ? { labelSelector: kind.labelSelector } : {}),
      ...(kind.transform ? { transform: kind.transform } : {}),
      ...(kind.namespaceLimit ? { namespaceLimit: kind.namespaceLimit } : {}),
      ...(namespace ? { namespace } : {}),
      ...(options.indexedLabels ? { indexedLabels: options.indexedLabels } : {}),
    });
  for (const namespace of scopes) {
    primaries.push(informer(options.for, namespace));
    for (const kind of options.owns ?? []) owned.push(informer(kind, namespace));
    for (const kind of options.watches ?? []) watched.push(informer(kind, namespace));
  }
  const informers = [...primaries, ...owned, ...watched];
  const cache = new InformerCache(informers);
  metrics.uncachedNamespaces(() => informers.map((i) => ({ kind: i.kind, namespaces: i.uncachedNamespaces().length })));
  const events = new EventRecorder({
    sink: client,
    reportingController: options.reportingController,
    reportingInstance: options.identity,
    fieldManager: options.fieldManager,
    logger,
  });

  // At debug level every wake-up is logged with what caused it (an event's kind, or "background"), so a reconcile
  // count can be traced to its causes (the hostile-tenants chaos counts them per instance).
  const debug = logger.isLevelEnabled("debug");
  // Until its workers start (a standby, or caches still listing) the controller keeps no keys: it looks at every
  // object when they start. A standby that kept them would hold each key it was ever told of, deleted instances'
  // too, for as long as it stands by (controller-runtime starts its event sources on the leader only, alike).
  let accepting = false;
  const enqueueFrom =
    (source: string, wake = false) =>
    (key: ObjectKey, priority: Priority = "normal") => {
      if (!accepting) return;
      if (debug) {
        logger.debug({ key: formatObjectKey(key), source, priority, queued: controller.isQueued(key) }, "enqueued");
      }
      if (wake) controller.wake(key);
      else controller.enqueue(key, priority);
    };
  // The controller exists by the time anything the reconciler started can settle: its first reconcile runs later.
  const reconciler = setup({
    client,
    cache,
    events,
    logger,
    wake: enqueueFrom("background", true),
    busy: () => controller.hasWork(),
  });
  const controller: Controller = new Controller({
    name: options.name,
    reconcile: reconciler.reconcile,
    ...(reconciler.onStalled ? { onStalled: reconciler.onStalled } : {}),
    logger,
    metrics,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.maxConsecutiveFailures !== undefined ? { maxConsecutiveFailures: options.maxConsecutiveFailures } : {}),
    ...(options.slowRetryIntervalMs !== undefined ? { slowRetryIntervalMs: options.slowRetryIntervalMs } : {}),
    ...(options.resyncPeriodMs !== undefined ? { resyncPeriodMs: options.resyncPeriodMs } : {}),
    listKeys: () => primaries.flatMap((i) => i.store.list().map((object) => objectKeyOf(object.metadata))),
    // The apiserver's own readiness (etcd included); every authenticated client may read it
    // (system:public-info-viewer), so the operator's role needs nothing more. Where it is refused the probe never
    // reports ready, and keys wait out their backoff as without recovery.
    outageRecovery: {
      probe: () => client.raw("/readyz").then(() => true),
      // Bounded by the workers on top: a burst of 2 per worker, then 5 per worker a second.
      burst: 2 * (options.concurrency ?? 1),
      perSecond: 5 * (options.concurrency ?? 1),
    },
  });
  const filter = options.updateFilter ?? specOrMetadataChanged;
  for (const i of primaries) i.addHandlers(enqueueObject<KubeObject>(enqueueFrom(i.kind), filter));
  const owner = { apiVersion: options.for.apiVersion, kind: options.for.kind };
  for (const i of owned) i.addHandlers(enqueueOwner(owner, enqueueFrom(i.kind)));

  // As controller-runtime: workers start once every cache has its first list, so no reconcile reads a half-empty
  // cache (and takes a missing child for one to create).
  const stopped = new AbortController();
  const startWhenSynced = async () => {
    await Promise.all(informers.map((i) => i.waitForSync(stopped.signal)));
    if (stopped.signal.aborted) return;
    logger.info({ informers: informers.length }, "caches synced, starting workers");
    accepting = true;
    const look = enqueueFrom("start");
    const priority = options.startPriority ?? (() => "low");
    for (const i of primaries) {
      for (const object of i.store.list()) {
        // One object that cannot be queued (a bug in a priority) must not keep the workers from starting.
        try {
          look(objectKeyOf(object.metadata), priority(object));
        } catch (error) {
          logger.error(
            { err: error, namespace: object.metadata.namespace, name: object.metadata.name },
            "could not queue an object at start; its next event queues it",
          );
        }
      }
    }
    controller.start();
  };

  const election = options.leaderElection;
  const elector = election
    ? new LeaderElector({
        lease: new KubeLeaseClient(client, election.namespace, election.id, election.fieldManager),
        identity: options.identity,
        name: election.id,
        logger,
        metrics,
        onStartedLeading: () => void startWhenSynced(),
        onStoppedLeading: (reason, loss) => {
          if (reason !== "lost") return;
          // A process that lost its lease may still have reconciles running: exit, and rejoin as a standby. The
          // message says why when the Lease or its namespace was deleted, and that the operator must be started again.
          logger.error(
            leadershipLostMessage({ namespace: election.namespace, name: election.id }, loss ?? "not-renewed"),
          );
          (options.onLeadershipLost ?? (() => process.exit(1)))();
        },
      })
    : undefined;

  // Informers of one kind and namespace (owned and cached with different selectors, say) get "#2", "#3": every
  // informer is its own /readyz line.
  const uses = new Map<string, number>();
  const readiness = informers.map((i) => {
    const check = informerReadiness(i);
    const n = (uses.get(check.name) ?? 0) + 1;
    uses.set(check.name, n);
    return n === 1 ? check : { name: `${check.name}#${n}`, check: () => check.check() };
  });
  readiness.push(...(options.readinessChecks ?? []));
  const servers: HealthServer[] = [];
  // Port 0 asks for a free port: two of them are two addresses, never one server.
  const sameAddress =
    options.metricsAddress.port !== 0 &&
    options.metricsAddress.port === options.probeAddress.port &&
    options.metricsAddress.host === options.probeAddress.host;
  // The reviews go through a client of their own: they are not writes of the operator's objects.
  const reviewClient = options.secureMetrics ? new KubeClient(client.config) : undefined;
  const authorizeMetrics = reviewClient ? bearerTokenAuthorizer(kubeAccessReviews(reviewClient)) : undefined;
  if (authorizeMetrics && !options.metricsTls) {
    logger.warn("secure /metrics without a certificate: bearer tokens reach /metrics unencrypted");
  }
  const served = { registry: metrics.registry, readiness, logger, ...(authorizeMetrics ? { authorizeMetrics } : {}) };
  // A port in use is named by the operator's flag for it (options.ts; controller-runtime's names), one line.
  let probe: HealthServer;
  try {
    probe = await startHealthServer({
      ...options.probeAddress,
      ...served,
      serves: { metrics: sameAddress },
      flag: "--health-probe-bind-address",
    });
  } catch (error) {
    await reviewClient?.close();
    throw error;
  }
  servers.push(probe);
  let metricsServer = probe;
  if (!sameAddress) {
    try {
      metricsServer = await startHealthServer({
        ...options.metricsAddress,
        ...served,
        serves: { probes: false },
        flag: "--metrics-bind-address",
        ...(options.metricsTls ? { tls: options.metricsTls } : {}),
      });
    } catch (error) {
      // The start failed: what it already opened closes again, so a caller that goes on does not keep the port.
      await probe.close();
      await reviewClient?.close();
      throw error;
    }
    servers.push(metricsServer);
  }

  for (const i of informers) i.start();
  if (elector) elector.start();
  else void startWhenSynced();

  let stopping: Promise<{ drained: boolean }> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      stopped.abort();
      const result = await shutdownGracefully(
        {
          informers,
          controllers: [controller],
          ...(elector ? { elector } : {}),
          server: { close: () => Promise.all(servers.map((s) => s.close())).then(() => undefined) },
        },
        { logger, ...(options.drainTimeoutMs !== undefined ? { drainTimeoutMs: options.drainTimeoutMs } : {}) },
      );
      events.stop();
      await events.flush();
      await client.close();
      await reviewClient?.close();
      return result;
    })());
  return {
    client,
    cache,
    metrics,
    controller,
    informers,
    probePort: probe.port,
    metricsPort: metricsServer.port,
    stop,
  };
}
