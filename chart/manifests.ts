/**
 * `helm template` output as objects: split the YAML stream and keep the template each object came from
 * (`# Source:` lines, for messages that name the file). The YAML is read by render-yaml.ts, in bounded pieces.
 */
import { parseDocument, readDocuments, RenderYamlError, type RenderDocument } from "./render-yaml.ts";

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

/**
 * Reads a `helm template` stream, yielding to the event loop as it goes (render-yaml.ts). Throws, naming the
 * template, on a document that is not YAML or not a Kubernetes object.
 */
export async function readManifests(stream: string): Promise<RenderedManifest[]> {
  let documents;
  try {
    documents = await readDocuments(stream);
  } catch (error) {
    if (!(error instanceof RenderYamlError)) throw error;
    throw new Error(`${sourceOf(error.document ?? "")} is not valid YAML: ${error.message}`, { cause: error });
  }
  return documents.flatMap(manifestOf);
}

/** {@link readManifests} without yielding, for a stream known to be small (tests, fixtures). */
export function parseManifests(stream: string): RenderedManifest[] {
  return stream.split(/^---[ \t]*$/m).flatMap((text) => {
    let value;
    try {
      value = parseDocument(text);
    } catch (error) {
      if (!(error instanceof RenderYamlError)) throw error;
      throw new Error(`${sourceOf(text)} is not valid YAML: ${error.message}`, { cause: error });
    }
    return manifestOf({ text, value });
  });
}

/** The manifest of one document: none for an empty one. Throws when it is not a Kubernetes object. */
function manifestOf({ text, value }: RenderDocument): RenderedManifest[] {
  const source = sourceOf(text);
  if (value === null || value === undefined) return [];
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
  return [{ source, object: value as unknown as RenderedObject }];
}

/** The template a document came from, as Helm's `# Source:` line names it. */
function sourceOf(text: string): string {
  return /^# Source: (\S+)/m.exec(text)?.[1] ?? "the render";
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
