/** The StatefulSet of an instance with storage: one volume claim per replica, kept across restarts and moves. */
import { childLabels, selectorLabels } from "./labels.ts";
import { governingServiceName, workloadName } from "../../api/index.ts";
import type { DesiredInput, DesiredStatefulSet } from "./objects.ts";
import { controllerReference } from "./owner.ts";
import { dataVolumeName, desiredPodTemplate } from "./pod-template.ts";

/**
 * The StatefulSet for an instance whose spec has storage.
 *
 * - `podManagementPolicy: Parallel`: replicas start and stop together (the app keeps no ordinal roles), so a
 *   move from a Deployment or a scale-up is not serialised pod by pod. Rolling updates stay one pod at a time.
 * - `persistentVolumeClaimRetentionPolicy: Retain`: the StatefulSet controller never deletes claims; only the
 *   operator does, when the instance is deleted with `storageReclaimPolicy: Delete`.
 * - `serviceName`: the headless governing Service (desiredGoverningService), so each pod has a DNS name.
 * - The claim template and serviceName are immutable in a StatefulSet; the reconciler re-creates the StatefulSet
 *   (orphaning its pods) when the storage size grows or the governing Service changes.
 *
 * @throws Error when the spec has no storage (the caller chose the wrong builder).
 */
export function desiredStatefulSet(instance: DesiredInput): DesiredStatefulSet {
  const { metadata, spec } = instance;
  if (spec.storage === undefined) {
    throw new Error(
      `desiredStatefulSet(${metadata.namespace}/${metadata.name}): spec.storage is not set; use desiredDeployment`,
    );
  }
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name: workloadName(metadata.name),
      namespace: metadata.namespace,
      labels: childLabels(metadata.name),
      ownerReferences: [controllerReference(metadata)],
    },
    spec: {
      replicas: spec.replicas,
      serviceName: governingServiceName(metadata.name),
      podManagementPolicy: "Parallel",
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
      selector: { matchLabels: selectorLabels(metadata.name) },
      template: desiredPodTemplate(instance),
      volumeClaimTemplates: [
        {
          metadata: { name: dataVolumeName, labels: childLabels(metadata.name) },
          spec: {
            accessModes: ["ReadWriteOnce"],
            ...(spec.storageClassName !== undefined ? { storageClassName: spec.storageClassName } : {}),
            resources: { requests: { storage: spec.storage } },
          },
        },
      ],
    },
  };
}

/** Name of the claim replica `ordinal` of a StatefulSet gets: `<template>-<statefulset>-<ordinal>`. */
export function claimName(statefulSetName: string, ordinal: number): string {
  return `${dataVolumeName}-${statefulSetName}-${ordinal}`;
}

/** True when `name` is one of the data claims of the StatefulSet `statefulSetName`. */
export function isDataClaimOf(name: string, statefulSetName: string): boolean {
  return claimOrdinal(name, statefulSetName) !== undefined;
}

/** The replica whose data claim `name` is, if it is one of the StatefulSet `statefulSetName`'s. */
export function claimOrdinal(name: string, statefulSetName: string): number | undefined {
  const prefix = `${dataVolumeName}-${statefulSetName}-`;
  const ordinal = name.slice(prefix.length);
  return name.startsWith(prefix) && /^(0|[1-9][0-9]{0,9})$/.test(ordinal) ? Number(ordinal) : undefined;
}
