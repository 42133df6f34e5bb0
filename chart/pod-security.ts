/**
 * The Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/, the checks
 * of k8s.io/pod-security-admission/policy at its latest version) applied to the pods a chart renders, at the
 * instance's `spec.podSecurityLevel`, before anything is applied: a chart cannot run pods the built-in template
 * would not (operator/desired/security-context.ts meets exactly these levels). Pure.
 *
 * Deliberately stricter than upstream in two places, both for pods that user namespaces (`hostUsers: false`)
 * would let through: `procMount: Unmasked` and root users are refused even then.
 */
import type { PodSecurityLevel } from "../api/index.ts";
import type { RenderedObject } from "./manifests.ts";
import { list, podTemplateOf, record, type PodTemplate } from "./pod-templates.ts";
import { objectName } from "./manifests.ts";
import type { RenderRefusal } from "./render-rules.ts";

/** One field of a pod template that breaks a level: its path in the object, and what is allowed. */
export interface PodSecurityViolation {
  /** Field path in the rendered object, e.g. `spec.template.spec.containers[0].securityContext.privileged`. */
  readonly path: string;
  /** What the field must be instead. */
  readonly rule: string;
  /** The lowest level the field breaks: Baseline (every level) or Restricted. */
  readonly level: PodSecurityLevel;
}

/** Capabilities Baseline lets a container add: the container runtime's default set. */
export const baselineCapabilities: readonly string[] = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
];

/** Sysctls Baseline allows: namespaced per pod and isolated from other pods on the node. */
export const safeSysctls: readonly string[] = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
];

/** SELinux types Baseline allows (besides none). */
const seLinuxTypes = ["container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

/** Inline volume sources Restricted allows. */
export const restrictedVolumeTypes: readonly string[] = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];

const containerLists = ["containers", "initContainers", "ephemeralContainers"] as const;
const appArmorAnnotation = "container.apparmor.security.beta.kubernetes.io/";

/**
 * Every field of `object`'s pod template that breaks `level` (Restricted includes Baseline); empty for a kind
 * that makes no pods or a template that meets the level.
 */
export function podSecurityViolations(object: RenderedObject, level: PodSecurityLevel): PodSecurityViolation[] {
  const template = podTemplateOf(object);
  if (!template) return [];
  const found: PodSecurityViolation[] = [];
  const baseline = (path: string, rule: string) => found.push({ path, rule, level: "Baseline" });
  const restricted = (path: string, rule: string) => found.push({ path, rule, level: "Restricted" });
  checkBaseline(template, baseline);
  if (level === "Restricted") checkRestricted(template, restricted);
  return found;
}

/**
 * The refusal for the first rendered object whose pods break the instance's level (reason `ChartPodSecurity`),
 * naming the object, every offending field and the level; undefined when every pod template meets it.
 */
export function podSecurityRefusal(
  objects: readonly RenderedObject[],
  level: PodSecurityLevel,
): RenderRefusal | undefined {
  for (const object of objects) {
    const violations = podSecurityViolations(object, level);
    if (violations.length === 0) continue;
    const shown = violations.slice(0, maxShown).map((violation) => `${violation.path} ${violation.rule}`);
    if (violations.length > maxShown) shown.push(`and ${violations.length - maxShown} more`);
    const onlyRestricted = violations.every((violation) => violation.level === "Restricted");
    return {
      reason: "ChartPodSecurity",
      message:
        `${objectName(object)} does not meet the ${level} pod security level (spec.podSecurityLevel): ` +
        `${shown.join("; ")}. ` +
        (onlyRestricted
          ? "Set these through the chart's values, or give the instance spec.podSecurityLevel: Baseline"
          : "No instance may run such pods; change the chart or its values"),
    };
  }
  return undefined;
}

/** Enough fields to fix a typical chart in one go, while the message stays readable. */
const maxShown = 8;

type Report = (path: string, rule: string) => void;

interface Container {
  readonly path: string;
  readonly name: string;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly securityContext: Readonly<Record<string, unknown>>;
}

function containersOf(template: PodTemplate): Container[] {
  return containerLists.flatMap((field) =>
    list(template.spec[field]).map((value, index) => {
      const fields = record(value);
      return {
        path: `${template.specPath}.${field}[${index}]`,
        name: typeof fields["name"] === "string" ? fields["name"] : "",
        fields,
        securityContext: record(fields["securityContext"]),
      };
    }),
  );
}

function checkBaseline(template: PodTemplate, report: Report): void {
  const { spec, specPath } = template;
  const pod = record(spec["securityContext"]);
  const podPath = `${specPath}.securityContext`;
  const containers = containersOf(template);

  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (spec[field] === true) report(`${specPath}.${field}`, "must be unset or false (host namespaces)");
  }
  if (record(pod["windowsOptions"])["hostProcess"] === true) {
    report(`${podPath}.windowsOptions.hostProcess`, "must be unset or false");
  }
  list(spec["volumes"]).forEach((volume, index) => {
    if (record(volume)["hostPath"] !== undefined) {
      report(`${specPath}.volumes[${index}].hostPath`, "must not be used (hostPath volumes)");
    }
  });
  checkSeccomp(pod, podPath, report, false);
  checkSeLinux(pod, podPath, report);
  checkAppArmorProfile(pod, podPath, report);
  list(pod["sysctls"]).forEach((sysctl, index) => {
    const name = record(sysctl)["name"];
    if (typeof name !== "string" || !safeSysctls.includes(name)) {
      report(`${podPath}.sysctls[${index}].name`, `is ${String(name)}; allowed: ${safeSysctls.join(", ")}`);
    }
  });
  for (const [key, value] of Object.entries(record(template.metadata["annotations"]))) {
    if (!key.startsWith(appArmorAnnotation)) continue;
    if (value !== "runtime/default" && !(typeof value === "string" && value.startsWith("localhost/"))) {
      report(`${template.metadataPath}.annotations["${key}"]`, "must be runtime/default or localhost/<profile>");
    }
  }

  for (const container of containers) {
    const context = container.securityContext;
    const contextPath = `${container.path}.securityContext`;
    if (context["privileged"] === true) report(`${contextPath}.privileged`, "must be unset or false");
    if (record(context["windowsOptions"])["hostProcess"] === true) {
      report(`${contextPath}.windowsOptions.hostProcess`, "must be unset or false");
    }
    list(record(context["capabilities"])["add"]).forEach((capability, index) => {
      if (typeof capability !== "string" || !baselineCapabilities.includes(capability)) {
        report(
          `${contextPath}.capabilities.add[${index}]`,
          `is ${String(capability)}; allowed: ${baselineCapabilities.join(", ")}`,
        );
      }
    });
    if (context["procMount"] !== undefined && context["procMount"] !== "Default") {
      report(`${contextPath}.procMount`, "must be unset or Default");
    }
    checkSeccomp(context, contextPath, report, false);
    checkSeLinux(context, contextPath, report);
    checkAppArmorProfile(context, contextPath, report);
    list(container.fields["ports"]).forEach((port, index) => {
      const hostPort = record(port)["hostPort"];
      if (hostPort !== undefined && hostPort !== 0) {
        report(`${container.path}.ports[${index}].hostPort`, "must be unset or 0 (host ports)");
      }
    });
    // Probes and lifecycle handlers that name a host reach past the pod (Pod Security 1.34).
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
      checkHandlerHost(record(container.fields[probe]), `${container.path}.${probe}`, report);
    }
    const lifecycle = record(container.fields["lifecycle"]);
    for (const hook of ["postStart", "preStop"]) {
      checkHandlerHost(record(lifecycle[hook]), `${container.path}.lifecycle.${hook}`, report);
    }
  }
}

function checkRestricted(template: PodTemplate, report: Report): void {
  const { spec, specPath } = template;
  const pod = record(spec["securityContext"]);
  const podPath = `${specPath}.securityContext`;
  const containers = containersOf(template);
  // Linux-only fields are not required of Windows pods (as upstream since 1.25).
  const windows = record(spec["os"])["name"] === "windows";

  list(spec["volumes"]).forEach((volume, index) => {
    const fields = record(volume);
    // hostPath is already reported by Baseline.
    if (fields["hostPath"] !== undefined) return;
    const source = Object.keys(fields).find((key) => key !== "name");
    if (source === undefined || !restrictedVolumeTypes.includes(source)) {
      report(
        `${specPath}.volumes[${index}]${source ? `.${source}` : ""}`,
        `is not an allowed volume type; allowed: ${restrictedVolumeTypes.join(", ")}`,
      );
    }
  });

  if (pod["runAsNonRoot"] === false) report(`${podPath}.runAsNonRoot`, "must be true");
  if (pod["runAsUser"] === 0) report(`${podPath}.runAsUser`, "must not be 0 (root)");
  const podSeccomp = record(pod["seccompProfile"])["type"];
  const podSeccompSet = podSeccomp === "RuntimeDefault" || podSeccomp === "Localhost";
  if (!windows) checkSeccomp(pod, podPath, report, true);

  for (const container of containers) {
    const context = container.securityContext;
    const contextPath = `${container.path}.securityContext`;
    if (context["runAsNonRoot"] === false) report(`${contextPath}.runAsNonRoot`, "must be true");
    else if (context["runAsNonRoot"] === undefined && pod["runAsNonRoot"] !== true) {
      report(`${contextPath}.runAsNonRoot`, `must be true (or ${podPath}.runAsNonRoot)`);
    }
    if (context["runAsUser"] === 0) report(`${contextPath}.runAsUser`, "must not be 0 (root)");
    if (windows) continue;
    if (context["allowPrivilegeEscalation"] !== false) {
      report(`${contextPath}.allowPrivilegeEscalation`, "must be false");
    }
    const seccomp = record(context["seccompProfile"])["type"];
    if (seccomp === undefined && !podSeccompSet) {
      report(
        `${contextPath}.seccompProfile.type`,
        `must be RuntimeDefault or Localhost (or ${podPath}.seccompProfile)`,
      );
    } else {
      checkSeccomp(context, contextPath, report, true);
    }
    const capabilities = record(context["capabilities"]);
    if (!list(capabilities["drop"]).includes("ALL")) {
      report(`${contextPath}.capabilities.drop`, "must include ALL");
    }
    list(capabilities["add"]).forEach((capability, index) => {
      // Anything outside the baseline set is reported by Baseline already.
      if (capability !== "NET_BIND_SERVICE" && baselineCapabilities.includes(String(capability))) {
        report(`${contextPath}.capabilities.add[${index}]`, `is ${String(capability)}; allowed: NET_BIND_SERVICE`);
      }
    });
  }
}

/** Baseline: no Unconfined. Restricted: a set type is RuntimeDefault or Localhost (unset is judged by the caller). */
function checkSeccomp(
  context: Readonly<Record<string, unknown>>,
  path: string,
  report: Report,
  restricted: boolean,
): void {
  const type = record(context["seccompProfile"])["type"];
  if (type === undefined) return;
  if (!restricted && type === "Unconfined") report(`${path}.seccompProfile.type`, "must not be Unconfined");
  if (restricted && type !== "Unconfined" && type !== "RuntimeDefault" && type !== "Localhost") {
    report(`${path}.seccompProfile.type`, "must be RuntimeDefault or Localhost");
  }
}

function checkSeLinux(context: Readonly<Record<string, unknown>>, path: string, report: Report): void {
  const options = record(context["seLinuxOptions"]);
  const type = options["type"];
  if (type !== undefined && type !== "" && !seLinuxTypes.includes(String(type))) {
    report(`${path}.seLinuxOptions.type`, `is ${String(type)}; allowed: ${seLinuxTypes.join(", ")}`);
  }
  for (const field of ["user", "role"]) {
    if (options[field] !== undefined && options[field] !== "") {
      report(`${path}.seLinuxOptions.${field}`, "must be unset");
    }
  }
}

function checkAppArmorProfile(context: Readonly<Record<string, unknown>>, path: string, report: Report): void {
  const type = record(context["appArmorProfile"])["type"];
  if (type !== undefined && type !== "RuntimeDefault" && type !== "Localhost") {
    report(`${path}.appArmorProfile.type`, "must be RuntimeDefault or Localhost");
  }
}

function checkHandlerHost(handler: Readonly<Record<string, unknown>>, path: string, report: Report): void {
  for (const action of ["httpGet", "tcpSocket"]) {
    const host = record(handler[action])["host"];
    if (host !== undefined && host !== "") report(`${path}.${action}.host`, "must be unset");
  }
}
