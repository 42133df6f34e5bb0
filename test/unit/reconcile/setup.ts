/** A reconcile wired to a FakeCluster and a fake clock, for the reconcile tests. */
import { pino } from "pino";
import {
  reconcile,
  recordStalled,
  type ReconcileDeps,
  type ReconcileOutcome,
} from "../../../operator/reconcile/index.ts";
import { FakeClock } from "../runtime/fake-clock.ts";
import { FakeCluster } from "./fake-cluster.ts";

export const start = new Date("2030-01-01T00:00:00Z");

/** A reconcile's outcome and the writes it counted in its tally (what the runtime logs on its line). */
export type Ran = ReconcileOutcome & { readonly writes: number };

export interface Harness {
  readonly cluster: FakeCluster;
  readonly deps: ReconcileDeps;
  /** The reconcile's clock, starting at `start` (monotonic and wall). */
  readonly clock: FakeClock;
  /** Moves the fake clock forward. */
  advance(ms: number): Promise<void>;
  /** One reconcile of `default/<name>`, counting its writes in a fresh tally as the runtime does. */
  run(name?: string): Promise<Ran>;
  /** The runtime's onStalled hook for `default/<name>`. */
  stalled(error: unknown, name?: string): Promise<void>;
}

/** `overrides`: deps beyond the defaults (e.g. a statusPacer, which a single reconcile has not). */
export function harness(overrides: Partial<ReconcileDeps> = {}): Harness {
  const cluster = new FakeCluster();
  const clock = new FakeClock(start.getTime());
  const deps: ReconcileDeps = {
    cluster,
    logger: pino({ level: "silent" }),
    clock,
    pollIntervalMs: 5000,
    ...overrides,
  };
  return {
    cluster,
    deps,
    clock,
    advance: (ms) => clock.advance(ms),
    run: async (name = "web") => {
      const writes = { count: 0 };
      const outcome = await reconcile({ namespace: "default", name }, deps, writes);
      return { ...outcome, writes: writes.count };
    },
    stalled: (error, name = "web") => recordStalled({ namespace: "default", name }, error, deps),
  };
}
