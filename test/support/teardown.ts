/**
 * Cleanup in the order that strands nothing. node:test runs `after` hooks first-registered-first, so a test that
 * registers "remove the directory" before "destroy the stack in it" would run the destroy in a directory that is
 * gone (spawn reports ENOENT) and leave the stack's objects behind whenever it fails half-way. Steps deferred here
 * run last-registered-first, as `defer` does: what was set up last (a stack) goes while what it needs (its operator,
 * its project directory, its namespace) is still there. A failing step is reported and the rest still run.
 */
import type { TestContext } from "node:test";

/** Registers a cleanup step. */
export type Defer = (step: () => unknown) => void;

/** A {@link Defer} whose steps run after `t`, last-registered-first. */
export function teardown(t: TestContext): Defer {
  const steps: (() => unknown)[] = [];
  t.after(async () => {
    for (const step of steps.reverse()) {
      try {
        await step();
      } catch (error) {
        t.diagnostic(`cleanup failed: ${String(error)}`);
      }
    }
  });
  return (step) => steps.push(step);
}
