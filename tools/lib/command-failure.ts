/**
 * How a command of this repository ends on a failure it did not catch itself. The tools' errors are written for
 * people (Go missing, a port taken, a cluster that does not come up): their message alone, one line, no stack
 * trace under it. A programming error (TypeError, ReferenceError, ...) keeps its stack: that one is for us.
 */
const programmingErrors = [TypeError, ReferenceError, RangeError, SyntaxError];

/** The text to print for `error`, which ended `command`. */
export function failureText(command: string, error: unknown): string {
  if (!(error instanceof Error)) return `${command} failed: ${String(error)}`;
  if (programmingErrors.some((type) => error instanceof type))
    return `${command} failed: ${error.stack ?? error.message}`;
  return `${command} failed: ${error.message}`;
}

/** Ends the process with {@link failureText} and exit code 1 on an uncaught error (top-level awaits included). */
export function endOnUncaughtFailure(command: string): void {
  process.on("uncaughtException", (error) => {
    console.error(failureText(command, error));
    process.exit(1);
  });
}
