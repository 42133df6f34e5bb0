/** Keeps one operator replica through voluntary disruptions (node drains) when there are several. */
import type { PodDisruptionBudgetManifest } from "./manifest-types.ts";
import { objectMeta, operatorObjectNames, selectorLabels } from "./metadata.ts";
import type { OperatorSettings } from "./settings.ts";

/**
 * The budget, or undefined with fewer than 2 in-cluster replicas: with one, `minAvailable: 1` would block every
 * node drain forever.
 */
export function operatorPodDisruptionBudget(settings: OperatorSettings): PodDisruptionBudgetManifest | undefined {
  if (settings.operatorPlacement !== "in-cluster" || settings.replicas < 2) return undefined;
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: objectMeta(settings, operatorObjectNames(settings).podDisruptionBudget, settings.namespace),
    spec: { minAvailable: 1, selector: { matchLabels: selectorLabels(settings) } },
  };
}
