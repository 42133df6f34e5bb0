/**
 * One `npm start` or `npm run down` at a time per checkout. Two at once met at pulumi's stack lock, whose message
 * suggests `pulumi cancel` (which breaks the update in flight) and was followed by a pointer to the operator's log;
 * the second now stops at once, naming the first.
 */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { localDir } from "./paths.ts";
import { runningProcess, writeProcessRecord, type ProcessRecord } from "./process-record.ts";

/** Records this process as the checkout's running command, or exits naming the one that runs. */
export function holdCheckoutCommand(command: string): void {
  const file = path.join(localDir, "command.json");
  const running = runningProcess<ProcessRecord & { command?: string }>(file);
  if (running && running.pid !== process.pid) {
    console.error(
      `${command}: ${running.command ?? "another command"} (pid ${running.pid}) is running in this checkout; ` +
        "wait for it to end (or stop it), then run this again",
    );
    process.exit(1);
  }
  mkdirSync(localDir, { recursive: true });
  writeProcessRecord(file, process.pid, { command });
  process.once("exit", () => {
    if (runningProcess(file)?.pid === process.pid) rmSync(file, { force: true });
  });
}
