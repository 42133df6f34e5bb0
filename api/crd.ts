/**
 * The CustomResourceDefinition of MyAppInstance, generated from the zod schemas: their JSON Schema, made
 * structural, carries the descriptions (`kubectl explain`), bounds, patterns, defaults and CEL rules. Nothing
 * here restates a field rule; it adds only what is about the resource rather than its fields.
 */
import { createHash } from "node:crypto";
import { stringify } from "yaml";
import * as z from "zod";
import { byCodeUnits } from "./code-unit-order.ts";
import { crdRevision, crdRevisionAnnotation } from "./crd-revision.ts";
import { category, crdName, group, kind, listKind, plural, shortName, singular, version } from "./names.ts";
import { myAppInstanceSchema } from "./instance.ts";
import { myAppInstanceSpecSchema } from "./spec.ts";
import { myAppInstanceStatusSchema } from "./status.ts";
import { toStructuralSchema } from "./structural.ts";
import type { StructuralSchema } from "./structural.ts";

function jsonSchemaOf(schema: z.ZodType): StructuralSchema {
  // `input`: the schema describes what users write, so defaulted fields are optional and carry `default`.
  return toStructuralSchema(z.toJSONSchema(schema, { target: "openapi-3.0", io: "input" }) as Record<string, unknown>);
}

/**
 * The CRD's `openAPIV3Schema`. apiVersion, kind and metadata are the apiserver's business; only their types
 * appear, as in every CRD.
 */
export function openApiV3Schema(): StructuralSchema {
  return {
    description: z.globalRegistry.get(myAppInstanceSchema)?.description ?? "",
    type: "object",
    properties: {
      apiVersion: {
        description: "Versioned schema of this representation of an object; the apiserver rejects other values.",
        type: "string",
      },
      kind: { description: "The REST resource this object represents.", type: "string" },
      metadata: { type: "object" },
      spec: jsonSchemaOf(myAppInstanceSpecSchema),
      status: jsonSchemaOf(myAppInstanceStatusSchema),
    },
    required: ["spec"],
  };
}

/** The CustomResourceDefinition object, ready for server-side apply, with its revision (crd-revision.ts). */
export function buildCrd(): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: crdName, annotations: { [crdRevisionAnnotation]: String(crdRevision) } },
    spec: {
      group,
      names: { kind, listKind, plural, singular, shortNames: [shortName], categories: [category] },
      scope: "Namespaced",
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: openApiV3Schema() },
          subresources: {
            // The operator writes status through its own endpoint; users' writes to the object leave it alone.
            status: {},
            // `kubectl scale` and the HorizontalPodAutoscaler read and write replicas here.
            scale: {
              specReplicasPath: ".spec.replicas",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".status.selector",
            },
          },
          additionalPrinterColumns: [
            { name: "Image", type: "string", jsonPath: ".spec.image", description: "Desired image" },
            { name: "Desired", type: "integer", jsonPath: ".spec.replicas", description: "Desired replicas" },
            { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas", description: "Ready replicas" },
            { name: "Phase", type: "string", jsonPath: ".status.phase", description: "Lifecycle phase" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
            // `-o wide` only (priority 1): where the app answers in the cluster (its Service's DNS name and port) and
            // the operator's summary, so people who never open Pulumi see where to reach it and why it is not Ready.
            {
              name: "Endpoint",
              type: "string",
              jsonPath: ".status.endpoint",
              description: "In-cluster address of the instance's Service, <service>.<namespace>.svc:<port>",
              priority: 1,
            },
            {
              name: "Message",
              type: "string",
              jsonPath: ".status.message",
              description: "The operator's summary of the current state",
              priority: 1,
            },
          ],
        },
      ],
    },
  };
}

/**
 * `sha256:HEX` of a CRD's `spec` (default: the generated one's: names, scope, schema, subresources, printer columns)
 * as JSON with its object keys sorted, so only a change of what it says changes the digest. crd-revision.ts
 * records the digest its revision stands for.
 */
export function crdSpecDigest(spec: unknown = buildCrd()["spec"]): string {
  return `sha256:${createHash("sha256").update(canonicalJson(spec)).digest("hex")}`;
}

/** JSON with every object's keys in code-unit order, arrays in their own order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, child]) => child !== undefined)
      .sort(([a], [b]) => byCodeUnits(a, b));
    return `{${entries.map(([key, child]) => `${JSON.stringify(key)}:${canonicalJson(child)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The CRD as the YAML committed in config/crd/ (what `npm run manifests` writes). */
export function crdYaml(): string {
  const header = "# Generated from api/ by `npm run manifests` (api/generate-crd.ts). Do not edit.\n";
  return header + stringify(buildCrd(), { lineWidth: 0 });
}
