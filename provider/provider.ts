/**
 * The dynamic provider object Pulumi serializes into state with every resource. It must stay tiny and free of
 * credentials and schemas (pulumi/pulumi#8265, #5294), so each method only loads the implementation and delegates:
 * the closure captures nothing but the implementation's package specifier, a string.
 *
 * A specifier, not a path: `refresh`, `preview` and `destroy` resolve it wherever they run (another clone, another
 * directory, a CI runner), from the project's node_modules, or in this repository through the package's own
 * `exports` (a self-reference). MYAPP_PROVIDER_IMPL (a specifier, path or file URL) overrides it, for state written
 * by 0.1.0, which named an absolute file URL: see CHANGELOG.md.
 */
import type * as pulumi from "@pulumi/pulumi";

const implementation = "myapp-platform/provider-impl";

type Implementation = typeof import("./impl.ts");

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

/** The MyAppInstance CRUD provider; see impl.ts for what each operation does. */
export const myAppInstanceProvider: pulumi.dynamic.ResourceProvider = {
  async check(olds, news) {
    return (await load()).check(olds, news);
  },
  async diff(id, olds, news) {
    return (await load()).diff(id, olds, news);
  },
  async create(inputs) {
    return (await load()).create(inputs);
  },
  async read(id, props) {
    return (await load()).read(id, props ?? {});
  },
  async update(id, olds, news) {
    return (await load()).update(id, olds, news);
  },
  async delete(id, props) {
    return (await load()).remove(id, props);
  },
};
