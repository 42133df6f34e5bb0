/**
 * The render rules beyond pod security, through planRender as the reconcile calls it: borrowed ServiceAccounts,
 * externalIPs, Service types, ServiceAccount-token Secrets, autoscaler targets, claim sizes, cluster-scoped kinds,
 * scheduling, ephemeral volumes, claim binding. One test per rule, each with the case it must still allow.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { defaultChartKinds, renderableChartKinds, type ChartServiceType } from "../../../api/index.ts";
import { clusterScopedKinds, parseManifests, renderPolicyRefusal, type RenderedObject } from "../../../chart/index.ts";
import { planRender, type RenderPlan } from "../../../operator/chart/plan.ts";
import { desiredDeployment, desiredStatefulSet } from "../../../operator/desired/index.ts";
import { instance as builtIn } from "../desired/fixtures.ts";

const instance = { name: "web", namespace: "shop", uid: "uid-1" };

function plan(manifest: string, serviceTypes?: readonly ChartServiceType[]): RenderPlan {
  return planRender(parseManifests(manifest), instance, renderableChartKinds, {
    podSecurityLevel: "Baseline",
    ...(serviceTypes ? { serviceTypes } : {}),
  });
}

function refusal(result: RenderPlan): { reason: string; message: string } | undefined {
  return result.ok ? undefined : result.refusal;
}

const deployment = (podSpec: string) => `---
# Source: c/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
${podSpec}
      containers:
        - name: app
          image: nginx
`;
const serviceAccount = (name: string) => `---
# Source: c/templates/sa.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${name}
`;
const service = (spec: string) => `---
# Source: c/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{ port: 80 }]
${spec}
`;

describe("ServiceAccounts", () => {
  test("a pod may not run as a ServiceAccount the chart does not render", () => {
    const result = refusal(plan(deployment("      serviceAccountName: deployer")));
    assert.equal(result?.reason, "ChartServiceAccountNotAllowed");
    assert.match(result?.message ?? "", /^Deployment\/web spec\.template\.spec\.serviceAccountName is "deployer"/);
  });

  test("nor through the deprecated serviceAccount field", () => {
    const result = refusal(plan(deployment("      serviceAccount: deployer")));
    assert.equal(result?.reason, "ChartServiceAccountNotAllowed");
    assert.match(result?.message ?? "", /spec\.template\.spec\.serviceAccount is "deployer"/);
  });

  test("default, none, or one the same render creates (rendered after the pod) are allowed", () => {
    assert.ok(plan(deployment("      serviceAccountName: default")).ok);
    assert.ok(plan(deployment("      hostname: web")).ok);
    assert.ok(plan(deployment("      serviceAccountName: web") + serviceAccount("web")).ok);
  });
});

describe("Services", () => {
  test("externalIPs are refused (CVE-2020-8554)", () => {
    const result = refusal(plan(service("  externalIPs: [8.8.8.8]")));
    assert.equal(result?.reason, "ChartServiceExternalIPs");
    assert.match(result?.message ?? "", /^Service\/web spec\.externalIPs is set/);
    assert.equal(
      refusal(plan(service("  externalIPs: [8.8.8.8]"), ["ClusterIP", "LoadBalancer"]))?.reason,
      "ChartServiceExternalIPs",
    );
  });

  test("by default only ClusterIP: NodePort and LoadBalancer are refused, naming what is allowed", () => {
    for (const type of ["NodePort", "LoadBalancer", "ExternalName"]) {
      const result = refusal(plan(service(`  type: ${type}`)));
      assert.equal(result?.reason, "ChartServiceTypeNotAllowed");
      assert.match(
        result?.message ?? "",
        new RegExp(`^Service/web spec\\.type is ${type}; this platform allows ClusterIP \\(`),
      );
    }
    assert.ok(plan(service("  type: ClusterIP")).ok);
    assert.ok(plan(service("")).ok);
  });

  test("a type the platform lists is allowed, ClusterIP always", () => {
    assert.ok(plan(service("  type: LoadBalancer"), ["LoadBalancer"]).ok);
    assert.ok(plan(service("  type: ClusterIP"), ["LoadBalancer"]).ok);
    assert.equal(refusal(plan(service("  type: NodePort"), ["LoadBalancer"]))?.reason, "ChartServiceTypeNotAllowed");
  });
});

describe("Secrets", () => {
  test("a ServiceAccount token Secret is refused; other types are not", () => {
    const secret = (type: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: t\n  annotations:\n    kubernetes.io/service-account.name: deployer\ntype: ${type}\n`;
    const result = refusal(plan(secret("kubernetes.io/service-account-token")));
    assert.equal(result?.reason, "ChartSecretTypeNotAllowed");
    assert.match(result?.message ?? "", /^Secret\/t type is kubernetes\.io\/service-account-token/);
    assert.ok(plan(secret("Opaque")).ok);
  });
});

describe("autoscalers", () => {
  const autoscaler = (target: string) =>
    `---\n# Source: c/templates/hpa.yaml\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n` +
    `spec:\n  scaleTargetRef: ${target}\n  minReplicas: 500\n  maxReplicas: 500\n`;

  test("one aimed at a workload the chart does not render is refused (it would scale past the budget)", () => {
    const result = refusal(plan(deployment("") + autoscaler("{ apiVersion: apps/v1, kind: Deployment, name: other }")));
    assert.equal(result?.reason, "ChartAutoscalerTargetNotRendered");
    assert.match(
      result?.message ?? "",
      /^HorizontalPodAutoscaler\/web spec\.scaleTargetRef is Deployment\/other, which/,
    );
    assert.equal(
      refusal(plan(deployment("") + autoscaler("{ apiVersion: apps/v1, kind: StatefulSet, name: web }")))?.reason,
      "ChartAutoscalerTargetNotRendered",
      "the kind must match too",
    );
    assert.equal(refusal(plan(autoscaler("{}")))?.reason, "ChartAutoscalerTargetNotRendered");
  });

  test("one aimed at a workload of the same render is allowed, with or without the target's apiVersion", () => {
    assert.ok(plan(deployment("") + autoscaler("{ apiVersion: apps/v1, kind: Deployment, name: web }")).ok);
    assert.ok(plan(autoscaler("{ kind: Deployment, name: web }") + deployment("")).ok);
  });
});

/** A StatefulSet `db` with one claim template `data` of `storage`, its spec ending with `claimSpec`. */
const statefulSetClaiming = (storage: string, claimSpec = "") => `---
# Source: c/templates/sts.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  template:
    spec:
      containers:
        - name: db
          image: postgres
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { resources: { requests: { storage: ${storage} } }${claimSpec} }
`;

describe("claim sizes", () => {
  const statefulSet = (storage: string) => statefulSetClaiming(storage);

  test("a size no budget can count is refused: beyond 1Ei, an exponent Go reads as 0, zero, or not a quantity", () => {
    for (const storage of [
      '"1e1000"',
      '"2Ei"',
      "0",
      '"500m"',
      "0.5",
      '"-1Gi"',
      '"1Gi of disk"',
      `"${"9".repeat(100)}"`,
      "[]",
    ]) {
      const result = refusal(plan(statefulSet(storage)));
      assert.equal(result?.reason, "ChartClaimSizeNotAllowed", storage);
      assert.match(
        result?.message ?? "",
        /^StatefulSet\/db spec\.volumeClaimTemplates\[0\]\.spec\.resources\.requests\.storage is /,
      );
      assert.match(result?.message ?? "", /from 1 byte to 1Ei/);
    }
  });

  test("quantities within bounds are allowed, as strings or as numbers (the apiserver reads both)", () => {
    for (const storage of ['"10Gi"', '"500M"', '"1Ei"', "1073741824", '"1e3"', "1"]) {
      assert.ok(plan(statefulSet(storage)).ok, storage);
    }
  });

  test("a claim that requests no storage (left out, or an empty template value) is the apiserver's to refuse", () => {
    assert.ok(plan(statefulSet("null")).ok);
  });
});

describe("cluster-scoped kinds", () => {
  test("are refused for what they are, whatever the allow-list says", () => {
    const manifest =
      "# Source: c/templates/crb.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: admin\n";
    const widened = [
      ...renderableChartKinds,
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", plural: "clusterrolebindings" },
    ];
    const result = planRender(parseManifests(manifest), instance, widened, { podSecurityLevel: "Restricted" });
    assert.ok(!result.ok);
    assert.equal(result.refusal.reason, "ChartClusterScopedKind");
    assert.match(result.refusal.message, /c\/templates\/crb\.yaml renders ClusterRoleBinding\/admin .* cluster-scoped/);
  });

  test("no kind a chart may render is cluster-scoped", () => {
    for (const kind of [...renderableChartKinds, ...defaultChartKinds]) {
      assert.ok(!clusterScopedKinds.includes(`${kind.apiVersion}/${kind.kind}`), `${kind.kind} is cluster-scoped`);
    }
  });
});

describe("scheduling", () => {
  // Pods of every kind that makes them, checked without the allow-list (which holds only Deployment and
  // StatefulSet among workloads today): the rule must follow the pod-template walker, not the allow-list.
  const workloads = (podSpec: Record<string, unknown>): [string, RenderedObject][] => {
    const template = { spec: { containers: [{ name: "app", image: "nginx" }], ...podSpec } };
    const workload = (apiVersion: string, kind: string): RenderedObject => ({
      apiVersion,
      kind,
      metadata: { name: "w" },
      spec: { template },
    });
    return [
      ["spec.template.spec", workload("apps/v1", "Deployment")],
      ["spec.template.spec", workload("apps/v1", "StatefulSet")],
      ["spec.template.spec", workload("apps/v1", "DaemonSet")],
      ["spec.template.spec", workload("apps/v1", "ReplicaSet")],
      ["spec.template.spec", workload("batch/v1", "Job")],
      [
        "spec.jobTemplate.spec.template.spec",
        {
          apiVersion: "batch/v1",
          kind: "CronJob",
          metadata: { name: "w" },
          spec: { jobTemplate: { spec: { template } } },
        },
      ],
      ["spec", { apiVersion: "v1", kind: "Pod", metadata: { name: "w" }, spec: template.spec }],
    ];
  };

  test("a priority class, a node, a scheduler, a RuntimeClass or tolerations are refused in every workload's pods", () => {
    // GIVEN pod templates of every kind, each setting one field that moves its pods past the platform's placement
    // (system-node-critical with a toleration of everything preempts other tenants' pods)
    const cases: [string, unknown, RegExp][] = [
      ["priorityClassName", "system-node-critical", /is "system-node-critical"; a priority class lets/],
      ["priority", 2000001000, /is 2000001000; a priority class lets/],
      ["nodeName", "control-plane-1", /is "control-plane-1"; it binds the pod to a node/],
      ["schedulerName", "my-scheduler", /is "my-scheduler"; another scheduler/],
      ["runtimeClassName", "kata", /is "kata"; a RuntimeClass brings/],
      ["tolerations", [{ operator: "Exists" }], /is \[\{"operator":"Exists"\}\]; tolerations let/],
    ];
    for (const [field, value, why] of cases) {
      for (const [specPath, object] of workloads({ [field]: value })) {
        // WHEN the render policy looks at it
        const result = renderPolicyRefusal([object], { podSecurityLevel: "Baseline" });
        // THEN it is refused, naming the object, the field, why, and what a chart's pods may do instead
        assert.equal(result?.reason, "ChartSchedulingNotAllowed", `${object.kind} ${field}`);
        assert.ok(result?.message.startsWith(`${object.kind}/w ${specPath}.${field} is `), result?.message);
        assert.match(result?.message ?? "", why);
        assert.match(result?.message ?? "", /leave it unset or empty/);
      }
    }
  });

  test("through planRender, before anything is applied (a Deployment with both)", () => {
    const result = refusal(
      plan(deployment("      priorityClassName: system-node-critical\n      tolerations: [{ operator: Exists }]")),
    );
    assert.equal(result?.reason, "ChartSchedulingNotAllowed");
    assert.match(
      result?.message ?? "",
      /^Deployment\/web spec\.template\.spec\.priorityClassName is "system-node-critical"/,
    );
  });

  test("a pod affinity term over other namespaces' pods is refused (anti-affinity would keep their pods off nodes)", () => {
    const term = (extra: Record<string, unknown>) => ({
      topologyKey: "kubernetes.io/hostname",
      labelSelector: {},
      ...extra,
    });
    const cases: [Record<string, unknown>, string][] = [
      [
        { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ namespaceSelector: {} })] } },
        "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector",
      ],
      [
        {
          podAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, podAffinityTerm: term({ namespaces: ["other-tenant"] }) },
            ],
          },
        },
        "affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaces",
      ],
    ];
    for (const [affinity, path] of cases) {
      const [[specPath, object]] = workloads({ affinity }) as [[string, RenderedObject]];
      const result = renderPolicyRefusal([object], { podSecurityLevel: "Baseline" });
      assert.equal(result?.reason, "ChartSchedulingNotAllowed", path);
      assert.ok(result?.message.startsWith(`Deployment/w ${specPath}.${path} is `), result?.message);
      assert.match(result?.message ?? "", /other namespaces' pods/);
    }
  });

  test("what charts render by default is allowed: empty or null fields, node selectors, own-namespace affinity", () => {
    // GIVEN the values podinfo and helm create render when nothing is set, and placement within the tenant's reach
    const allowed: Record<string, unknown>[] = [
      { priorityClassName: "", tolerations: [], nodeSelector: {}, affinity: {} },
      { priorityClassName: null, tolerations: null, nodeName: null, schedulerName: null, runtimeClassName: null },
      { nodeName: "", schedulerName: "", runtimeClassName: "", priority: 0 },
      { schedulerName: "default-scheduler" },
      { nodeSelector: { "kubernetes.io/arch": "amd64" }, hostname: "web", preemptionPolicy: "Never" },
      {
        affinity: {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 100,
                podAffinityTerm: {
                  topologyKey: "kubernetes.io/hostname",
                  labelSelector: { matchLabels: { app: "web" } },
                  namespaces: [],
                  namespaceSelector: null,
                },
              },
            ],
          },
        },
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "ScheduleAnyway" }],
      },
    ];
    for (const podSpec of allowed) {
      for (const [, object] of workloads(podSpec)) {
        // WHEN the render policy looks at it THEN nothing is refused
        assert.equal(
          renderPolicyRefusal([object], { podSecurityLevel: "Baseline" }),
          undefined,
          JSON.stringify(podSpec),
        );
      }
    }
    // AND an affinity term may name the pod's own namespace (planRender puts every object there)
    const own = deployment(
      "      affinity:\n        podAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n" +
        "            - { topologyKey: kubernetes.io/hostname, labelSelector: {}, namespaces: [shop] }",
    );
    assert.ok(plan(own).ok);
  });
});

describe("volumes a budget cannot count", () => {
  const statefulSet = (claimSpec: string) => statefulSetClaiming("1Gi", claimSpec);

  test("an ephemeral volume is refused in any pod (its claim escapes --max-storage and the namespace's budget)", () => {
    // GIVEN a Deployment with an ephemeral volume of 500Ti, which Kubernetes would bind past a 1Gi maxStorage
    const ephemeral =
      "      volumes:\n        - name: scratch\n          ephemeral:\n            volumeClaimTemplate:\n" +
      "              spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 500Ti } } }";
    // WHEN it is planned, at either pod security level (Restricted lists ephemeral among its volume types)
    for (const podSecurityLevel of ["Baseline", "Restricted"] as const) {
      const result = refusal(
        planRender(parseManifests(deployment(ephemeral)), instance, renderableChartKinds, { podSecurityLevel }),
      );
      // THEN it is refused for its storage, naming the field and where a chart's storage comes from
      assert.equal(result?.reason, "ChartEphemeralVolumeNotAllowed", podSecurityLevel);
      assert.match(result?.message ?? "", /^Deployment\/web spec\.template\.spec\.volumes\[0\]\.ephemeral is set;/);
      assert.match(result?.message ?? "", /only from a StatefulSet's volumeClaimTemplates/);
    }
    // AND in a CronJob's pods too (the pod-template walker, whatever the allow-list)
    const cronJob: RenderedObject = {
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "c" },
      spec: { jobTemplate: { spec: { template: { spec: { volumes: [{ name: "v", ephemeral: {} }] } } } } },
    };
    assert.equal(
      renderPolicyRefusal([cronJob], { podSecurityLevel: "Baseline" })?.reason,
      "ChartEphemeralVolumeNotAllowed",
    );
  });

  test("emptyDir, configMap and claim volumes, and a null ephemeral (an empty template value), are allowed", () => {
    const volumes =
      "      volumes:\n        - { name: a, emptyDir: { sizeLimit: 1Gi } }\n        - { name: b, configMap: { name: web } }\n" +
      "        - { name: c, persistentVolumeClaim: { claimName: data-db-0 } }\n        - { name: d, ephemeral: null, emptyDir: {} }";
    assert.ok(plan(deployment(volumes)).ok);
  });

  test("a claim template may not bind a PersistentVolume that exists: volumeName, selector, no class", () => {
    // GIVEN claim templates that would take a pre-provisioned (Available) volume instead of a new one
    const cases: [string, string][] = [
      [", volumeName: pv-of-another-tenant", 'spec.volumeName is "pv-of-another-tenant"'],
      [", selector: { matchLabels: { team: a } }", 'spec.selector is {"matchLabels":{"team":"a"}}'],
      [", selector: {}", "spec.selector is {}"],
      [', storageClassName: ""', 'spec.storageClassName is ""'],
      [
        ", dataSourceRef: { kind: PersistentVolumeClaim, name: x, namespace: other }",
        'spec.dataSourceRef.namespace is "other"',
      ],
    ];
    for (const [claimSpec, shown] of cases) {
      // WHEN it is planned
      const result = refusal(plan(statefulSet(claimSpec)));
      // THEN it is refused, naming the field and what is allowed
      assert.equal(result?.reason, "ChartClaimBindingNotAllowed", claimSpec);
      assert.ok(result?.message.startsWith(`StatefulSet/db spec.volumeClaimTemplates[0].${shown}; `), result?.message);
      assert.match(result?.message ?? "", /new volumes from a StorageClass/);
    }
  });

  test("a claim template with a class, or empty values, gets a new volume and is allowed", () => {
    for (const claimSpec of [
      "",
      ", storageClassName: fast",
      ", storageClassName: null, volumeName: null, selector: null",
      ', volumeName: ""',
      ", dataSourceRef: { kind: PersistentVolumeClaim, name: x }",
    ]) {
      assert.ok(plan(statefulSet(claimSpec)).ok, claimSpec);
    }
  });
});

describe("agreement with the built-in template", () => {
  test("its Deployment and StatefulSet break none of these rules: a chart may do what the template does", () => {
    for (const podSecurityLevel of ["Restricted", "Baseline"] as const) {
      const objects = [
        desiredDeployment(builtIn({ podSecurityLevel })),
        desiredStatefulSet(builtIn({ podSecurityLevel, storage: "1Gi", storageClassName: "fast" })),
      ] as unknown as RenderedObject[];
      assert.equal(renderPolicyRefusal(objects, { podSecurityLevel }), undefined, podSecurityLevel);
    }
  });
});
