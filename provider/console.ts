/**
 * What the provider tells the person running Pulumi. The CLI shows each line a dynamic provider writes to stdout
 * as an info message (pulumi ≥ 3.146), so progress and notes are plain lines; the structured log goes to stderr
 * and is off unless MYAPP_PROVIDER_LOG_LEVEL asks for it.
 */
import { pino, type Logger } from "pino";
import { formatObjectKey } from "../kube/object-key.ts";
import { exitWhenEngineGone, inDynamicProviderHost } from "./engine-watch.ts";

// Everything the provider writes goes through here, inside the process the engine started: make sure that
// process ends with the engine (a killed `pulumi up`) before it writes its first line to the engine's pipes.
if (inDynamicProviderHost()) exitWhenEngineGone();

/** Writes one line for people; the default writes to stdout. */
export type LineWriter = (line: string) => void;

export const stdoutLines: LineWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/** The instance as every line names it: `web (shop/web-095128ad)`, its resource name and namespace/name. */
export function instanceLabel(instance: { logicalName: string; namespace: string; name: string }): string {
  return `${instance.logicalName} (${formatObjectKey(instance)})`;
}

let logger: Logger | undefined;

/** The provider's structured log (JSON on stderr). Credentials are redacted even at debug level. */
export function providerLog(): Logger {
  logger ??= pino(
    {
      name: "myapp-provider",
      level: process.env["MYAPP_PROVIDER_LOG_LEVEL"] ?? "silent",
      redact: { paths: ["kubeconfig", "*.kubeconfig", "inputs.kubeconfig", "props.kubeconfig"], censor: "[secret]" },
    },
    pino.destination(2),
  );
  return logger;
}
