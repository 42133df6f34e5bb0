/**
 * The render rules beyond pod security, through planRender as the reconcile calls it: borrowed ServiceAccounts,
 * externalIPs, Service types, ServiceAccount-token Secrets, autoscaler targets, claim sizes, cluster-scoped kinds. One test per rule, each with
 * the case it must still allow.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { defaultChartKinds, renderableChartKinds, type ChartServiceType } from "../../../api/index.ts";
import { clusterScopedKinds, parseManifests } from "../../../chart/index.ts";
import { planRender, type RenderPlan } from "../../../operator/chart/plan.ts";

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

describe("claim sizes", () => {
  const statefulSet = (storage: string) => `---
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
      spec: { resources: { requests: { storage: ${storage} } } }
`;

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
