/**
 * From `helm template` output to the objects the operator applies: split the YAML stream, keep the template each
 * object came from (`# Source:` lines, for messages that name the file), set the namespace, and make the
 * instance their controller with the labels that let the operator find them again (its child informers and the
 * prune step). Pure.
 */
import { parseDocument } from "yaml";
import type { InstanceIdentity } from "../desired/index.ts";
import { controllerReference, labelKeys, managedBy } from "../desired/index.ts";
import { labelValue } from "../../api/index.ts";

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
 * Label on every object a chart rendered for an instance: the instance's name. Prune lists by it (together with
 * the controller reference, so only objects the instance owns are ever deleted).
 */
export const chartInstanceLabel = "myapp.example.com/chart-instance";

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

/**
 * The object as the operator applies it: in the instance's namespace, controlled by the instance, labelled as
 * the operator's (`app.kubernetes.io/managed-by` is the operator, which keeps it up to date, not Helm) and with
 * {@link chartInstanceLabel}. Everything else is exactly what the chart rendered.
 */
export function ownedObject(object: RenderedObject, instance: InstanceIdentity): RenderedObject {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      namespace: instance.namespace,
      labels: {
        ...object.metadata.labels,
        [labelKeys.managedBy]: managedBy,
        [chartInstanceLabel]: labelValue(instance.name),
      },
      ownerReferences: [controllerReference(instance)],
    },
  };
}

/** `Kind/name`, how messages name an object. */
export function objectName(object: { readonly kind: string; readonly metadata: { readonly name?: string } }): string {
  return `${object.kind}/${object.metadata.name ?? ""}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
