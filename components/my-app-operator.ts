/**
 * MyAppOperator: one `pulumi up` installs the MyAppInstance platform into a cluster: the CRD (waited on until
 * Established, retained on destroy unless told otherwise, never put back over a newer revision), the operator's
 * namespace, ServiceAccount, least-privilege RBAC, and (in-cluster) the operator Deployment with its metrics Service
 * and PodDisruptionBudget.
 *
 * Every object comes from the pure builders next to this file; this class only wires them into Pulumi resources.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { operatorAdmissionPolicy } from "./admission-policy.ts";
import { chartSourcesCaConfigMap } from "./chart-sources-ca.ts";
import type { DefaultsPolicyServed } from "./cluster-admission-apis.ts";
import { clusterConnectionOf, type ClusterConnection } from "./cluster-connection.ts";
import { loadCrdManifest } from "./crd.ts";
import {
  crdRevisionOf,
  crdRevisionVerdict,
  readLiveCrdRevision,
  type CrdRevisionReader,
} from "./crd-revision-guard.ts";
import { namespaceDefaultsPolicy } from "./defaults-policy.ts";
import { operatorDeployment, operatorDeploymentTimeouts } from "./deployment.ts";
import type { CustomResourceDefinitionManifest } from "./manifest-types.ts";
import { metricsReaderClusterRole } from "./metrics-reader.ts";
import { tenantClusterRoles } from "./tenant-roles.ts";
import { metricsEndpoint, metricsService } from "./metrics-service.ts";
import { operatorNamespace } from "./namespace.ts";
import { inClusterPlacementVerdict, type NodeSummary } from "./node-runtime.ts";
import { externalOperatorFlags } from "./operator-flags.ts";
import { operatorPodDisruptionBudget } from "./pod-disruption-budget.ts";
import { operatorRbac } from "./rbac-objects.ts";
import { operatorServiceAccount } from "./service-account.ts";
import { describeIssues, resolveSettings, type MyAppOperatorArgs, type OperatorSettings } from "./settings.ts";
import { instancePolicy } from "./instance-policy.ts";
import { webhookCertificate } from "./webhook-certificate.ts";
import { mutatingWebhookServes, operatorWebhookConfigurations, webhookService } from "./webhooks.ts";

/** Pulumi type token of the component. */
export const myAppOperatorType = "myapp:index:MyAppOperator";

/** The child resources, for programs that need to depend on one of them (and for tests). */
export interface MyAppOperatorResources {
  readonly crd: k8s.apiextensions.v1.CustomResourceDefinition;
  /** Undefined when the namespace already existed (createNamespace: false). */
  readonly namespace?: k8s.core.v1.Namespace;
  readonly serviceAccount: k8s.core.v1.ServiceAccount;
  readonly clusterRole: k8s.rbac.v1.ClusterRole;
  readonly clusterRoleBinding: k8s.rbac.v1.ClusterRoleBinding;
  /** Roles and RoleBindings: one pair per watched namespace, plus the leader-election pair when there is one. */
  readonly roles: readonly k8s.rbac.v1.Role[];
  readonly roleBindings: readonly k8s.rbac.v1.RoleBinding[];
  /** Only with operatorPlacement "in-cluster". */
  readonly deployment?: k8s.apps.v1.Deployment;
  readonly metricsService?: k8s.core.v1.Service;
  /** Grants `get /metrics`; bind it to whatever scrapes the operator (in-cluster only). */
  readonly metricsReaderClusterRole?: k8s.rbac.v1.ClusterRole;
  /** Instance rights added to the default roles `admin`, `edit` and `view` (tenant-roles.ts); none when `tenantRoles: false`. */
  readonly tenantClusterRoles: readonly k8s.rbac.v1.ClusterRole[];
  /** Only in-cluster with 2 or more replicas. */
  readonly podDisruptionBudget?: k8s.policy.v1.PodDisruptionBudget;
  /** Holds the operator's ServiceAccount to writing only the children of instances (admission-policy.ts). */
  readonly admissionPolicy: k8s.admissionregistration.v1.ValidatingAdmissionPolicy;
  readonly admissionPolicyBinding: k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
  /** The platform policy's rules that the apiserver decides itself, when the policy sets any (instance-policy.ts). */
  readonly instancePolicy?: k8s.admissionregistration.v1.ValidatingAdmissionPolicy;
  readonly instancePolicyBinding?: k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
  /**
   * The namespace defaults as a MutatingAdmissionPolicy and its binding, with `webhooks.defaults: "policy"`
   * (defaults-policy.ts); generic resources, as @pulumi/kubernetes types no v1 MutatingAdmissionPolicy.
   */
  readonly defaultsPolicy?: k8s.apiextensions.CustomResource;
  readonly defaultsPolicyBinding?: k8s.apiextensions.CustomResource;
  /** With `webhooks.certManager`: the cert-manager Certificate of the webhook (webhook-certificate.ts). */
  readonly webhookCertificate?: k8s.apiextensions.CustomResource;
  /** The operator's admission webhooks (webhooks.ts), when on. */
  readonly validatingWebhookConfiguration?: k8s.admissionregistration.v1.ValidatingWebhookConfiguration;
  readonly mutatingWebhookConfiguration?: k8s.admissionregistration.v1.MutatingWebhookConfiguration;
  /** In-cluster with the webhooks on: the Service the apiserver calls them through. */
  readonly webhookService?: k8s.core.v1.Service;
}

/** Reads the cluster's nodes, or says why it cannot (the check then says nothing). */
export type NodeReader = (
  connection: ClusterConnection,
) => Promise<{ readonly nodes: readonly NodeSummary[] } | { readonly unavailable: string }>;

export interface MyAppOperatorOptions extends pulumi.ComponentResourceOptions {
  /**
   * The CRD to install; defaults to the generated config/crd manifest. For tests and forks, not for day-to-day use.
   */
  readonly crdManifest?: CustomResourceDefinitionManifest;
  /**
   * How an in-cluster install reads the cluster's nodes, to refuse a cluster whose nodes all run no containers
   * (kwok's fake nodes; node-runtime.ts) at preview and up; `false` skips the check. For tests (a fake reader, or
   * a kwok cluster used on purpose), not for day-to-day use.
   * @default a `list nodes` through the component's cluster connection (cluster-nodes.ts)
   */
  readonly readNodes?: NodeReader | false;
  /**
   * How `webhooks.defaults: "auto"` asks whether the cluster serves MutatingAdmissionPolicy; `false` never asks
   * (the webhook alone). For tests, not for day-to-day use.
   * @default a discovery GET through the component's cluster connection (cluster-admission-apis.ts)
   */
  readonly readAdmissionApis?: AdmissionApiReader | false;
  /**
   * How the component reads the live CRD's schema revision before applying its own, to refuse putting an older
   * CRD back over a newer one another platform installed (crd-revision-guard.ts), at preview and up; `false` skips
   * the check. For tests, not for day-to-day use.
   * @default a `get` of the CRD through the component's cluster connection (crd-revision-guard.ts)
   */
  readonly readCrdRevision?: CrdRevisionReader | false;
}

/** Whether the cluster serves MutatingAdmissionPolicy, or why it cannot be told (then the webhook alone). */
export type AdmissionApiReader = (connection: ClusterConnection) => Promise<DefaultsPolicyServed>;

/** What gives instances their namespace defaults, in the order the apiserver runs them. */
export type NamespaceDefaultsGiver = "policy" | "webhook";

export class MyAppOperator extends pulumi.ComponentResource {
  /** Namespace of the operator's objects. */
  readonly namespace: pulumi.Output<string>;
  /** Name of the ServiceAccount the operator runs as (a local operator gets its token; see README). */
  readonly serviceAccountName: pulumi.Output<string>;
  /** `myappinstances.example.com`. */
  readonly crdName: pulumi.Output<string>;
  /**
   * In-cluster metrics URL; undefined when the operator runs outside the cluster. It answers only bearer tokens
   * allowed to `get /metrics`: bind {@link metricsReaderClusterRole} to the scraper.
   */
  readonly metricsEndpoint: pulumi.Output<string | undefined>;
  /** Name of the ClusterRole that grants `get /metrics`; undefined when the operator runs outside the cluster. */
  readonly metricsReaderClusterRole: pulumi.Output<string | undefined>;
  /**
   * With `operatorPlacement: "external"`, the flags the operator process must be started with to match these
   * settings (`npx --no-install myapp-operator ${flags.join(" ")}`: webhooks, policy, chart settings, leader election on the
   * Lease its RBAC grants); undefined in-cluster.
   */
  readonly externalOperatorFlags: pulumi.Output<readonly string[] | undefined>;
  /**
   * How to reach the cluster the platform is installed in: its Kubernetes provider's kubeconfig (as text) and
   * context, a secret. A MyAppInstance declared with `platform: this` connects with it.
   */
  readonly clusterConnection: pulumi.Output<ClusterConnection>;
  /**
   * What gives instances their namespace defaults (`spec.podSecurityLevel`), in the order the apiserver runs them:
   * `["policy", "webhook"]` where `webhooks.defaults: "auto"` found the cluster serving MutatingAdmissionPolicy
   * (the webhook is then called only where the policy is missing), `["webhook"]` where it did not, `[]` with the
   * webhooks off.
   */
  readonly namespaceDefaultsBy: pulumi.Output<readonly NamespaceDefaultsGiver[]>;
  /** The settings after defaults, as the builders saw them. */
  readonly settings: OperatorSettings;
  readonly resources: MyAppOperatorResources;

  constructor(name: string, args: MyAppOperatorArgs = {}, opts: MyAppOperatorOptions = {}) {
    const { crdManifest, readNodes, readAdmissionApis, readCrdRevision, ...componentOpts } = opts;
    super(myAppOperatorType, name, args, componentOpts);
    const resolved = resolveSettings(name, args);
    if (!resolved.ok) throw refusal(describeIssues(`MyAppOperator "${name}"`, resolved.issues), this);
    const settings = resolved.settings;
    this.settings = settings;
    this.clusterConnection = clusterConnectionOf(this.getProvider("kubernetes::") ?? componentOpts.provider);
    const child = { parent: this };

    let crdObject: CustomResourceDefinitionManifest;
    try {
      crdObject = crdManifest ?? loadCrdManifest();
    } catch (error) {
      throw refusal(`MyAppOperator "${name}": ${(error as Error).message}`, this);
    }
    // The CRD is shared by every platform on the cluster: it waits for the check that the live one is no newer
    // (an Output that resolves to no dependency, or fails the CRD, in preview and up alike). A manifest without a
    // revision (a fork's) is not checked.
    const ownRevision = crdRevisionOf(crdObject);
    const revisionChecked =
      ownRevision !== undefined && readCrdRevision !== false
        ? this.checkCrdRevision(`MyAppOperator "${name}"`, ownRevision, readCrdRevision)
        : undefined;
    const crd = new k8s.apiextensions.v1.CustomResourceDefinition(`${name}-crd`, crdForPulumi(crdObject), {
      ...child,
      // Deleting the CRD deletes every MyAppInstance and the apps behind them: keep it unless asked.
      retainOnDelete: !settings.deleteCrdOnDestroy,
      ...(revisionChecked ? { dependsOn: revisionChecked.apply((): pulumi.Resource[] => []) } : {}),
    });

    const namespaceManifest = operatorNamespace(settings);
    const namespace = namespaceManifest && new k8s.core.v1.Namespace(`${name}-namespace`, namespaceManifest, child);
    // Objects in the operator's namespace wait for it on create; on destroy they go first.
    const inNamespace = { ...child, dependsOn: namespace ? [namespace] : [] };

    const serviceAccount = new k8s.core.v1.ServiceAccount(
      `${name}-service-account`,
      operatorServiceAccount(settings),
      inNamespace,
    );

    const rbac = operatorRbac(settings);
    const clusterRole = new k8s.rbac.v1.ClusterRole(`${name}-cluster-role`, rbac.clusterRole, child);
    const clusterRoleBinding = new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-cluster-role-binding`,
      rbac.clusterRoleBinding,
      { ...child, dependsOn: [clusterRole, serviceAccount] },
    );
    const roles: k8s.rbac.v1.Role[] = [];
    const roleBindings: k8s.rbac.v1.RoleBinding[] = [];
    const grants = [
      ...rbac.watchedNamespaceGrants.map((grant) => ({
        grant,
        suffix: `watch-${grant.namespace}`,
        // Watched namespaces exist already, except when the operator's own (created here) is one of them.
        opts: grant.namespace === settings.namespace ? inNamespace : child,
      })),
      ...(rbac.leaderElection ? [{ grant: rbac.leaderElection, suffix: "leader-election", opts: inNamespace }] : []),
      ...(rbac.webhookCertificate
        ? [{ grant: rbac.webhookCertificate, suffix: "webhook-cert", opts: inNamespace }]
        : []),
    ];
    for (const { grant, suffix, opts: grantOpts } of grants) {
      const role = new k8s.rbac.v1.Role(`${name}-role-${suffix}`, grant.role, grantOpts);
      roles.push(role);
      roleBindings.push(
        new k8s.rbac.v1.RoleBinding(`${name}-role-binding-${suffix}`, grant.binding, {
          ...grantOpts,
          dependsOn: [role, serviceAccount],
        }),
      );
    }

    const admission = operatorAdmissionPolicy(settings);
    const admissionPolicy = new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
      `${name}-admission-policy`,
      admission.policy,
      child,
    );
    const admissionPolicyBinding = new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
      `${name}-admission-policy-binding`,
      admission.binding,
      { ...child, dependsOn: [admissionPolicy] },
    );

    const instanceRules = instancePolicy(settings);
    const instancePolicyResource =
      instanceRules &&
      new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
        `${name}-instance-policy`,
        instanceRules.policy,
        child,
      );
    const instancePolicyBinding =
      instanceRules &&
      instancePolicyResource &&
      new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
        `${name}-instance-policy-binding`,
        instanceRules.binding,
        { ...child, dependsOn: [instancePolicyResource] },
      );

    // The namespace defaults, when the apiserver applies them (defaults-policy.ts): like the rules above, they hold
    // whether or not a replica runs. @pulumi/kubernetes has no v1 type for them, hence generic resources.
    const defaultsRules = namespaceDefaultsPolicy(settings);
    const declareDefaultsPolicy = (rules: NonNullable<typeof defaultsRules>) => {
      const policy = new k8s.apiextensions.CustomResource(`${name}-defaults-policy`, rules.policy, child);
      const binding = new k8s.apiextensions.CustomResource(`${name}-defaults-policy-binding`, rules.binding, {
        ...child,
        dependsOn: [policy],
      });
      return { policy, binding };
    };
    const declaredDefaults =
      defaultsRules && settings.webhooks.defaults === "policy" ? declareDefaultsPolicy(defaultsRules) : undefined;
    const defaultsPolicy = declaredDefaults?.policy;
    const defaultsPolicyBinding = declaredDefaults?.binding;
    const webhookGives: NamespaceDefaultsGiver[] = mutatingWebhookServes(settings.webhooks.defaults) ? ["webhook"] : [];
    this.namespaceDefaultsBy = !settings.webhooks.enabled
      ? pulumi.output([])
      : defaultsRules && settings.webhooks.defaults === "auto" && readAdmissionApis !== false
        ? this.declarePolicyWhereServed(
            name,
            readAdmissionApis,
            () => declareDefaultsPolicy(defaultsRules),
            webhookGives,
          )
        : pulumi.output(defaultsPolicy ? ["policy", ...webhookGives] : webhookGives);

    // cert-manager's Certificate for the webhook, when it issues it: the operator waits for its Secret.
    const certificateManifest = webhookCertificate(settings);
    const certificate =
      certificateManifest &&
      new k8s.apiextensions.CustomResource(`${name}-webhook-certificate`, certificateManifest, inNamespace);

    const caManifest = chartSourcesCaConfigMap(settings);
    const chartSourcesCa = caManifest && new k8s.core.v1.ConfigMap(`${name}-chart-sources-ca`, caManifest, inNamespace);
    const deploymentManifest = operatorDeployment(settings);
    // The operator starts only once its CRD and every permission exist, and on destroy it stops before they go.
    const deploymentDependencies = [
      ...(namespace ? [namespace] : []),
      ...(certificate ? [certificate] : []),
      ...(chartSourcesCa ? [chartSourcesCa] : []),
      crd,
      serviceAccount,
      clusterRoleBinding,
      ...roleBindings,
      admissionPolicyBinding,
    ];
    // ...and only once the cluster's nodes can run it: the check fails the Deployment (preview or up) with what to
    // do, instead of a Deployment that looks Ready on fake nodes and instances that wait out their timeout.
    // (It resolves to the CRD, already a dependency: the static list stays known even in a preview that cannot
    // know the connection, where this resolves to nothing.)
    const placementChecked =
      deploymentManifest && readNodes !== false
        ? [this.checkNodes(`MyAppOperator "${name}"`, readNodes).apply(() => crd)]
        : [];
    const deployment =
      deploymentManifest &&
      new k8s.apps.v1.Deployment(`${name}-deployment`, deploymentManifest, {
        ...child,
        dependsOn: [...deploymentDependencies, ...placementChecked],
        // pulumi-kubernetes waits for the pods to be ready and reports their errors as it waits; fail within
        // minutes, not its default ten (deployment.ts).
        customTimeouts: operatorDeploymentTimeouts,
      });
    const serviceManifest = metricsService(settings);
    const service = serviceManifest && new k8s.core.v1.Service(`${name}-metrics-service`, serviceManifest, inNamespace);
    const readerManifest = metricsReaderClusterRole(settings);
    const metricsReader =
      readerManifest && new k8s.rbac.v1.ClusterRole(`${name}-metrics-reader`, readerManifest, child);
    // Named as the objects are (`<name>-tenant-edit`, `-view`): cluster-scoped, like the metrics reader.
    const tenantRoles = tenantClusterRoles(settings).map(
      (manifest) => new k8s.rbac.v1.ClusterRole(String(manifest.metadata?.name), manifest, child),
    );
    const pdbManifest = operatorPodDisruptionBudget(settings);
    const podDisruptionBudget =
      pdbManifest && new k8s.policy.v1.PodDisruptionBudget(`${name}-pdb`, pdbManifest, inNamespace);

    const webhookServiceManifest = webhookService(settings);
    const webhookEndpoint =
      webhookServiceManifest && new k8s.core.v1.Service(`${name}-webhook-service`, webhookServiceManifest, inNamespace);
    // Last, after the operator's pods are ready: until a replica answers (with its CA injected), creating an
    // instance fails (failurePolicy Fail). On destroy they go first, for the same reason.
    const webhookManifests = operatorWebhookConfigurations(settings);
    const afterOperator = {
      ...child,
      dependsOn: [
        ...deploymentDependencies,
        ...(deployment ? [deployment] : []),
        ...(webhookEndpoint ? [webhookEndpoint] : []),
      ],
    };
    const validatingWebhookConfiguration =
      webhookManifests &&
      new k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
        `${name}-validating-webhook`,
        webhookManifests.validating,
        afterOperator,
      );
    const mutatingWebhookConfiguration =
      webhookManifests?.mutating &&
      new k8s.admissionregistration.v1.MutatingWebhookConfiguration(
        `${name}-mutating-webhook`,
        webhookManifests.mutating,
        afterOperator,
      );

    this.resources = {
      crd,
      ...(namespace ? { namespace } : {}),
      serviceAccount,
      clusterRole,
      clusterRoleBinding,
      roles,
      roleBindings,
      ...(deployment ? { deployment } : {}),
      ...(service ? { metricsService: service } : {}),
      ...(metricsReader ? { metricsReaderClusterRole: metricsReader } : {}),
      tenantClusterRoles: tenantRoles,
      ...(podDisruptionBudget ? { podDisruptionBudget } : {}),
      admissionPolicy,
      admissionPolicyBinding,
      ...(instancePolicyResource ? { instancePolicy: instancePolicyResource } : {}),
      ...(instancePolicyBinding ? { instancePolicyBinding } : {}),
      ...(defaultsPolicy ? { defaultsPolicy } : {}),
      ...(defaultsPolicyBinding ? { defaultsPolicyBinding } : {}),
      ...(certificate ? { webhookCertificate: certificate } : {}),
      ...(validatingWebhookConfiguration ? { validatingWebhookConfiguration } : {}),
      ...(mutatingWebhookConfiguration ? { mutatingWebhookConfiguration } : {}),
      ...(webhookEndpoint ? { webhookService: webhookEndpoint } : {}),
    };
    // Outputs come from the live objects, so they resolve only once those exist.
    this.namespace = namespace ? namespace.metadata.name : pulumi.output(settings.namespace);
    this.serviceAccountName = serviceAccount.metadata.name;
    this.crdName = crd.metadata.name;
    const endpoint = metricsEndpoint(settings);
    this.metricsEndpoint = service ? service.metadata.name.apply(() => endpoint) : pulumi.output(endpoint);
    this.metricsReaderClusterRole = metricsReader ? metricsReader.metadata.name : pulumi.output(undefined);
    this.externalOperatorFlags = pulumi.output(externalOperatorFlags(settings));
    this.registerOutputs({
      namespace: this.namespace,
      serviceAccountName: this.serviceAccountName,
      crdName: this.crdName,
      metricsEndpoint: this.metricsEndpoint,
      metricsReaderClusterRole: this.metricsReaderClusterRole,
      externalOperatorFlags: this.externalOperatorFlags,
      namespaceDefaultsBy: this.namespaceDefaultsBy,
    });
  }

  /**
   * `webhooks.defaults: "auto"`: declares the defaults policy once the cluster says it serves it. The read runs in
   * previews too where the connection is known (a ClusterProvider, the default provider), so they show the policy;
   * where it is not, or the cluster does not answer in time, this run installs the webhook alone, which gives the
   * same defaults. Resolves once what it declared is registered.
   */
  private declarePolicyWhereServed(
    name: string,
    readAdmissionApis: AdmissionApiReader | undefined,
    declare: () => { policy: pulumi.Resource; binding: pulumi.Resource },
    webhookGives: readonly NamespaceDefaultsGiver[],
  ): pulumi.Output<readonly NamespaceDefaultsGiver[]> {
    const givers = this.clusterConnection.apply(async (connection): Promise<readonly NamespaceDefaultsGiver[]> => {
      const read = await (readAdmissionApis ?? (await import("./cluster-admission-apis.ts")).readDefaultsPolicyServed)(
        connection,
      );
      if ("unavailable" in read) {
        // A warning: a policy an earlier run installed leaves with this one (the webhook gives the same defaults).
        void pulumi.log.warn(
          `MyAppOperator "${name}": the namespace defaults are the mutating webhook's alone in this run (the ` +
            `cluster's admission APIs could not be read: ${read.unavailable}); the next run that can read them ` +
            `installs the MutatingAdmissionPolicy`,
          this,
        );
        return webhookGives;
      }
      if (!read.served) return webhookGives;
      const declared = declare();
      // Resolved once both are registered, so whoever reads this finds them in the stack.
      await Promise.all([declared.policy.urn, declared.binding.urn].map(settled));
      return ["policy", ...webhookGives];
    });
    return pulumi.unsecret(givers);
  }

  /**
   * Reads the live CRD's schema revision with the component's cluster connection (when it is known: always in `up`,
   * in previews with a ClusterProvider) and refuses or warns as crd-revision-guard.ts decides; a CRD it cannot read
   * is applied as before. Resolves to nothing; not a secret, although the connection is.
   */
  private checkCrdRevision(subject: string, own: number, read: CrdRevisionReader | undefined): pulumi.Output<void> {
    const checked = this.clusterConnection.apply(async (connection) => {
      const live = await (read ?? readLiveCrdRevision)(connection);
      if ("unavailable" in live) {
        void pulumi.log.debug(`${subject}: the cluster's CRD revision was not checked: ${live.unavailable}`, this);
        return;
      }
      const verdict = crdRevisionVerdict(subject, own, live.revision);
      if (verdict.verdict === "refuse") throw refusal(verdict.message, this);
      if (verdict.verdict === "warn") void pulumi.log.warn(verdict.message, this);
    });
    return pulumi.unsecret(checked);
  }

  /**
   * Reads the nodes with the component's cluster connection (when it is known: always in `up`, in previews with a
   * ClusterProvider) and refuses or warns as node-runtime.ts decides. Resolves to nothing; not a secret, although
   * the connection is.
   */
  private checkNodes(subject: string, readNodes: NodeReader | undefined): pulumi.Output<void> {
    const checked = this.clusterConnection.apply(async (connection) => {
      const read = await (readNodes ?? (await import("./cluster-nodes.ts")).readClusterNodes)(connection);
      if ("unavailable" in read) {
        void pulumi.log.debug(`${subject}: the cluster's nodes were not checked: ${read.unavailable}`, this);
        return;
      }
      const verdict = inClusterPlacementVerdict(subject, read.nodes);
      if (verdict.verdict === "refuse") throw refusal(verdict.message, this);
      if (verdict.verdict === "warn") void pulumi.log.warn(verdict.message, this);
    });
    return pulumi.unsecret(checked);
  }
}

/**
 * The CRD with two pulumi-kubernetes annotations: `waitFor` makes `pulumi up` return only once the CRD is
 * Established, and `patchForce` lets the install take over fields of a CRD applied before by someone else
 * (`kubectl apply -f config/crd`, dist/install.yaml, or a previous install whose CRD was retained).
 */
function crdForPulumi(crd: CustomResourceDefinitionManifest): CustomResourceDefinitionManifest {
  const metadata = crd.metadata ?? {};
  const annotations = {
    ...metadata.annotations,
    "pulumi.com/waitFor": "condition=Established",
    "pulumi.com/patchForce": "true",
  };
  return { ...crd, metadata: { ...metadata, annotations } };
}

/** The value of a known output (a URN), as a promise. */
function settled<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

/**
 * The error for arguments or a cluster the component refuses: its message alone. Without `hideStack`, pulumi prints
 * the whole error object, the component and its parent stack included (some 200 lines after the message).
 */
function refusal(message: string, component: pulumi.Resource): pulumi.ResourceError {
  return new pulumi.ResourceError(message, component, true);
}
