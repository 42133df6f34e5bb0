/**
 * The dynamic provider object Pulumi serializes into state with every resource. It must stay tiny and free of
 * credentials and schemas (pulumi/pulumi#8265, #5294), so each method only loads impl.ts and delegates: the
 * closure captures nothing but the implementation's location, a string.
 *
 * That location is an absolute file URL. If the checkout moves, operations on resources recorded before the move
 * (refresh, destroy) find the implementation through MYAPP_PROVIDER_IMPL (a file URL or path of provider/impl.ts).
 */
import type * as pulumi from "@pulumi/pulumi";

const implementation = new URL("./impl.ts", import.meta.url).href;

type Implementation = typeof import("./impl.ts");

async function load(): Promise<Implementation> {
  return (await import(process.env["MYAPP_PROVIDER_IMPL"] ?? implementation)) as Implementation;
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
