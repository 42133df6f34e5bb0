/**
 * The operator's command line, from the settings: the Deployment passes it as container args, and an operator
 * outside the cluster (operatorPlacement "external") runs with {@link externalOperatorFlags}.
 */
import { chartKindsFlag } from "./chart-kinds.ts";
import { chartLimitFlags } from "./chart-limits.ts";
import { chartServiceTypesFlag } from "./chart-service-types.ts";
import { defaultChartFlag } from "./default-chart.ts";
import { operatorObjectNames } from "./metadata.ts";
import { healthPort, metricsPort } from "./operator-endpoints.ts";
import { platformPolicyFlags } from "./platform-policy.ts";
import type { OperatorSettings } from "./settings.ts";
import { webhookFlags } from "./webhooks.ts";

export interface FlagOverrides {
  /** Default `:8080` (all interfaces, as a pod needs); a local process may prefer `127.0.0.1:0`-style addresses. */
  readonly metricsBindAddress?: string;
  /**
   * `--metrics-secure`: /metrics answers only bearer tokens the apiserver authenticates and allows `get /metrics`
   * (the metrics-reader ClusterRole grants it). The ServiceAccount may ask the apiserver only in-cluster
   * (rbac-objects.ts).
   * @default true in-cluster, false otherwise
   */
  readonly metricsSecure?: boolean;
  /** Default `:8081`. */
  readonly healthProbeBindAddress?: string;
}

export function operatorFlags(settings: OperatorSettings, overrides: FlagOverrides = {}): string[] {
  const flags: string[] = [];
  // No --namespaces flag means every namespace, matching the ClusterRole of cluster-wide mode.
  if (settings.watchNamespaces.length > 0) flags.push(`--namespaces=${settings.watchNamespaces.join(",")}`);
  if (settings.leaderElection) {
    flags.push(
      "--leader-elect",
      `--leader-election-namespace=${settings.namespace}`,
      `--leader-election-id=${operatorObjectNames(settings).leaderElectionId}`,
    );
  }
  flags.push(
    `--metrics-bind-address=${overrides.metricsBindAddress ?? `:${metricsPort}`}`,
    ...((overrides.metricsSecure ?? settings.operatorPlacement === "in-cluster") ? ["--metrics-secure"] : []),
    `--health-probe-bind-address=${overrides.healthProbeBindAddress ?? `:${healthPort}`}`,
    `--log-level=${settings.logLevel}`,
    `--concurrency=${settings.concurrency}`,
    ...chartLimitFlags(settings),
    ...chartKindsFlag(settings.chartKinds),
    ...chartServiceTypesFlag(settings.chartServiceTypes),
    ...defaultChartFlag(settings.defaultChart),
    ...platformPolicyFlags(settings.policy),
    ...webhookFlags(settings),
  );
  return flags;
}

/**
 * What an operator outside the cluster (operatorPlacement "external") must be started with to match the settings
 * (`npx --no-install myapp-operator ...`), or undefined in-cluster, where the Deployment passes them. Leader election is on
 * (its RBAC is granted to an external operator), so a second process waits instead of reconciling beside the first;
 * where it listens for metrics and probes is the process's own choice, so those flags are left out.
 */
export function externalOperatorFlags(settings: OperatorSettings): string[] | undefined {
  if (settings.operatorPlacement !== "external") return undefined;
  const ownChoice = ["--metrics-bind-address=", "--health-probe-bind-address=", "--metrics-secure"];
  return operatorFlags({ ...settings, leaderElection: true }).filter(
    (flag) => !ownChoice.some((prefix) => flag.startsWith(prefix)),
  );
}
