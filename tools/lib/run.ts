/** Runs a command to completion, with a clear error naming it when it fails. */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

export function run(
  command: string,
  args: readonly string[],
  { onSpawn, ...options }: SpawnOptions & { readonly onSpawn?: (child: ChildProcess) => void } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    onSpawn?.(child);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve({ stdout, stderr });
      else {
        const tail = (stderr || stdout).trim().split("\n").slice(-15).join("\n");
        reject(new Error(`${command} ${args.join(" ")} failed (exit ${code}):\n${tail}`));
      }
    });
  });
}
