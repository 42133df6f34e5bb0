/**
 * The chart branch of reconcile against the recording FakeCluster, with a stub renderer standing in for Helm (the
 * integration tests run the real one): what it applies, that a converged instance costs zero writes, what it
 * prunes, and how render and fetch failures are reported.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChartFetchError, ChartRenderError, type ChartRenderer } from "../../../chart/index.ts";
import { PermanentError, TransientError } from "../../../operator/reconcile/index.ts";
import { isTransientFailure } from "../../../operator/reconcile/errors.ts";
import { apiVersion, kind, renderableChartKinds } from "../../../api/index.ts";
import { apiErrorFrom } from "../../../kube/index.ts";
import { harness } from "../reconcile/setup.ts";

const deployment = (name: string, image: string, replicas: number) => `---
# Source: app/templates/${name}.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      securityContext: { runAsNonRoot: true, seccompProfile: { type: RuntimeDefault } }
      containers:
        - name: main
          image: ${image}
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
`;
const configMap = (name: string) => `---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
data:
  a: "1"
`;

function setup(render: (values: Record<string, unknown>) => string) {
  const h = harness();
  const renderer: ChartRenderer = {
    render: async (request) => ({ manifest: render(request.values), hooks: ["app/templates/test.yaml"], crds: [] }),
  };
  // A platform that opted into every kind charts can render (the default allows only the template's kinds).
  Object.assign(h.deps, {
    chart: { renderer, fetchChart: async () => new Uint8Array([1]), allowedKinds: renderableChartKinds },
  });
  return { h };
}

describe("reconcile with spec.chart", () => {
  test("applies the render, is Ready once the main workload rolled out, then costs zero writes", async () => {
    // GIVEN a chart that renders the main Deployment from the typed values, a worker and a ConfigMap
    const { h } = setup((values) => {
      const image = values["image"] as { repository: string; tag: string };
      return (
        deployment("web", `${image.repository}:${image.tag}`, values["replicaCount"] as number) +
        deployment("web-worker", "busybox:1", 1) +
        configMap("web-config")
      );
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", replicas: 2, chart: { configMap: "c" } });

    // WHEN reconciled
    await h.run();
    // THEN every object is applied (owned by the instance) and the instance waits for the rollouts
    assert.deepEqual(
      h.cluster.writeLines().filter((line) => line.startsWith("apply ")),
      ["apply Deployment/web", "apply Deployment/web-worker", "apply ConfigMap/web-config"],
    );
    assert.equal(h.cluster.instance("web")?.status?.phase, "Pending");
    // ... and says what the render takes of the namespace's budget: both Deployments' replicas, no volumes
    assert.deepEqual(h.cluster.instance("web")?.status?.chartUsage, { replicas: 3, storage: "0" });

    // WHEN the Deployments roll out
    h.cluster.rollOut("Deployment", "web");
    h.cluster.rollOut("Deployment", "web-worker");
    await h.run();
    const status = h.cluster.instance("web")?.status;
    assert.equal(status?.phase, "Running");
    assert.equal(status?.image, "nginx:1.27");
    assert.equal(status?.readyReplicas, 2);
    assert.equal(status?.selector, "app=web");
    assert.match(status?.message ?? "", /hooks and tests not run: app\/templates\/test\.yaml/);

    // THEN once converged, a reconcile writes nothing
    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.allWrites(), []);
  });

  test("where a budget holds, says a growing render's usage before applying it, and keeps it if the apply fails", async () => {
    // GIVEN a namespace with a budget, and a chart of a Deployment of 9 replicas and a ConfigMap admission refuses
    const { h } = setup(() => deployment("web", "nginx:1.27", 9) + configMap("web-config"));
    const budget = { reserve: async () => undefined, forget: () => {}, counts: async () => true };
    Object.assign(h.deps.chart!, { namespaceBudget: budget });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    h.cluster.failNext(
      "apply",
      apiErrorFrom(403, { message: "denied", reason: "Forbidden", code: 403 }, "PATCH: HTTP 403"),
      "ConfigMap",
    );
    // WHEN reconciled THEN the usage is in the status before the Deployment is applied, and stays with the refusal
    await assert.rejects(h.run(), (error: unknown) => error instanceof PermanentError);
    const writes = h.cluster.writeLines();
    const said = writes.findIndex((line) => line.startsWith("applyStatus "));
    assert.ok(said >= 0 && said < writes.indexOf("apply Deployment/web"), `the usage first: ${writes.join(", ")}`);
    assert.deepEqual(h.cluster.instance("web")?.status?.chartUsage, { replicas: 9, storage: "0" });
    assert.equal(h.cluster.instance("web")?.status?.phase, "Degraded");

    // AND where no budget holds, nothing is said before the apply
    const free = setup(() => deployment("web", "nginx:1.27", 9));
    Object.assign(free.h.deps.chart!, { namespaceBudget: { ...budget, counts: async () => false } });
    free.h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await free.h.run();
    assert.equal(free.h.cluster.writeLines().filter((line) => line.startsWith("applyStatus")).length, 1);
  });

  test("tells its changes as the template does: one Created event for the new objects, none for a new image alone", async () => {
    // GIVEN a chart rendering two Deployments and a ConfigMap from the typed values
    const { h } = setup((values) => {
      const image = values["image"] as { repository: string; tag: string };
      return (
        deployment("web", `${image.repository}:${image.tag}`, values["replicaCount"] as number) +
        deployment("web-worker", "busybox:1", 1) +
        configMap("web-config")
      );
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", replicas: 2, chart: { configMap: "c" } });

    // WHEN the instance is created THEN one event names every object the chart created
    await h.run();
    assert.deepEqual(
      h.cluster.events.map((e) => `${e.reason}: ${e.note}`),
      ["Created: Created Deployment web, ConfigMap web-config and Deployment web-worker"],
    );

    // WHEN only the image changes THEN the apply tells nothing (the rollout's events will)
    h.cluster.rollOut("Deployment", "web");
    h.cluster.rollOut("Deployment", "web-worker");
    await h.run();
    h.cluster.reset();
    h.cluster.edit(
      apiVersion,
      kind,
      "web",
      (o) => void ((o["spec"] as Record<string, unknown>)["image"] = "nginx:1.28"),
    );
    await h.run();
    assert.deepEqual(
      h.cluster.writeLines().filter((line) => line.startsWith("apply ")),
      ["apply Deployment/web"],
    );
    assert.deepEqual(
      h.cluster.events.map((e) => e.reason).filter((reason) => reason === "Updated" || reason === "Created"),
      [],
    );

    // WHEN the replicas change THEN the one changed object is told as Scaled
    h.cluster.reset();
    h.cluster.edit(apiVersion, kind, "web", (o) => void ((o["spec"] as Record<string, unknown>)["replicas"] = 3));
    await h.run();
    assert.deepEqual(
      h.cluster.events.map((e) => `${e.reason}: ${e.note}`).filter((line) => line.startsWith("Scaled")),
      ["Scaled: Scaled Deployment web from 2 to 3 replicas"],
    );
  });

  test("renders at low priority only to re-check an instance Ready at its spec; a change renders at normal", async () => {
    // GIVEN a renderer that records the priority of each render it is asked for
    const { h } = setup(() => deployment("web", "nginx:1.27", 1));
    const priorities: string[] = [];
    const chart = h.deps.chart!;
    Object.assign(h.deps, {
      chart: {
        ...chart,
        renderer: {
          render: async (request: Parameters<ChartRenderer["render"]>[0]) => {
            priorities.push(request.priority ?? "normal");
            return chart.renderer.render(request);
          },
        },
      },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    // WHEN it is created and rolled out, then looked at again (as after a restart), then changed
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    await h.run();
    h.cluster.edit(apiVersion, kind, "web", (o) => void ((o["spec"] as Record<string, unknown>)["replicas"] = 2));
    await h.run();
    // THEN only the look at the Ready instance was low
    assert.deepEqual(priorities, ["normal", "normal", "low", "normal"]);
  });

  test("prunes what a new render no longer contains, and only that", async () => {
    let withConfig = true;
    const { h } = setup(() => deployment("web", "nginx:1.27", 1) + (withConfig ? configMap("web-config") : ""));
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    withConfig = false;
    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.writeLines(), ["delete ConfigMap/web-config"]);
    assert.equal(h.cluster.get("v1", "ConfigMap", "web-config"), undefined);
  });

  test("a render error is Degraded with Helm's message and a PermanentError", async () => {
    const h = harness();
    Object.assign(h.deps, {
      chart: {
        renderer: {
          render: async () => {
            throw new ChartRenderError("execution error at (app/templates/x.yaml:3:4): boom");
          },
        },
        fetchChart: async () => new Uint8Array([1]),
      },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await assert.rejects(h.run(), PermanentError);
    const degraded = h.cluster.instance("web")?.status?.conditions?.find((c) => c.type === "Degraded");
    assert.equal(degraded?.reason, "ChartRenderFailed");
    assert.match(degraded?.message ?? "", /ConfigMap default\/c does not render: .*app\/templates\/x\.yaml:3:4/);
  });

  test("a chart source that may come back (a ConfigMap not there yet, a registry down) is retried with the status untouched", async () => {
    const h = harness();
    Object.assign(h.deps, {
      chart: {
        renderer: { render: async () => ({ manifest: "", hooks: [], crds: [] }) },
        fetchChart: async () => {
          throw new ChartFetchError("oci://r/c:1.0.0 cannot be fetched: r answered 503", "ChartFetchFailed", {
            transient: true,
          });
        },
      },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    h.cluster.reset();
    // THEN a TransientError the runtime retries (and reports Stalled after the fast retries), and no Degraded
    const error = await h.run().then(
      () => assert.fail("the reconcile succeeded"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TransientError, String(error));
    assert.equal(isTransientFailure(error), true);
    assert.notEqual(h.cluster.instance("web")?.status?.conditions?.find((c) => c.type === "Degraded")?.status, "True");
    assert.deepEqual(
      h.cluster.writeLines().filter((line) => line.includes("status")),
      [],
    );
  });

  for (const [reason, message] of [
    ["ChartSourceNotAllowed", "oci://r/c:1.0.0 is not an allowed chart source (--chart-sources)"],
    ["ChartDigestMismatch", "oci://r/c:1.0.0's chart layer has digest sha256:1, not sha256:2"],
    ["ChartFetchFailed", "oci://r/c:1.0.0 cannot be fetched: r answered 404 for the manifest"],
  ] as const) {
    test(`a chart fetch that will not heal (${reason}) is Degraded naming it, and not retried`, async () => {
      const h = harness();
      Object.assign(h.deps, {
        chart: {
          renderer: { render: async () => ({ manifest: "", hooks: [], crds: [] }) },
          fetchChart: async () => {
            throw new ChartFetchError(message, reason);
          },
        },
      });
      h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
      await assert.rejects(h.run(), PermanentError);
      const degraded = h.cluster.instance("web")?.status?.conditions?.find((c) => c.type === "Degraded");
      assert.equal(degraded?.reason, reason);
      assert.equal(degraded?.message, message);
      // The same failure again writes nothing new.
      h.cluster.reset();
      await assert.rejects(h.run(), PermanentError);
      assert.deepEqual(h.cluster.writeLines(), []);
    });
  }

  test("a render over a platform limit is Degraded with ChartRenderLimit naming the flag; over the wall time it is retried", async () => {
    const h = harness();
    let transient = false;
    Object.assign(h.deps, {
      chart: {
        renderer: {
          render: async () => {
            throw new ChartRenderError(
              transient
                ? "helm used more than 60 s; the platform's limit is --render-timeout"
                : "helm used more than 256 MiB of memory; the platform's limit is --render-memory",
              { reason: "ChartRenderLimit", transient },
            );
          },
        },
        fetchChart: async () => new Uint8Array([1]),
      },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await assert.rejects(h.run(), PermanentError);
    const degraded = h.cluster.instance("web")?.status?.conditions?.find((c) => c.type === "Degraded");
    assert.equal(degraded?.reason, "ChartRenderLimit");
    assert.match(
      degraded?.message ?? "",
      /ConfigMap default\/c does not render: helm used more than 256 MiB.*--render-memory/,
    );
    transient = true;
    await assert.rejects(h.run(), TransientError);
  });
});

describe("switching between a chart and the built-in template", () => {
  const statefulSet = (name: string, size: string) => `---
# Source: app/templates/sts.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: ${name}
spec:
  replicas: 1
  serviceName: ${name}
  selector:
    matchLabels: { app.kubernetes.io/name: myapp, app.kubernetes.io/instance: web }
  template:
    metadata:
      labels: { app.kubernetes.io/name: myapp, app.kubernetes.io/instance: web }
    spec:
      securityContext: { runAsNonRoot: true, seccompProfile: { type: RuntimeDefault } }
      containers:
        - name: main
          image: nginx:1.27
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        resources:
          requests:
            storage: ${size}
`;

  test("removing spec.chart: the template takes over its namesakes and prunes the rest, after applying", async () => {
    // GIVEN an instance whose chart rendered its main Deployment (the template's name), a worker and a ConfigMap
    const { h } = setup(
      () => deployment("web", "nginx:1.27", 1) + deployment("web-worker", "busybox:1", 1) + configMap("web-config"),
    );
    h.cluster.createInstance("web", { image: "nginx:1.27", chart: { configMap: "c" } });
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    h.cluster.rollOut("Deployment", "web-worker");
    await h.run();

    // WHEN spec.chart is removed
    h.cluster.edit(apiVersion, kind, "web", (o) => {
      o["spec"] = { image: "nginx:1.27" };
    });
    h.cluster.reset();
    await h.run();

    // THEN the template applies its Service and Deployment first, then prunes only what it does not make
    assert.deepEqual(
      h.cluster.writeLines().filter((line) => !line.startsWith("applyStatus")),
      ["apply Service/web", "apply Deployment/web", "delete Deployment/web-worker", "delete ConfigMap/web-config"],
    );
    assert.ok(h.cluster.get("apps/v1", "Deployment", "web"), "the template's Deployment stays");
  });

  test("removing spec.chart is refused when the template would drop the chart's volumes; nothing changes", async () => {
    // GIVEN a chart StatefulSet with 1Gi volumes
    const { h } = setup(() => statefulSet("web", "1Gi") + configMap("web-config"));
    h.cluster.createInstance("web", { image: "nginx:1.27", storage: "1Gi", chart: { configMap: "c" } });
    await h.run();

    // WHEN spec.chart is removed and the template would run a StatefulSet with smaller volumes, or none
    for (const [spec, reason] of [
      [{ image: "nginx:1.27" }, "BuiltInTemplateDropsVolumes"],
      [{ image: "nginx:1.27", storage: "512Mi" }, "BuiltInTemplateShrinksVolumes"],
    ] as const) {
      h.cluster.edit(apiVersion, kind, "web", (o) => {
        o["spec"] = spec;
      });
      h.cluster.reset();
      await assert.rejects(h.run(), PermanentError);

      // THEN it is Degraded with the reason, and no object was applied or deleted
      const degraded = h.cluster.instance("web")?.status?.conditions?.find((c) => c.type === "Degraded");
      assert.equal(degraded?.reason, reason);
      assert.match(degraded?.message ?? "", /StatefulSet\/web/);
      assert.deepEqual(
        h.cluster.writeLines().filter((line) => !line.startsWith("applyStatus")),
        [],
      );
    }
  });

  test("an instance that never had a chart lists chart objects but writes nothing more", async () => {
    const h = harness();
    h.cluster.createInstance("web", { image: "nginx:1.27" });
    await h.run();
    h.cluster.rollOut("Deployment", "web");
    await h.run();
    h.cluster.reset();
    await h.run();
    assert.deepEqual(h.cluster.allWrites(), []);
  });
});

describe("the platform's default chart", () => {
  test("renders instances whose spec names no chart; a spec's own chart wins", async () => {
    const h = harness();
    const charts: string[] = [];
    Object.assign(h.deps, {
      chart: {
        renderer: {
          render: async (request: { release: string }) => ({
            manifest: deployment(request.release, "nginx:1.27", 1),
            hooks: [],
            crds: [],
          }),
        },
        fetchChart: async (chart: { oci?: string; configMap?: string }) => {
          charts.push(chart.oci ?? chart.configMap ?? "");
          return new Uint8Array([1]);
        },
        defaultChart: { oci: "oci://registry.example.com/charts/myapp", version: "1.0.0" },
      },
    });
    h.cluster.createInstance("web", { image: "nginx:1.27" });
    await h.run();
    h.cluster.createInstance("own", { image: "nginx:1.27", chart: { configMap: "own-chart" } });
    await h.run("own");
    assert.deepEqual(charts, ["oci://registry.example.com/charts/myapp", "own-chart"]);
    assert.ok(h.cluster.get("apps/v1", "Deployment", "web"));
  });
});
