/**
 * The values a chart renders an instance with: `spec.values` (free-form), then each typed spec field placed at
 * its value path (`spec.chart.valuePaths`, defaulting to `helm create`'s names), so the typed fields win. Helm
 * itself merges the result over the chart's values.yaml, exactly as `helm template -f values.json` does. Pure.
 */
import { defaultValuePaths, type MyAppInstanceSpec, type ValuePathField } from "../api/index.ts";

/** Chart values: a JSON object. */
export type Values = Record<string, unknown>;

/** An image reference split the way charts take it: repository, tag and digest. */
export interface ImageParts {
  /** Registry and path, e.g. `ghcr.io/stefanprodan/podinfo`. */
  readonly repository: string;
  /** The tag; `latest` when the reference has neither tag nor digest (what a container runtime would pull). */
  readonly tag: string | undefined;
  /** `sha256:...`, when the reference has one. */
  readonly digest: string | undefined;
}

/** Splits `[registry[:port]/]path[:tag][@digest]`; a `:` before the last `/` is a registry port, not a tag. */
export function splitImage(image: string): ImageParts {
  const at = image.indexOf("@");
  const digest = at >= 0 ? image.slice(at + 1) : undefined;
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(":");
  const hasTag = colon > name.lastIndexOf("/");
  const repository = hasTag ? name.slice(0, colon) : name;
  const tag = hasTag ? name.slice(colon + 1) : digest === undefined ? "latest" : undefined;
  return { repository, tag, digest };
}

/** The value path of `field` for `spec`: the spec's own, else the default; "" means "not mapped". */
export function valuePath(spec: MyAppInstanceSpec, field: ValuePathField): string {
  return spec.chart?.valuePaths?.[field] ?? defaultValuePaths[field];
}

/** The values for rendering `spec`'s chart. */
export function chartValues(spec: MyAppInstanceSpec): Values {
  const values = structuredClone(spec.values ?? {});
  const image = splitImage(spec.image);
  const typed: Record<ValuePathField, unknown> = {
    replicas: spec.replicas,
    imageRepository: image.repository,
    imageTag: image.tag,
    imageDigest: image.digest,
    port: spec.port,
    storage: spec.storage,
  };
  for (const [field, value] of Object.entries(typed) as [ValuePathField, unknown][]) {
    const path = valuePath(spec, field);
    if (path !== "" && value !== undefined) setPath(values, path, value);
  }
  return values;
}

/**
 * Sets `value` at the dotted `path`, creating (or replacing non-object) intermediate maps. Values are data: only
 * own properties are read and written (as JSON.parse and structuredClone make them), so no path, whatever its
 * segments (`__proto__`, `constructor`, `prototype`), walks into or writes onto a prototype; such a segment is an
 * ordinary key here. The api refuses these segments before a path gets this far.
 */
export function setPath(values: Values, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = values;
  for (const key of keys.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (typeof next === "object" && next !== null && !Array.isArray(next)) node = next as Values;
    else node = setOwn(node, key, {});
  }
  setOwn(node, keys[keys.length - 1] ?? path, value);
}

/** Defines `key` as an own data property, as JSON.parse would: never the `__proto__` setter or an inherited one. */
function setOwn<T>(node: Values, key: string, value: T): T {
  Object.defineProperty(node, key, { value, writable: true, enumerable: true, configurable: true });
  return value;
}
