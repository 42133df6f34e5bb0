/**
 * What the reconciler reads from live children: only the fields it looks at, all optional, because a live
 * object may be half-written, hand-edited or from another controller. Readers must never assume a field is there.
 */
import type { KubeObject } from "../../kube/index.ts";

export interface ObservedContainer {
  readonly name?: string;
  readonly image?: string;
}

export interface ObservedClaimTemplate {
  readonly metadata?: { readonly name?: string };
  readonly spec?: {
    readonly storageClassName?: string;
    readonly resources?: { readonly requests?: { readonly storage?: string } };
  };
}

/** A Deployment or StatefulSet as the apiserver returns it. */
export interface ObservedWorkload extends KubeObject {
  readonly spec?: {
    readonly replicas?: number;
    /** A StatefulSet's governing Service. */
    readonly serviceName?: string;
    readonly template?: { readonly spec?: { readonly containers?: readonly ObservedContainer[] } };
    readonly volumeClaimTemplates?: readonly ObservedClaimTemplate[];
  };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly replicas?: number;
    readonly updatedReplicas?: number;
    readonly readyReplicas?: number;
    readonly availableReplicas?: number;
    readonly currentRevision?: string;
    readonly updateRevision?: string;
    readonly conditions?: readonly {
      readonly type?: string;
      readonly status?: string;
      readonly reason?: string;
      readonly message?: string;
    }[];
  };
}

/** A PersistentVolumeClaim. */
export interface ObservedClaim extends KubeObject {
  readonly spec?: {
    readonly storageClassName?: string;
    readonly resources?: { readonly requests?: { readonly storage?: string } };
  };
  readonly status?: {
    readonly phase?: string;
    readonly capacity?: { readonly storage?: string };
    /** Resize progress: Resizing, FileSystemResizePending, ControllerResizeError, NodeResizeError. */
    readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly message?: string }[];
    /** `storage: ControllerResizeInProgress | ControllerResizeInfeasible | NodeResize...` */
    readonly allocatedResourceStatuses?: Readonly<Record<string, string>>;
  };
}

/** A StorageClass. */
export interface ObservedStorageClass extends KubeObject {
  readonly allowVolumeExpansion?: boolean;
}

/** A count from a status field: a non-negative integer, or 0 when absent or malformed. */
export function count(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0;
}
