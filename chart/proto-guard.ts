/**
 * The process-wide half of "values are data": `Object.prototype.__proto__` made to throw, so no key that a tenant
 * controls (a value path, a key of `spec.values`, a field of a rendered object) can reach a prototype shared by
 * every object of the process through it, whatever code a future change adds. The api refuses such keys and the
 * values builder writes own properties only; this catches what they might miss, loudly, in the one reconcile or
 * preview that met it, instead of corrupting the process for every tenant.
 *
 * Where we own the command line, Node does it (`--disable-proto=throw`, {@link disableProtoFlag}): the operator
 * container's NODE_OPTIONS and the local launchers. Where we do not (the `myapp-operator` bin run as `node
 * main.js`, Pulumi's dynamic-provider host), {@link disableProto} does the same from inside, before any tenant data
 * is read, and makes it permanent: the accessor it installs is not configurable, so later code cannot put the
 * setter back (Node's own flag leaves it configurable). Both throw rather than delete: none of the libraries these
 * processes run reads or writes `__proto__` as a property (Pulumi, grpc-js, protobufjs, google-protobuf, yaml, zod,
 * undici, pino and prom-client write `{ __proto__: null }` literals or compare key names, which the flag does not
 * touch), and an exception names the code that tried, where deletion would let it carry on with a wrong object.
 */

/** Node's flag with the same effect, for the command lines we own. */
export const disableProtoFlag = "--disable-proto=throw";

/** The error Node throws under {@link disableProtoFlag}: same code, so handlers need to know only one. */
function protoAccessError(): Error {
  return Object.assign(
    new Error(
      "Accessing Object.prototype.__proto__ has been disallowed in this process (as with --disable-proto=throw): " +
        "use Object.getPrototypeOf / Object.setPrototypeOf, and treat keys named __proto__ as data",
    ),
    { code: "ERR_PROTO_ACCESS" },
  );
}

const throwing = {
  get(): never {
    throw protoAccessError();
  },
  set(): never {
    throw protoAccessError();
  },
};

/**
 * Makes `Object.prototype.__proto__` throw on every read and write, for good. Idempotent; works whether Node's
 * flag was given (`throw` or `delete`) or not. Object literals (`{ __proto__: null }`), `Object.create`,
 * `Object.getPrototypeOf`/`setPrototypeOf` and JSON.parse's own `__proto__` keys are unaffected.
 */
export function disableProto(): void {
  // Ours already; else replace whatever is there, Node's own throwing accessor included (it is configurable).
  if (Object.getOwnPropertyDescriptor(Object.prototype, "__proto__")?.get === throwing.get) return;
  Object.defineProperty(Object.prototype, "__proto__", { ...throwing, enumerable: false, configurable: false });
}

/** True when reading `Object.prototype.__proto__` throws in this process (by the flag or {@link disableProto}). */
export function protoDisabled(): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(Object.prototype, "__proto__");
  if (descriptor?.get === throwing.get) return true;
  if (descriptor?.get === undefined) return false;
  try {
    descriptor.get.call({});
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === "ERR_PROTO_ACCESS";
  }
}
