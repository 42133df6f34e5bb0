/**
 * The dynamic provider Pulumi stores, as module text, with every resource (`__provider`). It must stay tiny and
 * free of credentials and schemas (pulumi/pulumi#8265, #5294), so each method only loads the implementation and
 * delegates: it refers to nothing but the implementation's package specifier, a string.
 *
 * A specifier, not a path: `refresh`, `preview` and `destroy` resolve it wherever they run (another clone, another
 * directory, a CI runner), from the project's node_modules, or in this repository through the package's own
 * `exports` (a self-reference). MYAPP_PROVIDER_IMPL (a specifier, path or file URL) overrides it, for state written
 * by 0.1.0, which named an absolute file URL: see CHANGELOG.md.
 *
 * Written by hand as plain JavaScript rather than produced by Pulumi's closure serializer (what
 * `pulumi.dynamic.Resource` runs on its provider object): the serializer walks a closure through the inspector on
 * every preview and up, and there is nothing here to discover. Plain text also stays the same whether the package
 * runs from TypeScript sources or from tsc's output. The dynamic-provider host evaluates it with
 * require-from-string and calls `handler()`, exactly as it does with a serialized closure.
 *
 * The import is made once per process (a preview calls check and diff for every instance, and even a cached
 * dynamic import goes through the loader's resolution each time).
 */
export const providerModuleText = `"use strict";
const implementation = "myapp-platform/provider-impl";
let loaded;
function load() {
  return (loaded ??= importImplementation());
}
async function importImplementation() {
  const specifier = process.env.MYAPP_PROVIDER_IMPL ?? implementation;
  try {
    return await import(specifier);
  } catch (error) {
    throw new Error(
      "Cannot load the MyAppInstance provider (" + specifier + ") from " + process.cwd() + ": install the " +
        "package's tarball in the Pulumi project (npm install ./myapp-platform-<version>.tgz, made by npm pack) " +
        "and run pulumi there. " + String(error),
      { cause: error },
    );
  }
}
exports.handler = () => ({
  check: async (olds, news) => (await load()).check(olds, news),
  diff: async (id, olds, news) => (await load()).diff(id, olds, news),
  create: async (inputs) => (await load()).create(inputs),
  read: async (id, props) => (await load()).read(id, props ?? {}),
  update: async (id, olds, news) => (await load()).update(id, olds, news),
  delete: async (id, props) => (await load()).remove(id, props),
});
`;
