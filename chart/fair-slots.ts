/**
 * Fair slots: a semaphore with a per-group cap and round-robin turns, shared by helm renders (chart/helm.ts) and the
 * operator's chart jobs (operator/chart/background-jobs.ts). Pure (promises only).
 */

/**
 * Who waits for whom among renders (and the operator's chart jobs): "low" is a render that only re-checks an
 * instance already Ready at its spec (after a restart every chart instance renders again, its cache empty);
 * "normal" is everything else (a change, an instance not Ready yet). A low render starts only when no waiting
 * normal one can.
 */
export type RenderPriority = "normal" | "low";

/** Runs `work` in a slot of `group` (a namespace) at `priority` (default "normal"). */
export type Slots = <T>(group: string, work: () => Promise<T>, priority?: RenderPriority) => Promise<T>;

/**
 * At most `max` renders at once, and, while other namespaces render or wait, at most half of them (at least one)
 * for one namespace: a tenant whose charts each run to their CPU limit holds one slot while every other tenant's
 * renders go on (a namespace alone may use them all). Waiting renders are taken round-robin across namespaces,
 * first come first served within one, normal ones before low ones. Written by hand: the per-group cap is what a
 * plain semaphore does not give.
 */
export function fairSlots(max: number): Slots {
  const perGroup = Math.max(1, Math.floor(max / 2));
  let active = 0;
  const activeIn = new Map<string, number>();
  // Per priority: the waiting renders of each group, and the groups in turn order.
  const waiting: Record<RenderPriority, Map<string, (() => void)[]>> = { normal: new Map(), low: new Map() };
  const turns: Record<RenderPriority, string[]> = { normal: [], low: [] };
  const alone = (group: string) =>
    [...activeIn.keys(), ...waiting.normal.keys(), ...waiting.low.keys()].every((other) => other === group);
  const runnable = (group: string) => active < max && ((activeIn.get(group) ?? 0) < perGroup || alone(group));
  const start = (group: string) => {
    active += 1;
    activeIn.set(group, (activeIn.get(group) ?? 0) + 1);
  };
  const next = () => {
    // The first group in turn whose cap allows another render goes, normal before low; the others keep their place.
    // A low render may take a slot a normal one cannot (its namespace at its cap): that one waits for its own
    // namespace's render to end either way.
    for (const priority of ["normal", "low"] as const) {
      const order = turns[priority];
      for (let i = 0; i < order.length && active < max; i++) {
        const group = order[i]!;
        if (!runnable(group)) continue;
        const queue = waiting[priority].get(group)!;
        const resume = queue.shift()!;
        order.splice(i, 1);
        if (queue.length > 0) order.push(group);
        else waiting[priority].delete(group);
        start(group);
        resume();
        i = -1; // the order changed: look again from the front
      }
    }
  };
  return async (group, work, priority = "normal") => {
    // In line behind whoever waits, then whatever may start now starts (this render too, if nothing is ahead).
    await new Promise<void>((resolve) => {
      const queue = waiting[priority].get(group);
      if (queue) queue.push(resolve);
      else {
        waiting[priority].set(group, [resolve]);
        turns[priority].push(group);
      }
      next();
    });
    try {
      return await work();
    } finally {
      active -= 1;
      const left = (activeIn.get(group) ?? 1) - 1;
      if (left > 0) activeIn.set(group, left);
      else activeIn.delete(group);
      next();
    }
  };
}
