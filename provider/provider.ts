/**
 * The dynamic provider object Pulumi stores, as text, with every resource. It must stay tiny and free of
 * credentials and schemas (pulumi/pulumi#8265, #5294), so each method only loads the implementation and delegates:
 * it refers to nothing but the implementation's package specifier, a string.
 *
 * A specifier, not a path: `refresh`, `preview` and `destroy` resolve it wherever they run (another clone, another
 * directory, a CI runner), from the project's node_modules, or in this repository through the package's own
 * `exports` (a self-reference). MYAPP_PROVIDER_IMPL (a specifier, path or file URL) overrides it, for state written
 * by 0.1.0, which named an absolute file URL: see CHANGELOG.md.
 *
 * The text is this module's own `handler` function, written out by hand rather than by Pulumi's closure serializer
 * (what `pulumi.dynamic.Resource` runs for its provider): that serializer walks the function's closure through the
 * inspector, which cost ~2.4 s of every preview and up of a program, and there is nothing to discover here. The
 * dynamic-provider host evaluates the text with require-from-string and calls `handler()`, exactly as it does
 * with a serialized closure.
 */
import type * as pulumi from "@pulumi/pulumi";

type Implementation = typeof import("./impl.ts");

/**
 * The MyAppInstance CRUD provider; see impl.ts for what each operation does. Self-contained on purpose: its source
 * text is the provider the host runs, so it may use nothing from outside its own body.
 */
function handler(): pulumi.dynamic.ResourceProvider {
  const implementation = "myapp-platform/provider-impl";
  async function load(): Promise<Implementation> {
    const specifier = process.env["MYAPP_PROVIDER_IMPL"] ?? implementation;
    try {
      return (await import(specifier)) as Implementation;
    } catch (error) {
      throw new Error(
        `Cannot load the MyAppInstance provider (${specifier}) from ${process.cwd()}: install the package in the ` +
          `Pulumi project (npm install myapp-platform) and run pulumi there. ${String(error)}`,
        { cause: error },
      );
    }
  }
  return {
    check: async (olds, news) => (await load()).check(olds, news),
    diff: async (id, olds, news) => (await load()).diff(id, olds, news),
    create: async (inputs) => (await load()).create(inputs),
    read: async (id, props) => (await load()).read(id, props ?? {}),
    update: async (id, olds, news) => (await load()).update(id, olds, news),
    delete: async (id, props) => (await load()).remove(id, props),
  };
}

/** The provider, for a program that wants the object itself. */
export const myAppInstanceProvider: pulumi.dynamic.ResourceProvider = handler();

/** The provider as the module text stored with every resource (`__provider`), as the dynamic-provider host reads it. */
export const providerModuleText = `exports.handler = ${handler.toString()};\n`;
