/**
 * Where the operator's log lines go: stdout, asynchronously, batched while a write is in flight (a synchronous write
 * per line was about a tenth of the operator's CPU converging 1,000 instances); pino writes out what is pending on
 * exit.
 */
import { pino } from "pino";

export type LogDestination = ReturnType<typeof pino.destination>;

export function stdoutDestination(): LogDestination {
  return pino.destination({ dest: 1, sync: false });
}

/**
 * Resolves once what was logged has left the process or failed to (its reader gone), within `boundMs`: call it
 * before `process.exit`. On exit pino writes what is pending synchronously, and sonic-boom 4 retries a failed
 * synchronous write forever unless the error is EAGAIN (sonic-boom 5 throws; pino 10 takes ^4): an operator whose
 * stdout reader died just before it stopped would never exit. Once an asynchronous write has failed with EPIPE,
 * pino drops the stream's lines instead.
 */
export function logsWritten(destination: LogDestination, boundMs = 2_000): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      destination.off("drain", done);
      destination.off("error", done);
      resolve();
    };
    const timer = setTimeout(done, boundMs);
    destination.once("drain", done);
    destination.once("error", done);
  });
}
