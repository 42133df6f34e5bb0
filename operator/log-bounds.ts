/**
 * Log lines as long as a person reads, whatever a tenant wrote. The operator's lines quote what tenants control (a
 * chart's template paths and `fail` messages, the apiserver's refusal of an object a chart rendered), and a chart's
 * text may be as long as its render (16 MiB): one such line cost ~0.1 s of the event loop to write, on every
 * reconcile, and as much again of the log reader's memory. pino's hooks cut every string a line carries (its
 * message, its fields, an error's message and stack) at {@link maxLoggedStringLength}.
 */
import { pino, type LoggerOptions } from "pino";

/** The longest string a log line carries in one place, in UTF-16 units: far above any status message (4096). */
export const maxLoggedStringLength = 16 * 1024;

/** `text`, cut to the bound with a note of how much was cut. */
export function clippedForLog(text: string): string {
  if (text.length <= maxLoggedStringLength) return text;
  return `${text.slice(0, maxLoggedStringLength)} … (${text.length - maxLoggedStringLength} more characters)`;
}

/** pino options that bound every line: pass them to pino() where the operator's logger is made. */
export const boundedLogOptions: Pick<LoggerOptions, "hooks" | "serializers"> = {
  hooks: {
    logMethod(args, method) {
      method.apply(this, args.map(clippedArgument) as Parameters<typeof method>);
    },
  },
  serializers: {
    err: (error: Error) => {
      const serialized = pino.stdSerializers.err(error);
      return {
        ...serialized,
        message: clippedForLog(serialized.message),
        ...(typeof serialized.stack === "string" ? { stack: clippedForLog(serialized.stack) } : {}),
      };
    },
  },
};

/** A log call's argument: a message, or an object of fields whose strings are cut (copied only when one is). */
function clippedArgument(argument: unknown): unknown {
  if (typeof argument === "string") return clippedForLog(argument);
  if (typeof argument !== "object" || argument === null || argument instanceof Error || Array.isArray(argument)) {
    return argument;
  }
  const fields = argument as Record<string, unknown>;
  const long = Object.keys(fields).filter((key) => {
    const value = fields[key];
    return typeof value === "string" && value.length > maxLoggedStringLength;
  });
  if (long.length === 0) return argument;
  const copy = { ...fields };
  for (const key of long) copy[key] = clippedForLog(fields[key] as string);
  return copy;
}
