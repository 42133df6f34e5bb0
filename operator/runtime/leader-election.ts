/**
 * Leader election on a coordination.k8s.io Lease, with client-go's algorithm: optimistic concurrency on the
 * Lease's resourceVersion, and expiry judged by the *local* clock since this process last saw the record change
 * (never by comparing renewTime with our clock, so clock skew between machines cannot cause two leaders).
 * Every duration here (expiry, renew deadline, retry period) is measured on the monotonic clock
 * (`clock.monotonicMs()`): an NTP step or `date -s` cannot make a standby take a live lease early, nor keep a leader
 * that stopped renewing from stepping down. The wall clock only stamps acquireTime/renewTime, which are informational.
 *
 * A standby takes over at most leaseDuration + 2 × 2.2 × retryPeriod after the leader's last renewal (it times the
 * lease from when it saw that renewal, on its next try, and looks again each retryPeriod with jitter); a leader
 * that cannot renew for renewDeadline steps down (before its lease can have expired for the others, as
 * renewDeadline < leaseDuration). On graceful stop the lease is released (holder cleared, duration 1 s, like
 * client-go's ReleaseOnCancel), so a standby takes over at its next try, within 2.2 × retryPeriod; shutdown
 * releases it only after the reconciles drained (see shutdown.ts), otherwise it is left to expire.
 */
import type { Logger } from "pino";
import { ConflictError, NotFoundError, type KubeClient, type KubeObject } from "../../kube/index.ts";
import { realClock, sleep, type Clock } from "../../kube/clock.ts";
import { microTime } from "../../kube/micro-time.ts";
import type { OperatorMetrics } from "./metrics.ts";

/** The fields of a Lease's spec that leader election reads and writes. */
export interface LeaseRecord {
  /** The leader's identity; "" when the lease is free (released). */
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  /** MicroTime (RFC 3339 with microseconds) of the current holder's acquisition. */
  readonly acquireTime: string;
  /** MicroTime of the last renewal. */
  readonly renewTime: string;
  readonly leaseTransitions: number;
}

/** A lease as read from the store, with the resourceVersion an update must present. */
export interface StoredLease {
  readonly record: LeaseRecord;
  readonly resourceVersion: string;
}

/** Where the lease lives: a narrow client so the algorithm is unit-tested against an in-memory lease. */
export interface LeaseClient {
  /** The lease, or undefined when it does not exist yet. */
  get(): Promise<StoredLease | undefined>;
  /** Creates the lease; throws kube's ConflictError when it already exists. */
  create(record: LeaseRecord): Promise<StoredLease>;
  /** Replaces the lease if it is still at `resourceVersion`; throws kube's ConflictError otherwise. */
  update(record: LeaseRecord, resourceVersion: string): Promise<StoredLease>;
}

interface LeaseObject extends KubeObject {
  spec?: Partial<LeaseRecord>;
}

/** A LeaseClient over a real coordination.k8s.io/v1 Lease. */
export class KubeLeaseClient implements LeaseClient {
  private readonly client: Pick<KubeClient, "find" | "create" | "replace">;
  private readonly namespace: string;
  private readonly name: string;
  private readonly fieldManager: string;

  constructor(
    client: Pick<KubeClient, "find" | "create" | "replace">,
    namespace: string,
    name: string,
    fieldManager: string,
  ) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.fieldManager = fieldManager;
  }

  async get(): Promise<StoredLease | undefined> {
    const lease = await this.client.find<LeaseObject>("coordination.k8s.io/v1", "Lease", this.name, this.namespace);
    return lease ? stored(lease) : undefined;
  }

  async create(record: LeaseRecord): Promise<StoredLease> {
    const created = await this.client.create<LeaseObject>(this.object(record), { fieldManager: this.fieldManager });
    return stored(created);
  }

  async update(record: LeaseRecord, resourceVersion: string): Promise<StoredLease> {
    const object = this.object(record);
    object.metadata.resourceVersion = resourceVersion;
    return stored(await this.client.replace<LeaseObject>(object, { fieldManager: this.fieldManager }));
  }

  private object(record: LeaseRecord): LeaseObject {
    // An empty holderIdentity is sent as such (not omitted) so a release clears the field.
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: this.name, namespace: this.namespace },
      spec: { ...record },
    };
  }
}

function stored(lease: LeaseObject): StoredLease {
  const spec = lease.spec ?? {};
  return {
    resourceVersion: lease.metadata.resourceVersion ?? "",
    record: {
      holderIdentity: spec.holderIdentity ?? "",
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      acquireTime: spec.acquireTime ?? "",
      renewTime: spec.renewTime ?? "",
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
  };
}

/** Why leadership ended: the lease could not be renewed in time, or stop() released it. */
export type LeadershipEnd = "lost" | "released";

/**
 * Why a leader could not renew, for the message it exits with: "deleted" when its last attempt found the Lease
 * gone (a 404: the Lease was deleted, or its namespace was, as `pulumi destroy` of a platform does) and could not
 * make it again; "not-renewed" otherwise (another holder took it, or the apiserver did not answer in time).
 */
export type LeadershipLoss = "deleted" | "not-renewed";

/**
 * The line a process logs as it exits on lost leadership. It exits on every loss, as controller-runtime's do (a
 * leader that cannot prove it still leads must stop writing at once); for a deleted Lease the line also says why
 * and what to do, since nothing restarts an operator run by hand and the next `pulumi up` needs it running again.
 */
export function leadershipLostMessage(lease: { namespace: string; name: string }, loss: LeadershipLoss): string {
  if (loss !== "deleted") return "leader election lost; exiting";
  return (
    `leader election lost; exiting: the Lease ${lease.namespace}/${lease.name} was deleted, or its namespace ` +
    `${lease.namespace} was (as \`pulumi destroy\` of the platform does). Start the operator again before the next ` +
    `\`pulumi up\`: it waits, as a standby, until that namespace exists again, then leads`
  );
}

export interface LeaderElectionOptions {
  readonly lease: LeaseClient;
  /** Unique per process (e.g. hostname + random suffix): two processes with one identity would both lead. */
  readonly identity: string;
  /** The lease's name, for the leader_election_master_status{name} metric and logs. */
  readonly name: string;
  readonly logger: Logger;
  /** How long a standby waits after the last observed renewal before taking over. @default 15_000 */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps retrying a failed renewal before stepping down. @default 10_000 */
  readonly renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew. @default 2_000 */
  readonly retryPeriodMs?: number;
  /** Runs when this process becomes leader: start the controllers. */
  readonly onStartedLeading: () => void;
  /**
   * Runs when leadership ends. On "lost" the process must stop reconciling at once; like controller-runtime,
   * exiting is the safe answer (a restart rejoins as a standby). `loss` (with "lost" only) says why, for the message.
   */
  readonly onStoppedLeading: (reason: LeadershipEnd, loss?: LeadershipLoss) => void;
  /** Runs when the observed holder changes (including to ""). */
  readonly onNewLeader?: (identity: string) => void;
  readonly metrics?: OperatorMetrics;
  /** @default realClock */
  readonly clock?: Clock;
  /** @default Math.random */
  readonly random?: () => number;
}

/** client-go's JitterFactor: acquire attempts are spread over [retryPeriod, 2.2·retryPeriod). */
const jitterFactor = 1.2;

export class LeaderElector {
  private readonly options: LeaderElectionOptions;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly logger: Logger;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  /** This process won the lease and has not lost or released it. */
  private holdsLease = false;
  /** onStartedLeading has run and onStoppedLeading has not. */
  private leading = false;
  private observed: StoredLease | undefined;
  /** Monotonic time at which `observed` was first seen; expiry is measured from here. */
  private observedAt = 0;
  /** The last attempt found no Lease (404) and could not make one: it, or its namespace, was deleted. */
  private leaseDeleted = false;

  constructor(options: LeaderElectionOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.logger = options.logger.child({ lease: options.name, identity: options.identity });
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (!options.identity) throw new Error("leader election needs a non-empty identity");
    if (this.leaseDurationMs <= this.renewDeadlineMs) {
      throw new Error(
        `leaseDurationMs (${this.leaseDurationMs}) must be greater than renewDeadlineMs (${this.renewDeadlineMs})`,
      );
    }
    if (this.renewDeadlineMs <= jitterFactor * this.retryPeriodMs) {
      throw new Error(
        `renewDeadlineMs (${this.renewDeadlineMs}) must be greater than ${jitterFactor} × retryPeriodMs (${this.retryPeriodMs})`,
      );
    }
    options.metrics?.leading(options.name, false);
  }

  /** Starts campaigning in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder this process last observed ("" when free, undefined before the first read). */
  observedLeader(): string | undefined {
    return this.observed?.record.holderIdentity;
  }

  /**
   * Stops campaigning or renewing; if leading, releases the lease and reports "released". Pass `release: false`
   * when reconciles may still be running (the drain timed out): the lease then expires leaseDuration after the
   * last renewal, so no other process leads while this one might still write.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopping.abort();
    await this.loop;
    if (this.holdsLease && options.release !== false) await this.release();
    this.holdsLease = false;
    this.endLeadership("released");
  }

  private async run(): Promise<void> {
    const stopped = this.stopping.signal;
    // Campaign.
    for (;;) {
      if (stopped.aborted) return;
      if (await this.tryAcquireOrRenew()) break;
      await sleep(this.clock, this.retryPeriodMs * (1 + this.random() * jitterFactor), stopped);
    }
    this.holdsLease = true;
    // Acquired just as we were told to stop: stop() hands it straight back without ever starting to lead.
    if (stopped.aborted) return;
    this.leading = true;
    this.options.metrics?.leading(this.options.name, true);
    this.logger.info("became leader");
    this.options.onStartedLeading();
    // Renew every retryPeriod; give up when no renewal succeeded for renewDeadline.
    let lastRenewal = this.clock.monotonicMs();
    for (;;) {
      await sleep(this.clock, this.retryPeriodMs, stopped);
      if (stopped.aborted) return;
      const remaining = lastRenewal + this.renewDeadlineMs - this.clock.monotonicMs();
      const renewed = remaining > 0 && (await this.withDeadline(this.tryAcquireOrRenew(), remaining));
      if (stopped.aborted) return;
      if (renewed) {
        lastRenewal = this.clock.monotonicMs();
        continue;
      }
      if (this.clock.monotonicMs() - lastRenewal >= this.renewDeadlineMs) {
        const loss: LeadershipLoss = this.leaseDeleted ? "deleted" : "not-renewed";
        this.logger.error(
          { renewDeadlineMs: this.renewDeadlineMs, ...(loss === "deleted" ? { leaseDeleted: true } : {}) },
          "could not renew the lease in time, stepping down",
        );
        this.holdsLease = false;
        this.endLeadership("lost", loss);
        return;
      }
    }
  }

  /** One attempt; true when this process holds the lease afterwards. Never throws. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const stamp = microTime(this.clock.wallTimeMs());
    const record: LeaseRecord = {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: 0,
    };
    this.leaseDeleted = false;
    try {
      const current = await this.options.lease.get();
      if (!current) {
        // A 404: never made yet, or deleted (with its namespace, say); a create that fails too keeps it that way.
        this.leaseDeleted = true;
        this.observe(await this.options.lease.create(record));
        this.leaseDeleted = false;
        return true;
      }
      this.observe(current);
      const held = current.record;
      const mine = held.holderIdentity === this.options.identity;
      const expiresAt = this.observedAt + held.leaseDurationSeconds * 1000;
      if (held.holderIdentity !== "" && !mine && expiresAt > this.clock.monotonicMs()) return false;
      const next: LeaseRecord = mine
        ? { ...record, acquireTime: held.acquireTime, leaseTransitions: held.leaseTransitions }
        : { ...record, leaseTransitions: held.leaseTransitions + 1 };
      this.observe(await this.options.lease.update(next, current.resourceVersion));
      return true;
    } catch (error) {
      // A 404 on update: deleted since the read. A conflict on create: someone else made it meanwhile.
      if (error instanceof NotFoundError) this.leaseDeleted = true;
      else if (error instanceof ConflictError) this.leaseDeleted = false;
      // A conflict means someone else wrote first; anything else is a failed attempt. Both: try again later.
      if (!(error instanceof ConflictError) && !(error instanceof NotFoundError)) {
        this.logger.warn({ err: error }, "lease attempt failed");
      }
      return false;
    }
  }

  private async release(): Promise<void> {
    const current = this.observed;
    if (!current || current.record.holderIdentity !== this.options.identity) return;
    const now = microTime(this.clock.wallTimeMs());
    try {
      await this.options.lease.update(
        {
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: current.record.leaseTransitions,
        },
        current.resourceVersion,
      );
      this.logger.info("released the lease");
    } catch (error) {
      // Someone else already holds it, or the apiserver is gone; the lease then simply expires.
      this.logger.warn({ err: error }, "could not release the lease");
    }
  }

  private observe(lease: StoredLease): void {
    const previous = this.observed;
    if (previous?.resourceVersion === lease.resourceVersion) return;
    this.observed = lease;
    this.observedAt = this.clock.monotonicMs();
    if (previous?.record.holderIdentity !== lease.record.holderIdentity) {
      this.logger.info({ leader: lease.record.holderIdentity || "(none)" }, "observed leader");
      this.options.onNewLeader?.(lease.record.holderIdentity);
    }
  }

  private endLeadership(reason: LeadershipEnd, loss?: LeadershipLoss): void {
    if (!this.leading) return;
    this.leading = false;
    this.options.metrics?.leading(this.options.name, false);
    this.logger.info({ reason }, "stopped leading");
    this.options.onStoppedLeading(reason, loss);
  }

  /** `attempt`'s result, or false once `ms` pass first (a hung request must not keep a stale leader leading). */
  private async withDeadline(attempt: Promise<boolean>, ms: number): Promise<boolean> {
    const timeout = new AbortController();
    const result = await Promise.race([attempt, sleep(this.clock, ms, timeout.signal).then(() => false)]);
    timeout.abort();
    return result;
  }
}
