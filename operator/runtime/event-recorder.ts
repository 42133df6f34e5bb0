/**
 * Records events.k8s.io/v1 Events the way client-go's events recorder does, so events never dominate the API
 * writes: an event identical to one recorded in the last `seriesWindowMs` (same object, type, reason, action,
 * note, related) does not create another Event, it becomes a series whose count and lastObservedTime are patched
 * onto the first one, at most once per `seriesFlushMs`; and each object gets a token bucket (client-go's spam
 * filter: a burst of 25, then one per 5 minutes), beyond which events are dropped. Writes are fire-and-forget:
 * a failed event is logged, never thrown, because events must not break a reconcile. A failure that deletions
 * cause (the namespace gone or terminating, a series' Event gone with it) is expected: logged at debug, without a
 * stack; anything else (RBAC, the apiserver) is a warning.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { ForbiddenError, NotFoundError, type KubeObject } from "../../kube/index.ts";
import { realClock, type Clock, type TimerHandle } from "../../kube/clock.ts";
import { microTime } from "../../kube/micro-time.ts";
import type { EventRecord, ObjectReference } from "./event.ts";

export type { EventRecord, ObjectReference } from "./event.ts";

/** The writes the recorder makes (a KubeClient satisfies it). */
export interface EventSink {
  create(object: KubeObject, options: { fieldManager?: string }): Promise<unknown>;
  mergePatch(apiVersion: string, kind: string, name: string, namespace: string, patch: unknown): Promise<unknown>;
}

export interface EventRecorderOptions {
  readonly sink: EventSink;
  /** e.g. `example.com/myapp-operator` */
  readonly reportingController: string;
  /** The pod or host name of this process. */
  readonly reportingInstance: string;
  readonly logger: Logger;
  readonly fieldManager?: string;
  /** @default realClock */
  readonly clock?: Clock;
  /** Repeats within this long join the first event's series. @default 360_000 (6 min, as client-go) */
  readonly seriesWindowMs?: number;
  /** Series counts are written at most this often. @default 60_000 */
  readonly seriesFlushMs?: number;
  /** Events per object at once. @default 25 */
  readonly burst?: number;
  /** One more event per object after this long. @default 300_000 */
  readonly refillMs?: number;
}

interface Series {
  readonly name: string;
  readonly namespace: string;
  firstSeen: number;
  count: number;
  lastObserved: number;
  /** lastObserved on the wall clock, for the Event's lastObservedTime (lastObserved is monotonic). */
  lastObservedWall: number;
  flushedCount: number;
}

export class EventRecorder {
  private readonly options: EventRecorderOptions;
  private readonly clock: Clock;
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private bucketsSweptAt = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private flushTimer: TimerHandle | undefined;

  constructor(options: EventRecorderOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
  }

  /** Records `event` (or counts it into a series); returns at once. */
  record(event: EventRecord): void {
    const now = this.clock.monotonicMs();
    this.forgetOld(now);
    // The note as the Event holds it: a tenant's chart can make a Degraded message of 32 KiB, and a series is kept
    // for six minutes per distinct event (100 instances' 25 failures each held 79 MiB when keyed by the whole note).
    const note = truncate(event.note, maxNoteLength);
    const key = JSON.stringify([event.regarding, event.related, event.type, event.reason, event.action, note]);
    const known = this.series.get(key);
    if (known) {
      known.count++;
      known.lastObserved = now;
      known.lastObservedWall = this.clock.wallTimeMs();
      this.scheduleFlush();
      return;
    }
    if (!this.take(event.regarding, now)) {
      this.options.logger.debug({ reason: event.reason, regarding: event.regarding.name }, "event dropped (rate)");
      return;
    }
    const object = eventObject(
      event,
      this.options.reportingController,
      this.options.reportingInstance,
      new Date(this.clock.wallTimeMs()),
    );
    const { name, namespace } = object.metadata as { name: string; namespace: string };
    this.series.set(key, {
      name,
      namespace,
      firstSeen: now,
      count: 1,
      lastObserved: now,
      lastObservedWall: this.clock.wallTimeMs(),
      flushedCount: 1,
    });
    this.track(
      this.options.sink.create(object, this.options.fieldManager ? { fieldManager: this.options.fieldManager } : {}),
      event,
    );
  }

  /** Waits for the writes under way (for tests and shutdown). */
  async flush(): Promise<void> {
    this.writeSeries();
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Stops the series timer. */
  stop(): void {
    if (this.flushTimer) this.clock.clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = this.clock.setTimeout(() => {
      this.flushTimer = undefined;
      this.writeSeries();
    }, this.options.seriesFlushMs ?? 60_000);
  }

  private writeSeries(): void {
    for (const [key, series] of this.series) {
      if (series.count === series.flushedCount) continue;
      series.flushedCount = series.count;
      const patch = { series: { count: series.count, lastObservedTime: microTime(series.lastObservedWall) } };
      const write = this.options.sink.mergePatch("events.k8s.io/v1", "Event", series.name, series.namespace, patch);
      // An Event gone (deleted with its namespace): forget the series, so a repeat records a new Event.
      this.track(write, undefined, () => this.series.delete(key));
    }
  }

  /**
   * Forgets the series older than the window, and the buckets that have refilled (a missing bucket is a full one).
   * Runs on every event, so it stops at the first young series: a Map iterates in insertion order, and a series
   * is inserted when first seen, on a monotonic clock.
   */
  private forgetOld(now: number): void {
    const window = this.options.seriesWindowMs ?? 360_000;
    for (const [key, series] of this.series) {
      if (now - series.firstSeen < window) break;
      if (series.count !== series.flushedCount) continue; // still to be written
      this.series.delete(key);
    }
    if (now - this.bucketsSweptAt < window) return;
    this.bucketsSweptAt = now;
    const burst = this.options.burst ?? 25;
    const refillMs = this.options.refillMs ?? 300_000;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + Math.floor((now - bucket.at) / refillMs) >= burst) this.buckets.delete(key);
    }
  }

  private take(regarding: ObjectReference, now: number): boolean {
    const burst = this.options.burst ?? 25;
    const refillMs = this.options.refillMs ?? 300_000;
    // By the object's uid too, as client-go's spam filter: a new instance of a name a deleted one spent the burst
    // of is told of from its first event.
    const key = `${regarding.kind}/${regarding.namespace}/${regarding.name}/${regarding.uid ?? ""}`;
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    const refills = Math.floor((now - bucket.at) / refillMs);
    if (refills > 0) {
      bucket.tokens = Math.min(burst, bucket.tokens + refills);
      bucket.at += refills * refillMs;
    }
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens--;
    return true;
  }

  private track(write: Promise<unknown>, event: EventRecord | undefined, onGone?: () => void): void {
    const done: Promise<void> = write.then(
      () => undefined,
      (error: unknown) => {
        const about = event ? { reason: event.reason, regarding: event.regarding.name } : {};
        if (deletedUnderneath(error)) {
          if (error instanceof NotFoundError) onGone?.();
          this.options.logger.debug({ ...about, error: error.message }, "event not recorded: its namespace is going");
          return;
        }
        this.options.logger.warn({ err: error, ...about }, "could not record event");
      },
    );
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }
}

/** An Event's note is cut to this many bytes of UTF-8 (the apiserver refuses one over 1 KiB). */
const maxNoteLength = 1024;

/** An events.k8s.io/v1 Event for `record`, as client-go's events recorder writes one. */
export function eventObject(
  record: EventRecord,
  reportingController: string,
  reportingInstance: string,
  at: Date,
): KubeObject {
  return {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: {
      // <object>.<random>, as client-go names events; the name part is capped so the whole stays a valid name.
      name: `${eventNamePrefix(record.regarding.name)}.${randomBytes(8).toString("hex")}`,
      namespace: record.regarding.namespace,
    },
    eventTime: microTime(at),
    reportingController,
    reportingInstance: reportingInstance.slice(0, 128),
    action: record.action,
    reason: record.reason,
    note: truncate(record.note, maxNoteLength),
    type: record.type,
    regarding: record.regarding,
    ...(record.related ? { related: record.related } : {}),
  };
}

/**
 * A write refused because of a deletion under way: 404 (the namespace, or the Event of a series, is gone) or 403
 * NamespaceTerminating ("unable to create new content in namespace X because it is being terminated").
 */
function deletedUnderneath(error: unknown): error is NotFoundError | ForbiddenError {
  if (error instanceof NotFoundError) return true;
  return (
    error instanceof ForbiddenError &&
    (error.causes.some((cause) => cause.reason === "NamespaceTerminating") ||
      error.message.includes("because it is being terminated"))
  );
}

/**
 * The start of an Event's name: the object's name, cut to leave room for the random suffix within a DNS subdomain's
 * 253 characters, and never ending in '-' or '.' (a label must end alphanumeric, or the Event is refused).
 */
function eventNamePrefix(name: string): string {
  return name.slice(0, 200).replace(/[-.]+$/, "");
}

function truncate(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  return `${bytes
    .subarray(0, maxBytes - 3)
    .toString("utf8")
    .replace(/\uFFFD$/, "")}...`;
}
