import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderableChartKinds } from "../../../api/index.ts";
import { parseManifests, readManifests, type RenderedObject } from "../../../chart/index.ts";
import { chartInstanceLabel } from "../../../operator/chart/owned.ts";
import {
  claimRetention,
  mainServiceEndpoint,
  mainWorkload,
  planRender,
  pruneCandidates,
  volumeRefusal,
} from "../../../operator/chart/plan.ts";
import { desiredStatefulSet } from "../../../operator/desired/index.ts";
import { instance as builtIn } from "../desired/fixtures.ts";

const instance = { name: "web", namespace: "shop", uid: "uid-1" };
// These tests are about kinds, namespaces and ownership; pod security has its own (pod-security.test.ts).
const policy = { podSecurityLevel: "Baseline" } as const;

const stream = `---
# Source: myapp/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    app.kubernetes.io/managed-by: Helm
spec:
  ports:
    - port: 8080
---
# Source: myapp/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-worker
spec:
  replicas: 1
---
# Source: myapp/templates/main.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
---
# Source: myapp/templates/empty.yaml
`;

function ok(manifest: string): readonly RenderedObject[] {
  const plan = planRender(parseManifests(manifest), instance, renderableChartKinds, policy);
  if (!plan.ok) throw new Error(plan.refusal.message);
  return plan.objects;
}

// The reader production runs on every render (the tests' fixtures use its non-yielding twin, parseManifests)
describe("readManifests", () => {
  test("keeps each object's template and skips empty documents", async () => {
    const manifests = await readManifests(stream);
    assert.deepEqual(
      manifests.map((m) => [m.source, m.object.kind, m.object.metadata.name]),
      [
        ["myapp/templates/service.yaml", "Service", "web"],
        ["myapp/templates/deployment.yaml", "Deployment", "web-worker"],
        ["myapp/templates/main.yaml", "Deployment", "web"],
      ],
    );
  });

  test("names the template of a document that is not an object", async () => {
    await assert.rejects(readManifests("# Source: c/templates/x.yaml\n- 1\n"), /c\/templates\/x\.yaml/);
  });

  test("refuses an object named outside Kubernetes' names, quoting at most 64 characters of it", async () => {
    // GIVEN objects whose identity is not a Kubernetes name: a 100,000-character name, a path in a name, a kind
    // and a namespace that no apiserver serves (the chart's text: echoed whole, it would fill every log line)
    const cases: [string, RegExp][] = [
      [
        `kind: ConfigMap\nmetadata:\n  name: ${"a".repeat(100_000)}`,
        /metadata\.name "a{63}…" \(100002 characters\) is not a DNS subdomain/,
      ],
      [
        "kind: ConfigMap\nmetadata:\n  name: ../../secrets/x",
        /metadata\.name "\.\.\/\.\.\/secrets\/x" is not a DNS subdomain/,
      ],
      ["kind: Config Map\nmetadata:\n  name: x", /kind "Config Map" is not a kind name/],
      [
        "kind: ConfigMap\nmetadata:\n  name: x\n  namespace: Other/ns",
        /metadata\.namespace "Other\/ns" is not a DNS label/,
      ],
    ];
    for (const [object, message] of cases) {
      // THEN the render is refused naming the template and what is wrong, never the whole text
      const error = await readManifests(`# Source: c/templates/x.yaml\napiVersion: v1\n${object}\n`).then(
        () => assert.fail("accepted"),
        (caught: unknown) => caught as Error,
      );
      assert.match(error.message, /^c\/templates\/x\.yaml renders an object whose /);
      assert.match(error.message, message);
      assert.ok(error.message.length < 300, `${error.message.length} characters`);
    }
  });
});

describe("planRender", () => {
  test("owns every object: namespace, controller reference, the operator's labels; the rest as rendered", () => {
    const [service] = ok(stream);
    assert.deepEqual(service?.metadata, {
      name: "web",
      namespace: "shop",
      labels: { "app.kubernetes.io/managed-by": "myapp-operator", [chartInstanceLabel]: "web" },
      ownerReferences: [
        {
          apiVersion: "example.com/v1",
          kind: "MyAppInstance",
          name: "web",
          uid: "uid-1",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    assert.deepEqual(service?.["spec"], { ports: [{ port: 8080 }] });
  });

  test("refuses a kind the platform did not allow, naming the template and the allowed kinds", () => {
    const plan = planRender(
      parseManifests(
        "# Source: c/templates/role.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\n",
      ),
      instance,
      renderableChartKinds,
      policy,
    );
    assert.equal(plan.ok, false);
    assert.ok(!plan.ok && plan.refusal.reason === "ChartKindNotAllowed");
    assert.match(
      !plan.ok ? plan.refusal.message : "",
      /c\/templates\/role\.yaml renders Role\/r .*apps\/v1\/Deployment/,
    );
  });

  test("refuses an object in another namespace", () => {
    const plan = planRender(
      parseManifests(
        "# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: kube-system\n",
      ),
      instance,
      renderableChartKinds,
      policy,
    );
    assert.ok(!plan.ok && plan.refusal.reason === "ChartNamespaceNotAllowed");
  });

  test("a workload the render leaves unsized is applied at 1 replica, unless an autoscaler of the render scales it", () => {
    const workload = (name: string, replicas = "") =>
      `---\n# Source: c/templates/${name}.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\n` +
      `spec:\n${replicas}  selector: { matchLabels: { app: ${name} } }\n`;
    const autoscaler =
      "---\n# Source: c/templates/hpa.yaml\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n" +
      "metadata:\n  name: scaled\nspec: { maxReplicas: 5, scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: scaled } }\n";
    const replicasOf = (objects: readonly RenderedObject[], name: string) =>
      (objects.find((object) => object.metadata.name === name)?.["spec"] as { replicas?: number }).replicas;
    const objects = ok(workload("unsized") + workload("sized", "  replicas: 3\n") + workload("scaled") + autoscaler);
    assert.equal(replicasOf(objects, "unsized"), 1);
    assert.equal(replicasOf(objects, "sized"), 3);
    assert.equal(replicasOf(objects, "scaled"), undefined);
  });

  describe("StatefulSets keep their volumes, whatever the chart or the instance's storageReclaimPolicy says", () => {
    const statefulSet = (retention: string) =>
      `# Source: c/templates/sts.yaml\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n` +
      `  replicas: 3\n${retention}  volumeClaimTemplates:\n    - metadata: { name: data }\n` +
      `      spec: { resources: { requests: { storage: 1Gi } } }\n`;
    const retentionOf = (objects: readonly RenderedObject[]) =>
      (objects[0]?.["spec"] as { persistentVolumeClaimRetentionPolicy?: unknown }).persistentVolumeClaimRetentionPolicy;
    const planned = (manifest: string) => {
      const plan = planRender(parseManifests(manifest), instance, renderableChartKinds, policy);
      if (!plan.ok) throw new Error(plan.refusal.message);
      return plan.objects;
    };
    const retains = { whenDeleted: "Retain", whenScaled: "Retain" };

    test("a chart's retention is replaced by the instance's: never Delete on a scale-down, Delete only if it says so", () => {
      // GIVEN charts whose retention would delete claims data-db-1/2 on a scale to 1, or all with the StatefulSet
      for (const retention of [
        "  persistentVolumeClaimRetentionPolicy: { whenDeleted: Delete, whenScaled: Delete }\n",
        "  persistentVolumeClaimRetentionPolicy: { whenDeleted: Delete, whenScaled: Retain }\n",
        "  persistentVolumeClaimRetentionPolicy: { whenDeleted: Retain, whenScaled: Delete }\n",
        "",
      ]) {
        // WHEN planned for an instance that keeps its data (the default) THEN every claim is kept
        assert.deepEqual(retentionOf(planned(statefulSet(retention))), retains, retention || "none");
        // AND for one that says Delete, its claims go with it (the owner references of the StatefulSet controller:
        // the operator may not write a chart's claims), never on a scale-down
        const deleting = planRender(parseManifests(statefulSet(retention)), instance, renderableChartKinds, {
          ...policy,
          storageReclaimPolicy: "Delete",
        });
        assert.ok(deleting.ok);
        assert.deepEqual(retentionOf(deleting.objects), { whenDeleted: "Delete", whenScaled: "Retain" });
      }
    });

    test("under Retain, is exactly the built-in template's retention", () => {
      const template = desiredStatefulSet(builtIn({ storage: "1Gi" })).spec.persistentVolumeClaimRetentionPolicy;
      assert.deepEqual(claimRetention("Retain"), template);
    });

    test("the rest of the StatefulSet, and other kinds, are as rendered", () => {
      const [sts] = planned(statefulSet(""));
      assert.equal((sts?.["spec"] as { replicas?: unknown }).replicas, 3);
      const [, main] = ok(stream);
      assert.deepEqual(main?.["spec"], { replicas: 1 });
    });
  });

  test("leaves hooks out", () => {
    const hook =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n  annotations:\n    helm.sh/hook: pre-install\n";
    assert.deepEqual(ok(hook), []);
  });
});

describe("mainWorkload", () => {
  test("is the workload named like the instance, else the first one", () => {
    assert.equal(mainWorkload(ok(stream), "web")?.metadata.name, "web");
    assert.equal(mainWorkload(ok(stream), "other")?.metadata.name, "web-worker");
  });
});

describe("mainServiceEndpoint", () => {
  test("is the Service named like the main workload (else the only one), by DNS name and first port", () => {
    assert.equal(mainServiceEndpoint(ok(stream), "web", "shop"), "web.shop.svc:8080");
    const service = (name: string, port?: number): RenderedObject => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name },
      spec: port === undefined ? {} : { ports: [{ port }] },
    });
    assert.equal(mainServiceEndpoint([service("api", 9898)], "web", "shop"), "api.shop.svc:9898");
    assert.equal(mainServiceEndpoint([service("a", 1), service("b", 2)], "web", "shop"), undefined, "which one?");
    assert.equal(mainServiceEndpoint([service("web")], "web", "shop"), undefined, "no port");
    assert.equal(mainServiceEndpoint([], "web", "shop"), undefined);
  });
});

describe("pruneCandidates", () => {
  test("are the controlled objects the render no longer has, never others' objects", () => {
    const controlled = [{ uid: "uid-1", controller: true }];
    const live = [
      { apiVersion: "v1", kind: "Service", metadata: { name: "web", ownerReferences: controlled } },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "gone", ownerReferences: controlled } },
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "foreign", ownerReferences: [{ uid: "x", controller: true }] },
      },
    ];
    assert.deepEqual(
      pruneCandidates(live, ok(stream), "uid-1").map((o) => o.metadata.name),
      ["gone"],
    );
  });
});

describe("volumeRefusal", () => {
  const statefulSet = (size: string) => ({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "web", ownerReferences: [{ uid: "uid-1", controller: true }] },
    spec: {
      volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: size } } } }],
    },
  });
  const rendered = (size: string) =>
    ok(
      `apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  volumeClaimTemplates:\n` +
        `    - metadata:\n        name: data\n      spec:\n        resources:\n          requests:\n            storage: ${size}\n`,
    );

  test("refuses dropping a StatefulSet with volumes, and shrinking a claim; allows growing", () => {
    assert.equal(volumeRefusal([statefulSet("1Gi")], [], "uid-1")?.reason, "ChartDropsVolumes");
    assert.equal(volumeRefusal([statefulSet("2Gi")], rendered("1024Mi"), "uid-1")?.reason, "ChartShrinksVolumes");
    assert.equal(volumeRefusal([statefulSet("1Gi")], rendered("1024Mi"), "uid-1"), undefined);
    assert.equal(volumeRefusal([statefulSet("1Gi")], rendered("2Gi"), "uid-1"), undefined);
  });
});
