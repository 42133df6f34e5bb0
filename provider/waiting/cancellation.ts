/**
 * Cancellation of the provider's waits. On Ctrl-C the pulumi engine sends each provider a Cancel call and then
 * waits for the operations in flight; the Node dynamic-provider host answers that call without telling anyone,
 * so a wait for Ready would run on to its timeout (600 s by default). This module hears the Cancel call and
 * aborts one signal that every wait follows; each wait then ends the way a timeout does, leaving state the next
 * `pulumi up` continues from. (Signals keep Node's default: the engine runs plugins in their own process group,
 * so a terminal's Ctrl-C never reaches them, and a signal from the engine means "exit now".)
 */
import { createRequire } from "node:module";
import { providerLog } from "../console.ts";

const controller = new AbortController();
let installed = false;

/** Aborted once the engine cancelled the current deployment; every wait of this process follows it. */
export function cancellation(): AbortSignal {
  if (!installed) {
    installed = true;
    hearEngineCancel();
  }
  return controller.signal;
}

/** Aborts the waits (for tests, and for the hooks below). */
function cancelWaits(reason: string): void {
  if (controller.signal.aborted) return;
  providerLog().info({ reason }, "cancelled: waits stop");
  controller.abort(new Error(reason));
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
