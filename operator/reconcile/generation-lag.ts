/**
 * A workload generation its controller has not seen yet, when nobody asked for a rollout. Kubernetes counts a new
 * annotation on a Deployment as a new generation, so anyone who annotates an instance's Deployment (a tenant in a
 * loop, a tool stamping it) made a Ready instance report Progressing for the moment the controller took, then Ready
 * again: two status writes, two watch events to every client and a Ready flip per touch, and a `pulumi up` waiting
 * meanwhile would see it. While such a lag is younger than a grace, the status reads the workload as observed, if
 * nothing the instance asked for can be behind: the instance is Ready at its spec and generation, this reconcile
 * wrote nothing, and every count is at its spec. A lag that lasts (a real change the controller is slow to take)
 * is reported once the grace is over; the reconcile looks again then.
 */
import { isReady, type MyAppInstanceStatus } from "../../api/index.ts";
import type { ObservedWorkload } from "./observed.ts";
import { rolloutProgress } from "./rollout.ts";
import type { Session } from "./session.ts";

/** How long an unseen workload generation nobody asked to roll out waits before an instance reports it. */
export const generationLagGraceMs = 2000;

/**
 * `workload` as the status should read it for an instance that wants `replicas` of `image` from it (undefined: a
 * workload whose image the status does not track), `previous` being its status: observed while a lag is within the
 * grace (and when to look again: `recheckAfterMs`), else as it is.
 */
export function readWithinLagGrace(
  session: Pick<Session, "instance" | "writes" | "clock" | "generationLags">,
  workload: ObservedWorkload | undefined,
  replicas: number,
  image: string | undefined,
  previous: MyAppInstanceStatus | undefined,
): { readonly workload: ObservedWorkload | undefined; readonly recheckAfterMs?: number } {
  const lags = session.generationLags;
  const uid = workload?.metadata.uid;
  if (!workload || !lags || uid === undefined) return { workload };
  const generation = workload.metadata.generation ?? 0;
  const seen = workload.status?.observedGeneration;
  if (seen === undefined || seen >= generation) {
    lags.passed(uid);
    return { workload };
  }
  const asObserved: ObservedWorkload = { ...workload, status: { ...workload.status, observedGeneration: generation } };
  const atSpec =
    session.writes() === 0 &&
    (image === undefined || previous?.image === image) &&
    isReady({ metadata: { generation: session.instance.metadata.generation }, status: previous }) &&
    rolloutProgress(asObserved, replicas).complete;
  if (!atSpec) return { workload };
  const lagMs = lags.seenFor(uid, session.clock.monotonicMs());
  if (lagMs >= generationLagGraceMs) return { workload };
  return { workload: asObserved, recheckAfterMs: generationLagGraceMs - lagMs };
}
