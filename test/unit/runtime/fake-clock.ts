/**
 * A manually advanced Clock for deterministic tests of timing logic. Its wall clock can be stepped on its own
 * (`jumpWall`), as NTP or `date -s` would, to prove that durations never read it.
 */
import type { Clock, TimerHandle } from "../../../kube/clock.ts";

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
}

export class FakeClock implements Clock {
  private current: number;
  /** Wall time minus monotonic time; moved by jumpWall. */
  private wallOffset = 0;
  private seq = 0;
  private readonly timers = new Set<Timer>();

  constructor(start = Date.UTC(2030, 0, 1)) {
    this.current = start;
  }

  monotonicMs(): number {
    return this.current;
  }

  wallTimeMs(): number {
    return this.current + this.wallOffset;
  }

  /** Steps the wall clock by `ms` (negative: backwards) without moving monotonic time or firing timers. */
  jumpWall(ms: number): void {
    this.wallOffset += ms;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer = { at: this.current + Math.max(0, delayMs), seq: this.seq++, callback };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as Timer);
  }

  /** Number of timers still waiting. */
  get pending(): number {
    return this.timers.size;
  }

  /** Delay until the earliest timer fires, or undefined when none is pending. */
  nextDelay(): number | undefined {
    const next = this.earliest();
    return next ? next.at - this.current : undefined;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order, and lets promise chains settle after each one so code
   * awaiting a timer runs before the next fires.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (;;) {
      const next = this.earliest();
      if (!next || next.at > target) break;
      this.timers.delete(next);
      this.current = next.at;
      next.callback();
      await settle();
    }
    this.current = target;
    await settle();
  }

  private earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const timer of this.timers) {
      if (!best || timer.at < best.at || (timer.at === best.at && timer.seq < best.seq)) best = timer;
    }
    return best;
  }
}

/** Lets pending promise reactions (several hops deep) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
