/**
 * A long render gives way to the operator's own work. A render past `idleClassAfterCpuSeconds` of CPU is
 * already in the idle scheduling class (guest-priority.ts), yet it still slows everyone: a busy core slows its
 * sibling whatever the class of what runs there (in the hostile-tenants chaos, one idle-class spinner slowed a
 * rollout with no attacker at all 1.14 times, two 1.26 times), and in a pod it spends the pod's CPU quota. So while
 * the operator has reconciles waiting or running, a render that turns long is stopped (the CPU it spent is the
 * price, at most its limit once), waits until the operator has been quiet for {@link quietMs}, or at most its
 * wall-time limit, and then runs to its end or its limits without being stopped again. An application chart
 * renders in a tenth of that threshold and never waits; a chart that loops until its CPU limit gets its verdict
 * once the tenants' work is done instead of during it.
 */
/** How long the operator must have had no work before a long render that gave way runs again. */
export const quietMs = 1_000;

/** How often `busy` is asked while a render waits. */
const pollMs = 100;

/**
 * Resolves once `busy()` has answered false for {@link quietMs} in a row, or after `maxWaitMs` whatever it says.
 * Timers are unref'd: a render that waits does not keep a stopping process alive.
 */
export function untilQuiet(busy: () => boolean, maxWaitMs: number): Promise<void> {
  const started = performance.now();
  let quietSince: number | undefined;
  return new Promise((resolve) => {
    const look = () => {
      const now = performance.now();
      if (busy()) quietSince = undefined;
      else quietSince ??= now;
      if ((quietSince !== undefined && now - quietSince >= quietMs) || now - started >= maxWaitMs) return resolve();
      setTimeout(look, pollMs).unref();
    };
    look();
  });
}
