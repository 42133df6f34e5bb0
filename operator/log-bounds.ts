/**
 * Log lines as long as a person reads, whatever a tenant wrote. The operator's lines quote what tenants control (a
 * chart's template paths and `fail` messages, the apiserver's refusal of an object a chart rendered), and a chart's
 * text may be as long as its render (16 MiB): one such line cost ~0.1 s of the event loop to write, on every
 * reconcile, and as much again of the log reader's memory. Two bounds, both pino hooks:
 * - cheaply, before a line is made: its message, its fields and an error's message and stack are cut at
 *   {@link maxLoggedStringLength};
 * - whatever still makes a line longer than {@link maxLogLineLength} (a nested field, an error's own fields, a
 *   child logger's bindings) is cut as the line is written: every string in it, and if that is not enough, the
 *   line becomes its level, time and message alone.
 */
import { pino, type LoggerOptions } from "pino";

/** The longest string a log line carries in one place, in UTF-16 units: far above any status message (4096). */
export const maxLoggedStringLength = 16 * 1024;

/** The longest log line written, in UTF-16 units. */
export const maxLogLineLength = 64 * 1024;

/** `text`, cut to `max` with a note of how much was cut. */
function clippedForLog(text: string, max = maxLoggedStringLength): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)} … (${text.length - max} more characters)`;
}

/** pino options that bound every line: pass them to pino() where the operator's logger is made. */
export const boundedLogOptions: Pick<LoggerOptions, "hooks" | "serializers"> = {
  hooks: {
    logMethod(args, method) {
      method.apply(this, args.map(clippedArgument) as Parameters<typeof method>);
    },
    streamWrite: boundedLine,
  },
  serializers: {
    err: (error: unknown) => {
      // pino's serializer returns anything that is not an Error as it is (a thrown string, null, an object).
      const serialized: unknown = pino.stdSerializers.err(error as Error);
      if (typeof serialized === "string") return clippedForLog(serialized);
      if (typeof serialized !== "object" || serialized === null) return serialized;
      const fields = serialized as Record<string, unknown>;
      return {
        ...fields,
        ...(typeof fields["message"] === "string" ? { message: clippedForLog(fields["message"]) } : {}),
        ...(typeof fields["stack"] === "string" ? { stack: clippedForLog(fields["stack"]) } : {}),
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

/** A written line (JSON and a newline) within {@link maxLogLineLength}; an ordinary line is returned as it is. */
function boundedLine(line: string): string {
  if (line.length <= maxLogLineLength) return line;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return `${JSON.stringify({ msg: clippedForLog(line, 1024), logLineCut: line.length })}\n`;
  }
  const cut = JSON.stringify({ ...(clippedValue(parsed, 0) as object), logLineCut: line.length });
  if (cut.length <= maxLogLineLength) return `${cut}\n`;
  const { level, time, msg } = (parsed ?? {}) as Record<string, unknown>;
  const text = typeof msg === "string" ? clippedForLog(msg, 1024) : undefined;
  return `${JSON.stringify({ level, time, msg: text, logLineCut: line.length })}\n`;
}

/** `value` with every string cut to 1 Ki characters, and anything nested deeper than 16 levels left out. */
function clippedValue(value: unknown, depth: number): unknown {
  if (typeof value === "string") return clippedForLog(value, 1024);
  if (typeof value !== "object" || value === null) return value;
  if (depth >= 16) return "[nested too deep]";
  if (Array.isArray(value)) return value.map((item) => clippedValue(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, clippedValue(item, depth + 1)]));
}
