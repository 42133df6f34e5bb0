/**
 * The chart wing's one public entry: what the reconcile's chart step and switch, and the operator's wiring, use.
 * The pure plans (plan.ts, switch.ts, owned.ts, image-match.ts) and the I/O that carries them out (apply.ts,
 * switch-apply.ts, background-jobs.ts), on top of the chart engine (chart/), which callers import from there.
 */
export { BackgroundJobs } from "./background-jobs.ts";
export type { BackgroundJobsOptions, JobState } from "./background-jobs.ts";
export {
  applyRender,
  chartJobPollMs,
  chartJobSafetyPollMs,
  forgetChartInstance,
  prepareChart,
  pruneRender,
} from "./apply.ts";
export type { ChartBudget, ChartDeps, ChartSession, PreparedRender, Preparation, RenderChanges } from "./apply.ts";
export { imageMismatch } from "./image-match.ts";
export {
  contentBytes,
  isContentWithheld,
  keptBudget,
  keptBytes,
  RenderedChildren,
  withheld,
} from "./rendered-children.ts";
export type { KeptBudget } from "./rendered-children.ts";
export { chartInstanceLabel } from "./owned.ts";
export { isWorkload, mainServiceEndpoint, mainWorkload, objectId, sameObject } from "./plan.ts";
export { planTemplateSwitch, pruneChartLeftovers } from "./switch-apply.ts";
export type { TemplateSwitch } from "./switch-apply.ts";
