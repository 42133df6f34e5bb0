/**
 * The operator's command line, from the settings: the Deployment passes it as container args, and a local run
 * (operatorPlacement "external") can pass the same flags with its own bind addresses.
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
