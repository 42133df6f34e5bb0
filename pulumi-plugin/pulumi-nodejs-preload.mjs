// Loaded (`node --import`) before @pulumi/pulumi's two entry points: the dynamic-provider host (by the launcher
// beside this file, the toolchain's or the package's project plugin) and the program's runner, cmd/run (by the
// toolchain's language host, beside which the toolchain puts a copy, or by any language host through the project's
// `nodeargs: --import=myapp-platform/pulumi-preload`). Loaded twice, it does the same twice, harmlessly.
//
// 0. Both refuse a Node older than the package's, saying so, instead of failing later without naming the cause.
// 1. The host watches the engine. A SIGKILLed `pulumi up` tells its plugins nothing, and the host would serve on:
//    it exits (silently: the engine's pipes are gone) once its parent pid changes, looked at every second; unref'd,
//    so it never keeps the host alive by itself. The provider does the same from its first call
//    (provider/engine-watch.ts), also under pulumi's own launcher. (The language host watches the program itself.)
// 2. Both defer what they rarely use. Every preview, up and destroy starts both, and the engine waits for them:
//    `require("@pulumi/pulumi")` loads TypeScript (for closure serialization), npm's arborist and
//    normalize-package-data (for package discovery) and the Automation API, ~300 ms of each process's start, used
//    only by a program that serializes a function or drives pulumi itself, never by a provider host. The host also
//    defers OpenTelemetry's API and semver, which its runtime reads only inside functions. Each is replaced in the
//    module cache by a stand-in that loads the real module at its first property read (all @pulumi/pulumi's code
//    does with them), so a process that does need one still gets it, later. No library does this for CommonJS,
//    hence by hand.
// 3. Both keep V8's compiled code on disk (Node's compile cache, where NODE_COMPILE_CACHE says, else in the OS temp
//    directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so from the second command on neither compiles its
//    modules again: ~25 ms of the host's start, ~0.1 s of a preview with both. The runner writes the cache as it
//    exits; the engine ends the host with a signal, so the host writes it once its modules have loaded.
import Module, { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

/**
 * The package's oldest Node (package.json `engines`; a unit test holds the two equal). pulumi runs the first `node`
 * on PATH, and on an older one a TypeScript program fails with "Unknown file extension .ts", which names neither
 * the cause nor the fix.
 */
const oldestNode = "22.19.0";

function refuseOldNode() {
  const running = process.versions.node.split(".").map(Number);
  const oldest = oldestNode.split(".").map(Number);
  const index = oldest.findIndex((part, i) => running[i] !== part);
  if (index === -1 || running[index] > oldest[index]) return;
  process.stderr.write(
    `myapp-platform needs Node.js ${oldestNode} or later; pulumi started ${process.version} (${process.execPath}), ` +
      `the first node on PATH: put a newer one first on PATH\n`,
  );
  process.exit(1);
}

/** Exits once the parent (the engine) is gone. */
function watchEngine() {
  const engine = process.ppid;
  setInterval(() => {
    if (process.ppid !== engine) process.exit(1);
  }, 1000).unref();
}

/** Puts a stand-in for `file` into the module cache; the real module is loaded at the stand-in's first use. */
function deferModule(file) {
  let real;
  const load = () => {
    if (real === undefined) {
      delete Module._cache[file];
      real = require(file);
    }
    return real;
  };
  const standIn = new Module(file, null);
  standIn.filename = file;
  standIn.loaded = true;
  // `__esModule`, so TypeScript's import helpers hand the stand-in itself to the importer instead of copying its
  // keys (which would load the module at once); `default` then answers as those helpers would have.
  standIn.exports = new Proxy(
    {},
    {
      get: (_, key) => {
        if (key === "__esModule") return true;
        const module = load();
        return key === "default" && !module.__esModule ? module : Reflect.get(module, key);
      },
      has: (_, key) => key === "__esModule" || Reflect.has(load(), key),
      ownKeys: () => Reflect.ownKeys(load()),
      getOwnPropertyDescriptor: (_, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(load(), key);
        return descriptor && { ...descriptor, configurable: true };
      },
    },
  );
  Module._cache[file] = standIn;
}

/** `specifier` as `from` (a file of @pulumi/pulumi) resolves it, or undefined when it is not installed. */
function resolveFrom(pulumiDir, from, specifier) {
  try {
    return createRequire(path.join(pulumiDir, from)).resolve(specifier);
  } catch {
    return undefined;
  }
}

const entry = /[\\/]@pulumi[\\/]pulumi[\\/]cmd[\\/](dynamic-provider|run)(?:[\\/]index\.js)?$/.exec(
  process.argv[1] ?? "",
);
if (entry) {
  refuseOldNode();
  Module.enableCompileCache?.();
  if (entry[1] === "dynamic-provider") {
    watchEngine();
    setImmediate(() => Module.flushCompileCache?.()); // after the host's own modules, before its first call
  }
  const pulumiDir = path.join(process.argv[1].slice(0, entry.index), "@pulumi", "pulumi");
  const deferred = [
    // pulumi's shim, not `typescript`: it falls back to a vendored TypeScript when the project has none (ts-node,
    // for a program run with `typescript: true`, requires TypeScript itself and gets the real module)
    resolveFrom(pulumiDir, "typescript-shim.js", "./typescript-shim.js"),
    resolveFrom(pulumiDir, "runtime/closure/codePaths.js", "@npmcli/arborist"),
    resolveFrom(pulumiDir, "runtime/closure/codePaths.js", "normalize-package-data"),
    // the Automation API (its workspaces, execa): the package's index loads it for programs that drive pulumi
    resolveFrom(pulumiDir, "index.js", "./automation"),
  ];
  if (entry[1] === "dynamic-provider") {
    // Only the host's own start waits on these (~15 ms): its runtime reads them inside functions it may never call
    // (tracing headers on calls to the engine, version matching of registered resource packages).
    deferred.push(
      resolveFrom(pulumiDir, "runtime/settings.js", "@opentelemetry/api"),
      resolveFrom(pulumiDir, "runtime/rpc.js", "semver"),
    );
  }
  for (const file of deferred) if (file !== undefined) deferModule(file);
}
