/**
 * Plain Kubernetes objects, typed exactly as the Pulumi resources take them. The pure builders of this folder
 * return these, so the component can hand them to `@pulumi/kubernetes` unchanged and the renderer can print them
 * as YAML: one shape, two consumers. Type-only: nothing of Pulumi is loaded at runtime by a builder.
 */
import type * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@pulumi/kubernetes";
import type { CertManagerCertificateManifest } from "./webhook-certificate.ts";

/** An input type with every `Input<T>` replaced by `T`: what a YAML document holds. */
type Plain<T> = pulumi.Unwrap<T>;

export type NamespaceManifest = Plain<k8s.types.input.core.v1.Namespace>;
export type ServiceAccountManifest = Plain<k8s.types.input.core.v1.ServiceAccount>;
export type ServiceManifest = Plain<k8s.types.input.core.v1.Service>;
export type ConfigMapManifest = Plain<k8s.types.input.core.v1.ConfigMap>;
export type ClusterRoleManifest = Plain<k8s.types.input.rbac.v1.ClusterRole>;
export type ClusterRoleBindingManifest = Plain<k8s.types.input.rbac.v1.ClusterRoleBinding>;
export type RoleManifest = Plain<k8s.types.input.rbac.v1.Role>;
export type RoleBindingManifest = Plain<k8s.types.input.rbac.v1.RoleBinding>;
export type DeploymentManifest = Plain<k8s.types.input.apps.v1.Deployment>;
export type PodDisruptionBudgetManifest = Plain<k8s.types.input.policy.v1.PodDisruptionBudget>;
export type CustomResourceDefinitionManifest = Plain<k8s.types.input.apiextensions.v1.CustomResourceDefinition>;
export type ResourceRequirements = Plain<k8s.types.input.core.v1.ResourceRequirements>;
export type PolicyRuleManifest = Plain<k8s.types.input.rbac.v1.PolicyRule>;
export type ValidatingAdmissionPolicyManifest =
  Plain<k8s.types.input.admissionregistration.v1.ValidatingAdmissionPolicy>;
export type ValidatingAdmissionPolicyBindingManifest =
  Plain<k8s.types.input.admissionregistration.v1.ValidatingAdmissionPolicyBinding>;
export type ValidatingWebhookConfigurationManifest =
  Plain<k8s.types.input.admissionregistration.v1.ValidatingWebhookConfiguration>;
export type MutatingWebhookConfigurationManifest =
  Plain<k8s.types.input.admissionregistration.v1.MutatingWebhookConfiguration>;
/**
 * A MutatingAdmissionPolicy at `admissionregistration.k8s.io/v1` (GA in Kubernetes 1.36). @pulumi/kubernetes types
 * only the v1alpha1 version, whose fields v1 kept unchanged; the component creates it as a generic resource.
 */
export type MutatingAdmissionPolicyManifest =
  AtV1<k8s.types.input.admissionregistration.v1alpha1.MutatingAdmissionPolicy>;
export type MutatingAdmissionPolicyBindingManifest =
  AtV1<k8s.types.input.admissionregistration.v1alpha1.MutatingAdmissionPolicyBinding>;
type AtV1<T extends { kind?: unknown }> = Omit<Plain<T>, "apiVersion" | "kind"> & {
  apiVersion: "admissionregistration.k8s.io/v1";
  kind: NonNullable<pulumi.Unwrap<T["kind"]>>;
};

/** Any object this folder builds, for the renderer and for tests that walk them all. */
export type OperatorManifest =
  | CustomResourceDefinitionManifest
  | NamespaceManifest
  | ServiceAccountManifest
  | ClusterRoleManifest
  | ClusterRoleBindingManifest
  | RoleManifest
  | RoleBindingManifest
  | DeploymentManifest
  | ServiceManifest
  | ConfigMapManifest
  | PodDisruptionBudgetManifest
  | ValidatingAdmissionPolicyManifest
  | ValidatingAdmissionPolicyBindingManifest
  | ValidatingWebhookConfigurationManifest
  | MutatingWebhookConfigurationManifest
  | MutatingAdmissionPolicyManifest
  | MutatingAdmissionPolicyBindingManifest
  | CertManagerCertificateManifest;
