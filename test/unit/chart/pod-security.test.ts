/**
 * Pod Security Standards on rendered pod templates: one test per rule of each level (each breaks exactly that
 * rule on a template that otherwise meets Restricted), the kinds whose pods are checked, the refusal planRender
 * returns, and agreement with the built-in template's own security context.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderableChartKinds, type PodSecurityLevel } from "../../../api/index.ts";
import {
  parseManifests,
  podSecurityRefusal,
  podSecurityViolations,
  type RenderedObject,
} from "../../../chart/index.ts";
import { planRender } from "../../../operator/chart/plan.ts";
import { desiredDeployment, desiredStatefulSet } from "../../../operator/desired/index.ts";
import { instance } from "../desired/fixtures.ts";

type Pod = { metadata?: Record<string, unknown>; spec: Record<string, unknown> };

/** A Deployment whose pod meets Restricted, changed by `edit`. */
function deployment(edit: (pod: Pod) => void = () => {}): RenderedObject {
  const pod: Pod = {
    metadata: { labels: { app: "web" } },
    spec: {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "app",
          image: "nginx:1.27",
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        },
      ],
      volumes: [{ name: "config", configMap: { name: "web" } }],
    },
  };
  edit(pod);
  return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { template: pod } };
}

const container = (pod: Pod, index = 0) =>
  (pod.spec["containers"] as Record<string, unknown>[])[index] as Record<string, unknown> & {
    securityContext: Record<string, unknown>;
  };
const podContext = (pod: Pod) => pod.spec["securityContext"] as Record<string, unknown>;

/** The paths `object` breaks at `level`. */
function paths(object: RenderedObject, level: PodSecurityLevel): string[] {
  return podSecurityViolations(object, level).map((violation) => violation.path);
}

const c0 = "spec.template.spec.containers[0]";

describe("Baseline (and so Restricted too)", () => {
  const cases: [string, (pod: Pod) => void, string][] = [
    ["privileged", (pod) => (container(pod).securityContext["privileged"] = true), `${c0}.securityContext.privileged`],
    ["hostNetwork", (pod) => (pod.spec["hostNetwork"] = true), "spec.template.spec.hostNetwork"],
    ["hostPID", (pod) => (pod.spec["hostPID"] = true), "spec.template.spec.hostPID"],
    ["hostIPC", (pod) => (pod.spec["hostIPC"] = true), "spec.template.spec.hostIPC"],
    [
      "hostPath volumes",
      (pod) => (pod.spec["volumes"] = [{ name: "root", hostPath: { path: "/" } }]),
      "spec.template.spec.volumes[0].hostPath",
    ],
    [
      "hostPort",
      (pod) => (container(pod)["ports"] = [{ containerPort: 80 }, { containerPort: 81, hostPort: 81 }]),
      `${c0}.ports[1].hostPort`,
    ],
    [
      "a capability beyond the runtime's default set",
      (pod) => (container(pod).securityContext["capabilities"] = { drop: ["ALL"], add: ["SYS_ADMIN"] }),
      `${c0}.securityContext.capabilities.add[0]`,
    ],
    [
      "an AppArmor annotation that unconfines",
      (pod) => (pod.metadata = { annotations: { "container.apparmor.security.beta.kubernetes.io/app": "unconfined" } }),
      'spec.template.metadata.annotations["container.apparmor.security.beta.kubernetes.io/app"]',
    ],
    [
      "an Unconfined AppArmor profile",
      (pod) => (container(pod).securityContext["appArmorProfile"] = { type: "Unconfined" }),
      `${c0}.securityContext.appArmorProfile.type`,
    ],
    [
      "an SELinux type outside the container types",
      (pod) => (podContext(pod)["seLinuxOptions"] = { type: "spc_t" }),
      "spec.template.spec.securityContext.seLinuxOptions.type",
    ],
    [
      "an SELinux user",
      (pod) => (container(pod).securityContext["seLinuxOptions"] = { user: "system_u" }),
      `${c0}.securityContext.seLinuxOptions.user`,
    ],
    [
      "procMount Unmasked",
      (pod) => (container(pod).securityContext["procMount"] = "Unmasked"),
      `${c0}.securityContext.procMount`,
    ],
    [
      "seccomp Unconfined",
      (pod) => (container(pod).securityContext["seccompProfile"] = { type: "Unconfined" }),
      `${c0}.securityContext.seccompProfile.type`,
    ],
    [
      "a sysctl outside the safe set",
      (pod) =>
        (podContext(pod)["sysctls"] = [
          { name: "net.ipv4.ip_local_port_range", value: "1024 65535" },
          { name: "kernel.msgmax", value: "65536" },
        ]),
      "spec.template.spec.securityContext.sysctls[1].name",
    ],
    [
      "a Windows HostProcess container",
      (pod) => (container(pod).securityContext["windowsOptions"] = { hostProcess: true }),
      `${c0}.securityContext.windowsOptions.hostProcess`,
    ],
    [
      "a probe that names a host",
      (pod) => (container(pod)["livenessProbe"] = { httpGet: { host: "169.254.169.254", path: "/", port: 80 } }),
      `${c0}.livenessProbe.httpGet.host`,
    ],
    [
      "an init container too",
      (pod) =>
        (pod.spec["initContainers"] = [
          {
            name: "init",
            image: "busybox",
            securityContext: { privileged: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          },
        ]),
      "spec.template.spec.initContainers[0].securityContext.privileged",
    ],
  ];
  for (const [rule, edit, path] of cases) {
    test(`refuses ${rule} at ${path}`, () => {
      // GIVEN a pod that meets Restricted but for this one field
      const object = deployment(edit);
      // THEN both levels name exactly that field
      assert.deepEqual(paths(object, "Baseline"), [path]);
      assert.deepEqual(paths(object, "Restricted"), [path]);
    });
  }

  test("allows what Baseline allows: the default capabilities, a safe sysctl, RuntimeDefault AppArmor", () => {
    const object = deployment((pod) => {
      container(pod).securityContext["capabilities"] = { drop: ["ALL"], add: ["NET_BIND_SERVICE"] };
      container(pod).securityContext["appArmorProfile"] = { type: "RuntimeDefault" };
      podContext(pod)["sysctls"] = [{ name: "net.ipv4.ping_group_range", value: "0 1" }];
      container(pod)["ports"] = [{ containerPort: 80, hostPort: 0 }];
    });
    assert.deepEqual(paths(object, "Restricted"), []);
  });
});

describe("Restricted only", () => {
  const cases: [string, (pod: Pod) => void, string][] = [
    [
      "a volume type outside the allow-list",
      (pod) => (pod.spec["volumes"] = [{ name: "share", nfs: { server: "10.0.0.1", path: "/" } }]),
      "spec.template.spec.volumes[0].nfs",
    ],
    [
      "privilege escalation not turned off",
      (pod) => delete container(pod).securityContext["allowPrivilegeEscalation"],
      `${c0}.securityContext.allowPrivilegeEscalation`,
    ],
    [
      "runAsNonRoot left out at both levels",
      (pod) => delete podContext(pod)["runAsNonRoot"],
      `${c0}.securityContext.runAsNonRoot`,
    ],
    [
      "runAsNonRoot false on a container",
      (pod) => (container(pod).securityContext["runAsNonRoot"] = false),
      `${c0}.securityContext.runAsNonRoot`,
    ],
    ["runAsUser 0", (pod) => (podContext(pod)["runAsUser"] = 0), "spec.template.spec.securityContext.runAsUser"],
    [
      "no seccomp profile",
      (pod) => delete podContext(pod)["seccompProfile"],
      `${c0}.securityContext.seccompProfile.type`,
    ],
    [
      "capabilities not dropped",
      (pod) => delete container(pod).securityContext["capabilities"],
      `${c0}.securityContext.capabilities.drop`,
    ],
    [
      "a default capability other than NET_BIND_SERVICE added",
      (pod) => (container(pod).securityContext["capabilities"] = { drop: ["ALL"], add: ["CHOWN"] }),
      `${c0}.securityContext.capabilities.add[0]`,
    ],
  ];
  for (const [rule, edit, path] of cases) {
    test(`refuses ${rule} at ${path}, which Baseline allows`, () => {
      const object = deployment(edit);
      assert.deepEqual(paths(object, "Restricted"), [path]);
      assert.deepEqual(paths(object, "Baseline"), []);
    });
  }

  test("a container's own seccomp profile and runAsNonRoot stand in for the pod's", () => {
    const object = deployment((pod) => {
      pod.spec["securityContext"] = {};
      container(pod).securityContext["runAsNonRoot"] = true;
      container(pod).securityContext["seccompProfile"] = { type: "Localhost", localhostProfile: "app.json" };
    });
    assert.deepEqual(paths(object, "Restricted"), []);
  });

  test("a pod without any security context breaks Restricted in every field it asks for, and not Baseline", () => {
    const object: RenderedObject = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: { template: { spec: { containers: [{ name: "app", image: "nginx" }] } } },
    };
    assert.deepEqual(paths(object, "Restricted"), [
      `${c0}.securityContext.runAsNonRoot`,
      `${c0}.securityContext.allowPrivilegeEscalation`,
      `${c0}.securityContext.seccompProfile.type`,
      `${c0}.securityContext.capabilities.drop`,
    ]);
    assert.deepEqual(paths(object, "Baseline"), []);
  });
});

describe("which objects are checked", () => {
  const privileged = { containers: [{ name: "app", image: "x", securityContext: { privileged: true } }] };
  const objects: [string, RenderedObject, string][] = [
    [
      "StatefulSet",
      { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "s" }, spec: { template: { spec: privileged } } },
      "spec.template.spec.containers[0].securityContext.privileged",
    ],
    [
      "DaemonSet",
      { apiVersion: "apps/v1", kind: "DaemonSet", metadata: { name: "d" }, spec: { template: { spec: privileged } } },
      "spec.template.spec.containers[0].securityContext.privileged",
    ],
    [
      "Job",
      { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec: { template: { spec: privileged } } },
      "spec.template.spec.containers[0].securityContext.privileged",
    ],
    [
      "CronJob",
      {
        apiVersion: "batch/v1",
        kind: "CronJob",
        metadata: { name: "c" },
        spec: { jobTemplate: { spec: { template: { spec: privileged } } } },
      },
      "spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged",
    ],
    [
      "a bare Pod",
      { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: privileged },
      "spec.containers[0].securityContext.privileged",
    ],
  ];
  for (const [what, object, path] of objects) {
    test(`the pods of a ${what}`, () => assert.deepEqual(paths(object, "Baseline"), [path]));
  }

  test("objects that make no pods", () => {
    const service: RenderedObject = { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: privileged };
    assert.deepEqual(paths(service, "Restricted"), []);
  });
});

describe("the refusal", () => {
  test("names the object, every field and the level, and says how to opt out when only Restricted is broken", () => {
    const refusal = podSecurityRefusal(
      [deployment((pod) => delete container(pod).securityContext["allowPrivilegeEscalation"])],
      "Restricted",
    );
    assert.equal(refusal?.reason, "ChartPodSecurity");
    assert.equal(
      refusal?.message,
      "Deployment/web does not meet the Restricted pod security level (spec.podSecurityLevel): " +
        `${c0}.securityContext.allowPrivilegeEscalation must be false. Set these through the chart's values, or ` +
        "give the instance spec.podSecurityLevel: Baseline",
    );
  });

  test("planRender refuses a privileged chart even for a Baseline instance, before anything is applied", () => {
    const manifest = `# Source: c/templates/ds.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: app
          image: nginx
          securityContext: { privileged: true }
`;
    const plan = planRender(
      parseManifests(manifest),
      { name: "web", namespace: "shop", uid: "u" },
      renderableChartKinds,
      {
        podSecurityLevel: "Baseline",
      },
    );
    assert.ok(!plan.ok);
    assert.equal(plan.refusal.reason, "ChartPodSecurity");
    assert.match(
      plan.refusal.message,
      /^Deployment\/web does not meet the Baseline pod security level .*spec\.template\.spec\.containers\[0\]\.securityContext\.privileged must be unset or false\. No instance may run such pods/,
    );
  });
});

describe("agreement with the built-in template", () => {
  for (const level of ["Restricted", "Baseline"] as const) {
    test(`the built-in ${level} Deployment and StatefulSet meet ${level}`, () => {
      for (const workload of [
        desiredDeployment(instance({ podSecurityLevel: level })),
        desiredStatefulSet(instance({ podSecurityLevel: level, storage: "1Gi" })),
      ]) {
        assert.deepEqual(podSecurityViolations(workload as unknown as RenderedObject, level), []);
      }
    });
  }
});
