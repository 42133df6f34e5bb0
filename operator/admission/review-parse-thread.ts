/**
 * Large AdmissionReview bodies parsed off the event loop every tenant, reconcile and lease renewal is served from.
 * Anyone on the pod network can post a 3 MiB review, and what it costs the thread that parses it follows its keys,
 * not its bytes: a spec of 250,000 unknown keys (2.76 MiB) took ~170 ms of JSON.parse and ~80 ms of validation, and
 * four connections posting it in a loop kept the event loop ~97% busy. The apiserver's own reviews are a few KiB,
 * up to ~3 MiB in the rare case (object and oldObject of a large instance), so none is refused for its size here.
 *
 * A body of at least {@link offLoopBytes} goes to a thread (chart/render-yaml-thread.ts's ParseThread: one body at
 * a time, a deadline, a bounded heap, ended when idle) that parses it and sends back only what the handlers read:
 * the request's scalars and, of object and oldObject, `metadata.name` and the spec. A spec with more fields outside
 * `spec.values` than the schema reads (api/validate.ts `maxSpecFields`, which the apiserver's pruned reviews never
 * reach) comes back as just past that bound, and `spec.values` larger than the platform's `--render-values` as a
 * stand-in of the same size: the verdicts on them (too many fields; too large) are the same, and what crosses back
 * to the event loop is small whatever was sent. The one verdict that changes: an UPDATE that shrinks values already
 * over the limit is not checked for reserved keys or depth here (the reconcile still refuses them).
 *
 * The thread's module is this file's {@link workerSource}, loaded from a `data:` URL: plain JavaScript (checked by
 * the tests through the thread itself), so the operator's bundle carries it without a file of its own.
 */
import { maxValuesDepth } from "../../api/chart.ts";
import { maxSpecFields } from "../../api/validate.ts";
import { ParseThread, reviewParseThreadHeapMiB } from "../../chart/render-yaml-thread.ts";

/** Bodies this large or larger are parsed on the thread: the apiserver's usual reviews (a few KiB) never are. */
export const offLoopBytes = 64 * 1024;

/** How long one body may take to parse on the thread: a 3 MiB one takes well under a second. */
const deadlineMs = 5_000;

/** The thread's module: parses `text` and answers with the review's essentials (see above), or a refusal. */
export const workerSource = `
import { parentPort } from "node:worker_threads";
const maxSpecFields = ${maxSpecFields};
const maxValuesDepth = ${maxValuesDepth};
const isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
// An object or list is sent back empty: whatever it was, what the handlers say of it is "not a string".
const scalar = (value) => (typeof value !== "object" || value === null ? value : Array.isArray(value) ? [] : {});
// The keys and items of the spec's objects and lists, spec.values aside, up to just past the bound (api/validate.ts).
function fieldsOutsideValues(spec) {
  let fields = 0;
  const pending = [spec];
  for (let node = pending.pop(); node !== undefined && fields <= maxSpecFields; node = pending.pop()) {
    for (const key in node) {
      if (!Object.hasOwn(node, key) || (node === spec && key === "values")) continue;
      fields++;
      const value = node[key];
      if (value !== null && typeof value === "object") pending.push(value);
      if (fields > maxSpecFields) break;
    }
  }
  return fields;
}
// Values over the limit as an object of the same compact JSON size: judged by their size alone.
function slimValues(values, maxValuesBytes) {
  if (values === undefined) return values;
  if (maxValuesBytes > 0) {
    let bytes;
    try {
      bytes = Buffer.byteLength(JSON.stringify(values) ?? "", "utf8");
    } catch {
      bytes = countedBytes(values); // nested past JSON.stringify's stack: counted as the event loop counts them
    }
    if (bytes > maxValuesBytes) return { "": "x".repeat(Math.max(0, bytes - 7)) };
  }
  return tooDeep(values) ? deepStandIn() : values;
}
// chart/values-size.ts countedBytes, here as the thread's module has no imports: leaves and keys stringified alone.
function countedBytes(values) {
  const leaf = (value) => Buffer.byteLength(JSON.stringify(value) ?? "null", "utf8");
  let bytes = 0;
  const pending = [values];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    if (typeof value !== "object" || value === null) {
      bytes += leaf(value);
      continue;
    }
    if (Array.isArray(value)) {
      bytes += 2 + Math.max(0, value.length - 1);
      for (const item of value) pending.push(item === undefined ? null : item);
      continue;
    }
    const entries = Object.entries(value).filter(([, member]) => member !== undefined);
    bytes += 2 + Math.max(0, entries.length - 1);
    for (const [key, member] of entries) {
      bytes += leaf(key) + 1;
      pending.push(member);
    }
  }
  return bytes;
}
// Values nested past the schema's depth come back as a stand-in nested just past it: the verdict is the same, and
// what crosses back is small (the event loop's structured clone of thousands of levels overflows its stack).
function tooDeep(values) {
  const pending = [[values, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (typeof value !== "object" || value === null) continue;
    if (depth > maxValuesDepth) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) pending.push([child, depth + 1]);
  }
  return false;
}
function deepStandIn() {
  let value = 1;
  for (let depth = 0; depth <= maxValuesDepth; depth++) value = { a: value };
  return value;
}
function slimSpec(spec, maxValuesBytes) {
  if (spec === null || typeof spec !== "object") return spec;
  if (fieldsOutsideValues(spec) > maxSpecFields) {
    const filler = Array.from({ length: maxSpecFields + 1 }, () => 0);
    if (Array.isArray(spec)) return filler;
    const kept = Object.fromEntries(filler.map((zero, i) => ["field" + i, zero]));
    if (Object.hasOwn(spec, "values")) kept.values = slimValues(spec.values, maxValuesBytes);
    return kept;
  }
  if (Array.isArray(spec) || !Object.hasOwn(spec, "values")) return spec;
  return { ...spec, values: slimValues(spec.values, maxValuesBytes) };
}
function slimObject(object, maxValuesBytes) {
  if (!isRecord(object)) return scalar(object);
  const slim = {};
  if (isRecord(object.metadata)) slim.metadata = { name: scalar(object.metadata.name) };
  if (Object.hasOwn(object, "spec")) slim.spec = slimSpec(object.spec, maxValuesBytes);
  return slim;
}
function essentials(review, maxValuesBytes) {
  if (!isRecord(review)) return scalar(review);
  const slim = { apiVersion: scalar(review.apiVersion), kind: scalar(review.kind) };
  const request = review.request;
  if (!isRecord(request)) {
    if (Object.hasOwn(review, "request")) slim.request = scalar(request);
    return slim;
  }
  slim.request = {};
  for (const key of ["uid", "operation", "namespace", "name", "subResource", "dryRun"]) {
    if (Object.hasOwn(request, key)) slim.request[key] = scalar(request[key]);
  }
  for (const key of ["object", "oldObject"]) {
    if (Object.hasOwn(request, key)) slim.request[key] = slimObject(request[key], maxValuesBytes);
  }
  return slim;
}
parentPort.on("message", ({ text, budget }) => {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    parentPort.postMessage({ refusal: error.message });
    return;
  }
  try {
    parentPort.postMessage({ value: essentials(value, budget), expandedBytes: 0 });
  } catch (error) {
    parentPort.postMessage({ fault: error.stack ?? String(error) });
  }
});
`;

/** Thrown for a body that is not JSON: the server answers 400. */
export class ReviewSyntaxError extends SyntaxError {}

/** Parses large review bodies on their own thread. */
export class ReviewParseThread {
  readonly #thread: ParseThread;
  readonly #maxValuesBytes: number;

  /** `maxValuesKiB`: the policy's `--render-values`; unset, values come back whole. */
  constructor(maxValuesKiB: number | undefined, options: { readonly deadlineMs?: number } = {}) {
    this.#maxValuesBytes = maxValuesKiB === undefined ? 0 : maxValuesKiB * 1024;
    this.#thread = new ParseThread({
      deadlineMs: options.deadlineMs ?? deadlineMs,
      heapMiB: reviewParseThreadHeapMiB,
      workerUrl: new URL(`data:text/javascript,${encodeURIComponent(workerSource)}`),
    });
  }

  /** The review's essentials; a {@link ReviewSyntaxError} when it is not JSON or could not be parsed in time. */
  async parse(body: Buffer): Promise<unknown> {
    // `budget` carries the values' limit: what the thread answers the same way as the render thread's budget.
    const answer = await this.#thread.run({ text: body.toString("utf8"), budget: this.#maxValuesBytes });
    if ("refusal" in answer) throw new ReviewSyntaxError(answer.refusal);
    return answer.value;
  }

  close(): Promise<void> {
    return this.#thread.close();
  }
}
