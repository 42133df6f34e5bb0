/**
 * The operator's Prometheus metrics, under controller-runtime's names so its dashboards and alerts work unchanged,
 * plus one counter of our own: API writes by verb and kind (the cost a converged instance must keep at zero).
 * Everything lives in one private Registry (no global state, no default process metrics).
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Priority, QueueMetrics } from "./workqueue.ts";

/** The `result` label values of controller_runtime_reconcile_total. */
export type ReconcileResultLabel = "success" | "error" | "requeue" | "requeue_after";

/** workqueue_depth's `priority` label: controller-runtime's numbers (its handlers' LowPriority is -100). */
const priorityLabels: Readonly<Record<Priority, string>> = { normal: "0", low: "-100" };

const reconcileResults: readonly ReconcileResultLabel[] = ["success", "error", "requeue", "requeue_after"];

/** controller-runtime's buckets for controller_runtime_reconcile_time_seconds. */
const reconcileTimeBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/**
 * controller_runtime_webhook_latency_seconds: Prometheus's default buckets below 10 s, with finer ones under 5 ms,
 * where an admission answered from memory lands.
 */
const webhookLatencyBuckets = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** client-go's workqueue buckets: 10 ns to 1000 s, ×10 each. */
const workqueueBuckets = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

export class OperatorMetrics {
  readonly registry = new Registry();

  private readonly reconcileTotal = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"] as const,
    registers: [this.registry],
  });
  private readonly reconcileErrors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  private readonly reconcileTime = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"] as const,
    buckets: reconcileTimeBuckets,
    registers: [this.registry],
  });
  // By priority as controller-runtime's priority queue labels it ("0"; "-100" for its low priority, what an
  // informer's first list and the resync bring), so the same dashboards read both.
  private readonly queueDepth = new Gauge({
    name: "workqueue_depth",
    help: "Current depth of workqueue by workqueue and priority",
    labelNames: ["name", "priority"] as const,
    registers: [this.registry],
  });
  private readonly queueAdds = new Counter({
    name: "workqueue_adds_total",
    help: "Total number of adds handled by workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  private readonly queueRetries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  private readonly queueDuration = new Histogram({
    name: "workqueue_queue_duration_seconds",
    help: "How long in seconds an item stays in workqueue before being requested",
    labelNames: ["name"] as const,
    buckets: workqueueBuckets,
    registers: [this.registry],
  });
  private readonly workDuration = new Histogram({
    name: "workqueue_work_duration_seconds",
    help: "How long in seconds processing an item from workqueue takes",
    labelNames: ["name"] as const,
    buckets: workqueueBuckets,
    registers: [this.registry],
  });
  private readonly leaderStatus = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  private readonly apiWrites = new Counter({
    name: "myapp_operator_api_writes_total",
    help: "Write requests (create, apply, patch, update, delete) the operator sent to the apiserver, by verb and kind",
    labelNames: ["verb", "kind"] as const,
    registers: [this.registry],
  });

  private readonly webhookLatency = new Histogram({
    name: "controller_runtime_webhook_latency_seconds",
    help: "Histogram of the latency of processing admission requests",
    labelNames: ["webhook"] as const,
    buckets: webhookLatencyBuckets,
    registers: [this.registry],
  });

  private readonly webhookRequests = new Counter({
    name: "controller_runtime_webhook_requests_total",
    help: "Total number of admission requests by HTTP status code",
    labelNames: ["webhook", "code"] as const,
    registers: [this.registry],
  });

  private readonly webhookInFlight = new Gauge({
    name: "controller_runtime_webhook_requests_in_flight",
    help: "Current number of admission requests being served",
    labelNames: ["webhook"] as const,
    registers: [this.registry],
  });

  /** The webhook server's hooks (operator/admission/webhook-server.ts), labelled by path as controller-runtime does. */
  readonly webhooks = {
    started: (webhook: string) => this.webhookInFlight.inc({ webhook }),
    finished: (webhook: string, code: number, seconds: number) => {
      this.webhookInFlight.dec({ webhook });
      this.webhookRequests.inc({ webhook, code: String(code) });
      this.webhookLatency.observe({ webhook }, seconds);
    },
  };

  /**
   * myapp_operator_cache_uncached_namespaces{kind}: namespaces the cache does not keep objects of `kind` for, past
   * their limit of objects no owner accounts for (informer.ts, NamespaceLimit); read at each scrape from `count`.
   */
  uncachedNamespaces(count: () => readonly { readonly kind: string; readonly namespaces: number }[]): void {
    new Gauge({
      name: "myapp_operator_cache_uncached_namespaces",
      help: "Namespaces whose objects of a kind the cache does not keep (too many labelled objects no owner keeps); their reconciles read those live",
      labelNames: ["kind"],
      registers: [this.registry],
      collect() {
        this.reset();
        const byKind = new Map<string, number>();
        for (const { kind, namespaces } of count()) byKind.set(kind, (byKind.get(kind) ?? 0) + namespaces);
        for (const [kind, namespaces] of byKind) this.set({ kind }, namespaces);
      },
    });
  }

  /** Starts every series of `controller` at zero, as controller-runtime does, so rates work from the first scrape. */
  registerController(controller: string): void {
    for (const result of reconcileResults) this.reconcileTotal.inc({ controller, result }, 0);
    this.reconcileErrors.inc({ controller }, 0);
  }

  /** Records one finished reconcile. */
  reconciled(controller: string, result: ReconcileResultLabel, seconds: number): void {
    this.reconcileTotal.inc({ controller, result });
    if (result === "error") this.reconcileErrors.inc({ controller });
    this.reconcileTime.observe({ controller }, seconds);
  }

  /** The workqueue_* hooks for the queue called `name` (controller-runtime names it after its controller). */
  queue(name: string): QueueMetrics {
    for (const priority of Object.values(priorityLabels)) this.queueDepth.set({ name, priority }, 0);
    this.queueAdds.inc({ name }, 0);
    this.queueRetries.inc({ name }, 0);
    return {
      added: () => this.queueAdds.inc({ name }),
      depth: (waiting) => {
        for (const [priority, label] of Object.entries(priorityLabels)) {
          this.queueDepth.set({ name, priority: label }, waiting[priority as Priority]);
        }
      },
      retried: () => this.queueRetries.inc({ name }),
      queued: (seconds) => this.queueDuration.observe({ name }, seconds),
      worked: (seconds) => this.workDuration.observe({ name }, seconds),
    };
  }

  /** leader_election_master_status{name}: 1 while this process holds the lease `name`, else 0. */
  leading(name: string, isLeader: boolean): void {
    this.leaderStatus.set({ name }, isLeader ? 1 : 0);
  }

  /**
   * Counts one write request the process sent, whoever asked (a reconcile, the leader lease, the event recorder):
   * KubeClient's onWrite. A reconcile's own writes are another count, the `writes` of its log line (controller.ts).
   */
  processApiWrite(verb: string, kind: string): void {
    this.apiWrites.inc({ verb, kind });
  }
}
