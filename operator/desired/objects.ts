/**
 * The shapes of the objects the builders return: apply configurations that hold only the fields the operator
 * owns, in the wire format (what server-side apply receives). Everything else on a live object (status, server
 * defaults, other managers' fields) is deliberately absent: absent means "not ours".
 */
import type { MyAppInstanceSpec } from "../../api/index.ts";

/** The parts of an instance the builders read: its identity and its validated, defaulted spec. */
export interface DesiredInput {
  readonly metadata: InstanceIdentity;
  readonly spec: MyAppInstanceSpec;
}

/** Name, namespace and uid of a MyAppInstance; the uid goes into the children's ownerReferences. */
export interface InstanceIdentity {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/** A controller ownerReference, as metav1.OwnerReference. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller: boolean;
  readonly blockOwnerDeletion: boolean;
}

/** Metadata of a child. */
export interface ChildMetadata {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ownerReferences: readonly OwnerReference[];
}

export interface ContainerPort {
  readonly name: string;
  readonly containerPort: number;
  readonly protocol: "TCP";
}

export interface VolumeMount {
  readonly name: string;
  readonly mountPath: string;
}

/** CPU and memory quantities, as core/v1 ResourceList. */
export interface ResourceList {
  readonly cpu?: string;
  readonly memory?: string;
}

export interface ResourceRequirements {
  readonly requests: ResourceList;
  readonly limits: ResourceList;
}

/** The container-level half of the pod's security settings. */
export interface ContainerSecurityContext {
  readonly allowPrivilegeEscalation: boolean;
  readonly capabilities: { readonly drop: readonly string[] };
}

/** The pod-level half of the pod's security settings. */
export interface PodSecurityContext {
  readonly runAsNonRoot: boolean;
  readonly seccompProfile: { readonly type: "RuntimeDefault" };
}

export interface Container {
  readonly name: string;
  readonly image: string;
  readonly ports: readonly ContainerPort[];
  readonly volumeMounts: readonly VolumeMount[];
  readonly readinessProbe: { readonly tcpSocket: { readonly port: string } };
  readonly resources: ResourceRequirements;
  readonly securityContext: ContainerSecurityContext;
}

export interface Volume {
  readonly name: string;
  readonly emptyDir?: Readonly<Record<string, never>>;
}

export interface PodTemplate {
  readonly metadata: { readonly labels: Readonly<Record<string, string>> };
  readonly spec: {
    readonly securityContext: PodSecurityContext;
    readonly containers: readonly Container[];
    readonly volumes?: readonly Volume[];
  };
}

export interface LabelSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
}

export interface DesiredDeployment {
  readonly apiVersion: "apps/v1";
  readonly kind: "Deployment";
  readonly metadata: ChildMetadata;
  readonly spec: {
    readonly replicas: number;
    readonly selector: LabelSelector;
    readonly template: PodTemplate;
  };
}

export interface VolumeClaimTemplate {
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> };
  readonly spec: {
    readonly accessModes: readonly string[];
    readonly storageClassName?: string;
    readonly resources: { readonly requests: { readonly storage: string } };
  };
}

export interface DesiredStatefulSet {
  readonly apiVersion: "apps/v1";
  readonly kind: "StatefulSet";
  readonly metadata: ChildMetadata;
  readonly spec: {
    readonly replicas: number;
    readonly serviceName: string;
    readonly podManagementPolicy: "Parallel";
    readonly persistentVolumeClaimRetentionPolicy: { readonly whenDeleted: "Retain"; readonly whenScaled: "Retain" };
    readonly selector: LabelSelector;
    readonly template: PodTemplate;
    readonly volumeClaimTemplates: readonly VolumeClaimTemplate[];
  };
}

export interface ServicePort {
  readonly name: string;
  readonly port: number;
  readonly targetPort: number;
  readonly protocol: "TCP";
}

export interface DesiredService {
  readonly apiVersion: "v1";
  readonly kind: "Service";
  readonly metadata: ChildMetadata;
  readonly spec: {
    readonly type: "ClusterIP";
    /** "None" makes the Service headless: DNS answers with the pods' addresses, one name per pod. */
    readonly clusterIP?: "None";
    /** Pods get their DNS names before they are ready, so peers can find each other while starting. */
    readonly publishNotReadyAddresses?: boolean;
    readonly selector: Readonly<Record<string, string>>;
    readonly ports: readonly ServicePort[];
  };
}

/** Either workload kind. */
export type DesiredWorkload = DesiredDeployment | DesiredStatefulSet;
