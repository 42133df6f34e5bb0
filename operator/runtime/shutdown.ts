/**
 * Graceful shutdown on SIGTERM (what the kubelet sends before SIGKILL, terminationGracePeriodSeconds later) and
 * SIGINT: stop taking work, let the reconciles in flight finish (up to a deadline), only then release the lease, so
 * the next leader never runs a reconcile of a key while this process still does; then close the HTTP server.
 * When the drain times out the lease is not released: it expires on its own (leaseDuration after the last
 * renewal), by which time the process has exited and its abandoned reconciles with it.
 */
import type { Logger } from "pino";

/** What shutdown stops, in this order. Every part is optional so partial wirings (tests, standby-only) work. */
export interface ShutdownParts {
  /** Stopped first: no new events become work. Their stores stay readable for the reconciles still running. */
  readonly informers?: readonly { stop(): Promise<void> }[];
  /** Stop intake and drain; resolve true when drained within the deadline. */
  readonly controllers?: readonly { shutdown(deadlineMs: number): Promise<boolean> }[];
  /** Stopped after the controllers; the lease is released only when they all drained. */
  readonly elector?: { stop(options?: { release?: boolean }): Promise<void> };
  /** Closed last, so /healthz keeps answering during the drain. */
  readonly server?: { close(): Promise<void> };
}

export interface ShutdownOptions {
  /**
   * How long in-flight reconciles may take to finish. Keep it below the pod's terminationGracePeriodSeconds
   * (30 s by default) minus the time to release the lease.
   * @default 20_000
   */
  readonly drainTimeoutMs?: number;
  readonly logger: Logger;
}

/** Runs the shutdown sequence; resolves with whether every controller drained in time. Never rejects. */
export async function shutdownGracefully(
  parts: ShutdownParts,
  options: ShutdownOptions,
): Promise<{ drained: boolean }> {
  const { logger } = options;
  const drainTimeoutMs = options.drainTimeoutMs ?? 20_000;
  const step = async <T>(name: string, fallback: T, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      // One failing step must not keep the others (above all, the lease release) from running.
      logger.error({ err: error, step: name }, "shutdown step failed");
      return fallback;
    }
  };
  logger.info({ drainTimeoutMs }, "shutting down: stopping intake");
  await step("informers", undefined, async () => {
    await Promise.all((parts.informers ?? []).map((informer) => informer.stop()));
  });
  const drained = await step("controllers", false, async () => {
    const results = await Promise.all(
      (parts.controllers ?? []).map((controller) => controller.shutdown(drainTimeoutMs)),
    );
    return results.every(Boolean);
  });
  if (!drained) {
    logger.warn({ drainTimeoutMs }, "reconciles still running at the deadline; abandoning them, keeping the lease");
  }
  const { elector, server } = parts;
  if (elector) await step("lease", undefined, () => elector.stop({ release: drained }));
  if (server) await step("server", undefined, () => server.close());
  logger.info({ drained }, "shutdown complete");
  return { drained };
}

/** The part of `process` signal handling needs, injectable for tests. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface TerminationSignalOptions {
  /** @default ["SIGTERM", "SIGINT"] */
  readonly signals?: readonly NodeJS.Signals[];
  /** @default process */
  readonly source?: SignalSource;
  /**
   * Runs on a second signal while the first one's shutdown is still going (an impatient Ctrl-C).
   * @default exits the process with status 1
   */
  readonly onRepeat?: (signal: NodeJS.Signals) => void;
}

/**
 * Calls `handler` once, on the first termination signal. Returns a function that removes the listeners.
 * Typical use: `onTerminationSignal(async () => { await shutdownGracefully(parts, opts); process.exit(0); })`.
 */
export function onTerminationSignal(
  handler: (signal: NodeJS.Signals) => void | Promise<void>,
  options: TerminationSignalOptions = {},
): () => void {
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const source = options.source ?? process;
  const onRepeat = options.onRepeat ?? (() => process.exit(1));
  let received = false;
  const listener = (signal: NodeJS.Signals) => {
    if (received) return onRepeat(signal);
    received = true;
    void handler(signal);
  };
  for (const signal of signals) source.on(signal, listener);
  return () => {
    for (const signal of signals) source.off(signal, listener);
  };
}
