/**
 * Settings of the operator that the MyAppOperator component's arguments and the operator's own flags share: one
 * range for both, so what the component accepts the operator starts with, and what it refuses the flag refuses.
 * (The chart engine's ranges live with its limits, chart/render-limits.ts.)
 */

/** Instances reconciled at once (`concurrency`, `--concurrency`) unless set. */
export const defaultConcurrency = 2;

/** The most instances reconciled at once: beyond it the apiserver, not the operator, is the limit. */
export const maxConcurrency = 100;
