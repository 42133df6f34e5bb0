/**
 * `helm template` output as objects: split the YAML stream and keep the template each object came from
 * (`# Source:` lines, for messages that name the file). The YAML is read by render-yaml.ts, in bounded pieces.
 */
import {
  dns1123LabelPattern,
  dns1123SubdomainPattern,
  maxDns1123LabelLength,
  maxDns1123SubdomainLength,
} from "../api/dns-names.ts";
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
  const malformed = identityProblem(value["apiVersion"], value["kind"], metadata["name"], metadata["namespace"]);
  if (malformed) throw new Error(`${source} renders an object whose ${malformed}`);
  return [{ source, object: value as unknown as RenderedObject }];
}

/**
 * What is wrong with an object's identity, if anything. Every kind a chart may render is named by a DNS subdomain
 * in a namespace named by a DNS label; checked before the object is named in a message, looked up or logged,
 * since the text is the chart's (a 3 MiB name would otherwise be echoed on every reconcile).
 */
function identityProblem(apiVersion: string, kind: string, name: string, namespace: unknown): string | undefined {
  if (apiVersion.length > maxApiVersionLength || !apiVersionPattern.test(apiVersion)) {
    return `apiVersion ${shown(apiVersion)} is not group/version or version`;
  }
  if (kind.length > maxDns1123LabelLength || !kindPattern.test(kind)) return `kind ${shown(kind)} is not a kind name`;
  if (name.length > maxDns1123SubdomainLength || !dns1123Subdomain.test(name)) {
    return `metadata.name ${shown(name)} is not a DNS subdomain of at most ${maxDns1123SubdomainLength} characters`;
  }
  if (
    namespace !== undefined &&
    (typeof namespace !== "string" || namespace.length > maxDns1123LabelLength || !dns1123Label.test(namespace))
  ) {
    return `metadata.namespace ${shown(namespace)} is not a DNS label of at most ${maxDns1123LabelLength} characters`;
  }
  return undefined;
}

const maxApiVersionLength = maxDns1123SubdomainLength + 1 + maxDns1123LabelLength;
const apiVersionPattern = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+[a-z0-9]*$/;
const kindPattern = /^[A-Za-z][A-Za-z0-9]*$/;
const dns1123Subdomain = new RegExp(dns1123SubdomainPattern);
const dns1123Label = new RegExp(dns1123LabelPattern);

/** Text of a chart's, as a message shows it: quoted, and cut after 64 characters. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 66 ? text : `${text.slice(0, 64)}…" (${text.length} characters)`;
}

/** The template a document came from, as Helm's `# Source:` line names it (cut: the path is the chart's). */
function sourceOf(text: string): string {
  const source = /^# Source: (\S+)/m.exec(text)?.[1];
  return source === undefined ? "the render" : shownChartName(source);
}

/** A template path or object name of a chart's, as messages show it: cut after {@link maxSourceLength} characters. */
export function shownChartName(source: string): string {
  return source.length <= maxSourceLength
    ? source
    : `${source.slice(0, maxSourceLength)}… (${source.length} characters)`;
}

/** The longest template path a message shows whole. */
const maxSourceLength = 256;

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
