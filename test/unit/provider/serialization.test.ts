import * as pulumi from "@pulumi/pulumi";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { unknownValue } from "../../../provider/inputs.ts";
import { providerModuleText } from "../../../provider/provider.ts";

// Every resource's state carries the serialized provider, so it must stay small, and it must capture neither
// credentials (pulumi/pulumi#8265) nor a zod schema (which does not serialize, #5294).

/** The provider text every MyAppInstance stores (provider.ts writes it out; nothing is serialized at run time). */
async function serialized(): Promise<string> {
  return providerModuleText;
}

test("the stored provider is under 4 KiB and refers to nothing but the implementation's package specifier", async () => {
  const text = await serialized();
  assert.ok(text.length < 4096, `stored provider is ${text.length} bytes`);
  assert.match(text, /const implementation = "myapp-platform\/provider-impl";/);
  // Self-contained: evaluated on its own, it defines the handler without any free variable of this module.
  const handler = new Function("exports", text);
  const exports: { handler?: () => pulumi.dynamic.ResourceProvider } = {};
  handler(exports);
  assert.deepEqual(Object.keys(exports.handler!()).sort(), ["check", "create", "delete", "diff", "read", "update"]);
});

test("a MyAppInstance registers the written-out provider, not a serialized closure", async () => {
  // GIVEN Pulumi's mocks, which see every registration's inputs
  const registered: Record<string, unknown>[] = [];
  pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push(args.inputs);
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call: () => ({}),
    },
    "shop",
    "dev",
    false,
    "organization",
  );
  // WHEN an instance is declared
  const { MyAppInstance } = await import("../../../provider/resource.ts");
  const instance = new MyAppInstance("web", { image: "nginx:1.27" });
  await new Promise<void>((resolve) => instance.urn.apply(() => resolve()));
  // THEN its type is the dynamic provider's and its __provider is exactly that text
  assert.match(await urnOf(instance), /::pulumi-nodejs:dynamic\/myapp:MyAppInstance::web$/);
  assert.equal(registered.at(-1)?.["__provider"], providerModuleText);
});

test("declaring an instance formats no stack frames but its source position, and keeps Error.stackTraceLimit", async () => {
  // GIVEN the mocks of the test above, a stack trace limit of the program's own, and a count of the frames of
  // every stack trace formatted meanwhile
  const { MyAppInstance } = await import("../../../provider/resource.ts");
  const [limit, prepare] = [Error.stackTraceLimit, Error.prepareStackTrace];
  const frames: number[] = [];
  Error.stackTraceLimit = 17;
  Error.prepareStackTrace = (error, callSites) => {
    frames.push(callSites.length);
    return prepare ? prepare(error, callSites) : String(error);
  };
  let instance;
  try {
    // WHEN an instance is declared
    instance = new MyAppInstance("api", { image: "nginx:1.27" });
  } finally {
    [Error.stackTraceLimit, Error.prepareStackTrace] = [Error.stackTraceLimit, prepare];
  }
  // THEN pulumi's leak-report stacks (four promises per property) came out empty, only the resource's source
  // position has frames, and the program's limit is back
  assert.ok(frames.length > 50, `${frames.length} stacks formatted`);
  assert.equal(frames.filter((count) => count > 0).length, 1, `frames per stack: ${frames.join(",")}`);
  assert.equal(Error.stackTraceLimit, 17);
  Error.stackTraceLimit = limit;
  assert.match(await urnOf(instance), /:MyAppInstance::api$/);
});

function urnOf(resource: pulumi.Resource): Promise<string> {
  return new Promise((resolve) => resource.urn.apply(resolve));
}

test("it names no path: state written here works from another clone, directory or machine", async () => {
  const text = await serialized();
  assert.equal(text.includes("file://"), false, "a file URL");
  assert.equal(text.includes(process.cwd()), false, "this checkout's path");
  assert.equal(/impl\.(ts|js)/.test(text), false, "a file name of the implementation");
});

test("it names no schema, client or credential", async () => {
  const text = await serialized();
  for (const word of ["zod", "KubeConfig", "KubeClient", "kubeconfig", "token", "client-key", "password"]) {
    assert.equal(text.includes(word), false, `serialized provider mentions ${word}`);
  }
});

test("deserialized as the dynamic-provider host does, it loads the implementation and checks", async () => {
  // GIVEN the provider rebuilt from its text with require-from-string (what cmd/dynamic-provider uses)
  const require = createRequire(import.meta.url);
  const requireFromString = require("require-from-string") as (code: string) => {
    handler: () => pulumi.dynamic.ResourceProvider;
  };
  const provider = requireFromString(await serialized()).handler();
  // WHEN it checks inputs with an unknown value (so no cluster is asked)
  const result = await provider.check!(
    {},
    { image: unknownValue, replicas: 2, owner: "organization/shop/dev", logicalName: "web" },
  );
  // THEN the implementation ran: defaults applied, the unknown kept
  assert.deepEqual(result.failures ?? [], []);
  assert.equal(result.inputs.image, unknownValue);
  assert.equal(result.inputs.port, 8080);
  assert.match(result.inputs.name, /^web-[0-9a-f]{8}$/);
});

test("a misspelled argument stops the program, naming it and the arguments there are", async () => {
  const { MyAppInstance } = await import("../../../provider/resource.ts");
  const pulumi = await import("@pulumi/pulumi");
  assert.throws(
    () => new MyAppInstance("web", { image: "nginx:1.27", replica: 3 } as never),
    (error: unknown) =>
      pulumi.RunError.isInstance(error) &&
      /^MyAppInstance "web" has invalid arguments:\n {2}replica: is not an argument; the arguments are platform, name, namespace, image, replicas,/.test(
        (error as Error).message,
      ),
  );
});

test("a platform that is not a MyAppOperator, or no arguments, stop the program naming what is wrong", async () => {
  const { MyAppInstance } = await import("../../../provider/resource.ts");
  const pulumi = await import("@pulumi/pulumi");
  // A Kubernetes provider (any resource without the platform's connection) where a MyAppOperator belongs.
  const provider = { urn: pulumi.output("urn:pulumi:dev::p::kubernetes:index:Provider::cluster") };
  assert.throws(
    () => new MyAppInstance("web", { image: "nginx:1.27", platform: provider } as never),
    (error: unknown) =>
      pulumi.RunError.isInstance(error) &&
      /\n {2}platform: must be a MyAppOperator of this package .*give kubeconfig and context instead/.test(
        (error as Error).message,
      ),
  );
  assert.throws(
    () => new MyAppInstance("web", null as never),
    (error: unknown) =>
      pulumi.RunError.isInstance(error) && /\n {2}arguments: must be an object/.test((error as Error).message),
  );
});

test("an instance passes its platform's chart sources as the operator allows them: the list and the default chart", async () => {
  const { platformChartSources } = await import("../../../provider/resource.ts");
  const defaultChart = { oci: "oci://ghcr.io/acme/charts/app", version: "1.2.0" };
  const platform = (settings: unknown) => ({ settings }) as never;
  assert.deepEqual(platformChartSources(platform({ chartSources: ["https://charts.example.com/"], defaultChart })), {
    sources: ["https://charts.example.com/", "oci://ghcr.io/acme/charts/app"],
    defaultChart,
  });
  assert.deepEqual(platformChartSources(platform({ chartSources: [] })), { sources: [] });
  // A platform that does not say (or no platform): the preview allows what the stack names, as before.
  assert.equal(platformChartSources(platform(undefined)), undefined);
  assert.equal(platformChartSources(undefined), undefined);
});
