/**
 * What one `helm template` may use: memory, CPU time, wall time and output. Helm runs inside the operator's own
 * container, so a chart without these could take the memory or the CPU every other tenant is served with. The
 * defaults fit application charts with a wide margin (this repository's chart renders in ~40 MiB, 0.1 s of CPU,
 * a few KiB of output). Pure constants and wording; the mechanism is chart/guest-process.ts.
 */

/** The limits of one render. */
export interface RenderLimits {
  /** Memory helm may map for its data (RLIMIT_DATA), in MiB. @default 256 */
  readonly memoryMiB: number;
  /** CPU time helm may use, in seconds (RLIMIT_CPU): an endless template loop ends here. @default 20 */
  readonly cpuSeconds: number;
  /** Wall time of one render, in seconds. @default 60 */
  readonly timeoutSeconds: number;
  /** Largest rendered YAML stream, in MiB. @default 16 */
  readonly outputMiB: number;
  /**
   * Most objects (YAML documents) one render may hold: the operator applies, watches and prunes each, so a chart
   * printing 30,000 small ConfigMaps (3 MiB) would cost 30,000 writes and minutes of the operator's time. @default 500
   */
  readonly objects: number;
  /**
   * Largest `spec.values`, as compact JSON, in KiB (values-size.ts): refused at the door, and never kept in the
   * operator's memory. @default 128
   */
  readonly valuesKiB: number;
}

/**
 * The longest render wall time, in seconds: it is a timer (guest-process.ts), and Node fires a timer longer than
 * 2^31 - 1 ms after 1 ms (kube/clock.ts `maxTimerSeconds`, which chart/ may not import).
 */
export const maxRenderTimeoutSeconds = Math.floor(0x7fffffff / 1000);

/** The platform's default limits (operator flags `--render-*`, MyAppOperator `renderLimits`). */
export const defaultRenderLimits: RenderLimits = {
  memoryMiB: 256,
  cpuSeconds: 20,
  timeoutSeconds: 60,
  outputMiB: 16,
  // An application chart renders a few dozen objects; podinfo renders 3 to 8.
  objects: 500,
  // Helm values a user writes by hand are a few KiB; a chart's whole values.yaml as JSON rarely reaches 64 KiB.
  valuesKiB: 128,
};

/** Renders at once by default (`--max-concurrent-renders`, the component's `maxConcurrentRenders`). */
export const defaultMaxConcurrentRenders = 2;

/** The most renders at once either of them takes. */
export const maxConcurrentRendersLimit = 32;

/**
 * Go's runtime needs about 64 MiB of data mappings before a program allocates anything (measured with go1.26:
 * 32 MiB fails at start, "out of memory allocating heap arena map"); below this a render could never succeed.
 */
export const minRenderMemoryMiB = 96;

/** Which limit a render went over. */
export type RenderLimitKind = "memory" | "cpu" | "time" | "output" | "objects";

/** The operator flag that sets each limit, named in messages so a platform knows what to widen. */
export const renderLimitFlags: Readonly<Record<RenderLimitKind, string>> = {
  memory: "--render-memory",
  cpu: "--render-cpu",
  time: "--render-timeout",
  output: "--render-output",
  objects: "--render-objects",
};

/** "helm used more than 256 MiB of memory; the platform's limit is --render-memory". */
export function limitMessage(kind: RenderLimitKind, limits: RenderLimits): string {
  const went = {
    memory: `used more than ${limits.memoryMiB} MiB of memory`,
    cpu: `used more than ${limits.cpuSeconds} s of CPU time`,
    time: `used more than ${limits.timeoutSeconds} s`,
    output: `used more than ${limits.outputMiB} MiB of output`,
    objects: `rendered more than ${limits.objects} objects`,
  }[kind];
  return `helm ${went}; the platform's limit is ${renderLimitFlags[kind]}`;
}
