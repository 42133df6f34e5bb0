/** A reconcile wired to a FakeCluster and a fake clock, for the reconcile tests. */
import { pino } from "pino";
import {
  reconcile,
  recordStalled,
  type ReconcileDeps,
  type ReconcileOutcome,
} from "../../../operator/reconcile/index.ts";
import { FakeCluster } from "./fake-cluster.ts";

export const start = new Date("2030-01-01T00:00:00Z");

export interface Harness {
  readonly cluster: FakeCluster;
  readonly deps: ReconcileDeps;
  /** Moves the fake clock forward. */
  advance(ms: number): void;
  /** One reconcile of `default/<name>`. */
  run(name?: string): Promise<ReconcileOutcome>;
  /** The runtime's onStalled hook for `default/<name>`. */
  stalled(error: unknown, name?: string): Promise<void>;
}

/** `overrides`: deps beyond the defaults (e.g. a statusPacer, which a single reconcile has not). */
export function harness(overrides: Partial<ReconcileDeps> = {}): Harness {
  const cluster = new FakeCluster();
  let now = start;
  const deps: ReconcileDeps = {
    port: cluster,
    logger: pino({ level: "silent" }),
    now: () => now,
    pollIntervalMs: 5000,
    ...overrides,
  };
  return {
    cluster,
    deps,
    advance(ms) {
      now = new Date(now.getTime() + ms);
    },
    run: (name = "web") => reconcile(`default/${name}`, deps),
    stalled: (error, name = "web") => recordStalled(`default/${name}`, error, deps),
  };
}
