/**
 * Cancellation of the provider's waits. On Ctrl-C the pulumi engine sends each provider a Cancel call and then
 * waits for the operations in flight; the Node dynamic-provider host answers that call without telling anyone,
 * so a wait for Ready would run on to its timeout (600 s by default). This module hears the Cancel call (and
 * SIGINT/SIGTERM, should the process get them) and aborts one signal that every wait follows; each wait then
 * ends the way a timeout does, leaving state the next `pulumi up` continues from.
 */
import { createRequire } from "node:module";
import { providerLog } from "./console.ts";

const controller = new AbortController();
let installed = false;

/** Aborted once the engine cancelled the current deployment; every wait of this process follows it. */
export function cancellation(): AbortSignal {
  if (!installed) {
    installed = true;
    hearSignals();
    hearEngineCancel();
  }
  return controller.signal;
}

/** Aborts the waits (for tests, and for the hooks below). */
export function cancelWaits(reason: string): void {
  if (controller.signal.aborted) return;
  providerLog().info({ reason }, "cancelled: waits stop");
  controller.abort(new Error(reason));
}

// Once the waits have ended, the engine closes the plugin; should it not, the signal's usual meaning still holds.
const exitGraceMs = 5_000;

function hearSignals(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      cancelWaits(signal);
      setTimeout(() => process.exit(signal === "SIGINT" ? 130 : 143), exitGraceMs).unref();
    });
  }
}

/**
 * The host (@pulumi/pulumi's cmd/dynamic-provider) registers a no-op Cancel handler and exports nothing to hook
 * into, so we hear the call where it arrives: grpc-js's Server looks up the handler of every incoming call with
 * `_retrieveHandler(path)`. Hand-written because no public API carries this; if grpc-js changes, the hook is
 * skipped (logged) and only the timeout ends a wait, as before.
 */
function hearEngineCancel(): void {
  const host = process.argv[1] ?? "";
  if (!host.includes("dynamic-provider")) return;
  try {
    const grpc = createRequire(host)("@grpc/grpc-js") as {
      Server?: { prototype: Record<string, unknown> };
    };
    const prototype = grpc.Server?.prototype;
    const original = prototype?.["_retrieveHandler"];
    if (!prototype || typeof original !== "function") throw new Error("grpc-js Server._retrieveHandler not found");
    prototype["_retrieveHandler"] = function (this: unknown, path: string) {
      if (path === "/pulumirpc.ResourceProvider/Cancel") cancelWaits("the engine cancelled the deployment");
      return (original as (path: string) => unknown).call(this, path);
    };
  } catch (error) {
    providerLog().warn({ err: error }, "cannot hear the engine's Cancel call; waits end at their timeout");
  }
}
