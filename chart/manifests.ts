/**
 * `helm template` output as objects: split the YAML stream and keep the template each object came from
 * (`# Source:` lines, for messages that name the file). Pure.
 */
import { parseDocument } from "yaml";

/** A Kubernetes object as rendered: only what every object has is typed. */
export interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly ownerReferences?: readonly unknown[];
  };
  readonly [field: string]: unknown;
}

/** One object of a render, with the template it came from. */
export interface RenderedManifest {
  /** `chart/templates/file.yaml`, as Helm's `# Source:` line says. */
  readonly source: string;
  readonly object: RenderedObject;
}

/** Parses a `helm template` stream. Throws, naming the template, on a document that is not a Kubernetes object. */
export function parseManifests(stream: string): RenderedManifest[] {
  const manifests: RenderedManifest[] = [];
  // Helm writes "---" between documents and a "# Source:" line at the top of each.
  for (const text of stream.split(/^---[ \t]*$/m)) {
    const source = /^# Source: (\S+)/m.exec(text)?.[1] ?? "the render";
    const document = parseDocument(text);
    if (document.errors.length > 0) {
      throw new Error(`${source} is not valid YAML: ${document.errors[0]?.message ?? ""}`);
    }
    const value: unknown = document.toJSON();
    if (value === null || value === undefined) continue;
    if (!isObject(value)) throw new Error(`${source} renders something that is not a Kubernetes object`);
    const metadata = value["metadata"];
    if (
      typeof value["apiVersion"] !== "string" ||
      typeof value["kind"] !== "string" ||
      !isObject(metadata) ||
      typeof metadata["name"] !== "string"
    ) {
      throw new Error(`${source} renders an object without apiVersion, kind and metadata.name`);
    }
    manifests.push({ source, object: value as unknown as RenderedObject });
  }
  return manifests;
}

/** The Helm hook an object is (`helm.sh/hook` annotation), if any: hooks and test pods are not applied. */
export function hookOf(object: RenderedObject): string | undefined {
  return object.metadata.annotations?.["helm.sh/hook"];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `Kind/name`, how messages name an object of a render. */
export function objectName(object: { readonly kind: string; readonly metadata: { readonly name?: string } }): string {
  return `${object.kind}/${object.metadata.name ?? ""}`;
}
