// The dynamic provider's implementation, found by package specifier (`myapp-platform/provider-impl`, see
// provider/provider.ts), so the state a stack stores works from any checkout, directory or machine that has the
// package. Plain JavaScript on purpose: it must load both ways. In a checkout the TypeScript sources run natively;
// an installed package has no sources (Node does not strip types under node_modules), only build/.
import { existsSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

// The engine starts a new provider process for every preview, up, refresh and destroy, and loading this
// implementation (zod, undici, the chart engine) is most of that start: V8's on-disk code cache (in the OS temp
// directory, or NODE_COMPILE_CACHE's; NODE_DISABLE_COMPILE_CACHE=1 turns it off) halves it from the second start on.
// (With NODE_COMPILE_CACHE set in the engine's environment, the host's own modules are cached too.)
module.enableCompileCache?.();

const source = new URL("./impl.ts", import.meta.url);
const checkout = !fileURLToPath(import.meta.url).includes("/node_modules/") && existsSync(source);

// Pulumi's provider host is started by the engine, with no Node flags of ours: make Object.prototype.__proto__
// throw from here (as --disable-proto=throw would; see chart/proto-guard.ts), before the implementation loads and
// long before it reads an input. The host's own libraries (Pulumi, grpc-js, protobufjs) keep working under it.
const guard = checkout ? await import("../chart/proto-guard.ts") : await import("../build/chart/proto-guard.js");
guard.disableProto();

// Installed: the implementation bundled into one module (tools/lib/provider-bundle.ts), which loads in about half
// the time of tsc's ~250 modules; every preview waits for it.
const implementation = checkout ? await import(source.href) : await import("../build/provider/impl.bundle.js");

// Node writes its code cache when the process exits, but the engine ends a provider host with a signal, so
// nothing would ever be written: write it now, once everything the host needs has been compiled. Entries read
// from the cache are not written again, so from the second start on this costs nothing.
module.flushCompileCache?.();

export const { check, diff, create, read, update, remove } = implementation;
