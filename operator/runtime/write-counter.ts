/**
 * Attributes API writes to the reconcile that caused them, so each reconcile's log line can say `writes: N`
 * (a converged instance must log `writes: 0`). The KubeClient reports every write through one `onWrite` hook;
 * AsyncLocalStorage tells which reconcile (if any) the write happened in, however many workers run at once.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { WriteVerb } from "../../kube/index.ts";

interface Tally {
  count: number;
}

/** The outcome of tracked work: its value or error, and the writes it made either way. */
export type Tracked<T> =
  | { readonly ok: true; readonly value: T; readonly writes: number }
  | { readonly ok: false; readonly error: unknown; readonly writes: number };

export class WriteCounter {
  private readonly current = new AsyncLocalStorage<Tally>();
  private readonly onEveryWrite: ((verb: WriteVerb, kind: string) => void) | undefined;

  /** @param onEveryWrite called for every write, inside a reconcile or not (e.g. OperatorMetrics.apiWrite). */
  constructor(onEveryWrite?: (verb: WriteVerb, kind: string) => void) {
    this.onEveryWrite = onEveryWrite;
  }

  /** The hook to pass as `new KubeClient(kc, { onWrite: counter.record })`. */
  readonly record = (verb: WriteVerb, kind: string): void => {
    this.onEveryWrite?.(verb, kind);
    const tally = this.current.getStore();
    if (tally) tally.count += 1;
  };

  /** Runs `work` and counts the writes recorded while it (and everything it awaits) runs; never throws. */
  async track<T>(work: () => Promise<T>): Promise<Tracked<T>> {
    const tally: Tally = { count: 0 };
    try {
      const value = await this.current.run(tally, work);
      return { ok: true, value, writes: tally.count };
    } catch (error) {
      return { ok: false, error, writes: tally.count };
    }
  }
}
