/**
 * Where a pulumi command's time goes, read from its engine log (`-v=9 --logtostderr`, one JSON object per line
 * with `time` and `msg`): when the program registered its stack, when the engine launched the resource plugin,
 * when that plugin answered, and when it finished its last diff. Pure: the log text in, seconds out.
 */

/** Seconds since the command's first log line; undefined when the log does not show that moment. */
export interface PulumiPhases {
  /** The program registered its stack resource (the program runs from here on). */
  readonly stackRegistered?: number;
  /** The engine launched the first resource plugin (its first resource was registered). */
  readonly pluginLaunched?: number;
  /** That plugin answered GetPluginInfo: its process is up. */
  readonly pluginReady?: number;
  /** The last Diff finished (every resource checked and diffed). */
  readonly lastDiff?: number;
  /** The last log line. */
  readonly end?: number;
}

const marks = {
  stackRegistered: /RegisterResource received: t=pulumi:pulumi:Stack/,
  pluginLaunched: /newPlugin\(\): Launching plugin '[^']+ \(resource\)'/,
  pluginReady: /\]\.GetPluginInfo\(\) success/,
} as const;

export function pulumiPhases(log: string): PulumiPhases {
  let start: number | undefined;
  let end: number | undefined;
  let lastDiff: number | undefined;
  const found: Partial<Record<keyof typeof marks, number>> = {};
  for (const line of log.split("\n")) {
    if (!line.startsWith("{")) continue;
    let entry: { time?: unknown; msg?: unknown };
    try {
      entry = JSON.parse(line) as { time?: unknown; msg?: unknown };
    } catch {
      continue;
    }
    if (typeof entry.time !== "string" || typeof entry.msg !== "string") continue;
    const at = Date.parse(entry.time) / 1000;
    if (Number.isNaN(at)) continue;
    start ??= at;
    end = at;
    for (const [phase, pattern] of Object.entries(marks) as [keyof typeof marks, RegExp][]) {
      if (found[phase] === undefined && pattern.test(entry.msg)) found[phase] = at;
    }
    if (/\]\.Diff\(.*\) success/.test(entry.msg)) lastDiff = at;
  }
  if (start === undefined) return {};
  const since = (at: number | undefined) => (at === undefined ? undefined : at - start);
  return {
    stackRegistered: since(found.stackRegistered),
    pluginLaunched: since(found.pluginLaunched),
    pluginReady: since(found.pluginReady),
    lastDiff: since(lastDiff),
    end: since(end),
  };
}
