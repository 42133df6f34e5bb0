/**
 * The security settings of the app's pods, from spec.podSecurityLevel. Restricted meets the Pod Security
 * "restricted" level (the level the platform enforces on its own namespace), so an instance runs in any namespace.
 */
import type { PodSecurityLevel } from "../../api/index.ts";
import type { ContainerSecurityContext, PodSecurityContext } from "./objects.ts";

export interface DesiredSecurityContext {
  readonly pod: PodSecurityContext;
  readonly container: ContainerSecurityContext;
}

/**
 * - `Restricted`: a non-root user, no privilege escalation, every capability dropped, RuntimeDefault seccomp.
 * - `Baseline`: root allowed, escalation allowed, the runtime's default capabilities (what an image that starts
 *   as root, such as the official nginx or postgres images, needs). Still RuntimeDefault seccomp, which such
 *   images run under everywhere Docker's default profile applies.
 *
 * Baseline spells its values out instead of leaving them unset: the reconciler skips an apply when the live
 * object already holds every desired field, so only explicit values undo Restricted on an instance that opts out.
 */
export function desiredSecurityContext(level: PodSecurityLevel): DesiredSecurityContext {
  const seccompProfile = { type: "RuntimeDefault" } as const;
  if (level === "Baseline") {
    return {
      pod: { runAsNonRoot: false, seccompProfile },
      container: { allowPrivilegeEscalation: true, capabilities: { drop: [] } },
    };
  }
  return {
    pod: { runAsNonRoot: true, seccompProfile },
    container: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
  };
}
