/**
 * Where a rendered object keeps the pods it makes: the pod template of each workload kind, with its field path
 * for messages. The policy checks (pod-security.ts, render-rules.ts) read pods only through this, so a workload
 * kind added to the allowed kinds is checked as soon as it is listed here. Pure.
 */
import type { RenderedObject } from "./manifests.ts";

/** A pod (or pod template) inside a rendered object: its metadata and spec, and where they are. */
export interface PodTemplate {
  /** The template's metadata (annotations: AppArmor), possibly absent. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The pod spec, possibly empty. */
  readonly spec: Readonly<Record<string, unknown>>;
  /** Field path of the metadata in the object, e.g. `spec.template.metadata`. */
  readonly metadataPath: string;
  /** Field path of the pod spec in the object, e.g. `spec.template.spec`. */
  readonly specPath: string;
}

/** The path to the pod template of each kind that makes pods, by `apiVersion/Kind`. */
const templatePaths: Readonly<Record<string, readonly string[]>> = {
  "v1/Pod": [],
  "v1/ReplicationController": ["spec", "template"],
  "v1/PodTemplate": ["template"],
  "apps/v1/Deployment": ["spec", "template"],
  "apps/v1/StatefulSet": ["spec", "template"],
  "apps/v1/DaemonSet": ["spec", "template"],
  "apps/v1/ReplicaSet": ["spec", "template"],
  "batch/v1/Job": ["spec", "template"],
  "batch/v1/CronJob": ["spec", "jobTemplate", "spec", "template"],
};

/**
 * The pod template of `object`, or undefined for a kind that makes no pods. A workload whose template is missing
 * or malformed yields an empty one (the apiserver refuses such an object anyway; nothing in it is allowed).
 */
export function podTemplateOf(object: RenderedObject): PodTemplate | undefined {
  const path = templatePaths[`${object.apiVersion}/${object.kind}`];
  if (path === undefined) return undefined;
  let template: unknown = object;
  for (const key of path) template = record(template)[key];
  const prefix = path.join(".");
  return {
    metadata: record(record(template)["metadata"]),
    spec: record(record(template)["spec"]),
    metadataPath: prefix ? `${prefix}.metadata` : "metadata",
    specPath: prefix ? `${prefix}.spec` : "spec",
  };
}

/** `value` as a plain object, or an empty one: rendered YAML is untyped. */
export function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** `value` as an array, or an empty one. */
export function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}
