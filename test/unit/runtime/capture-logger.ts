/** A pino logger whose JSON lines are parsed into an array, to assert on structured log output. */
import { pino, type Logger } from "pino";

export type LogLine = Record<string, unknown> & { msg?: string; level: number };

export function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}
