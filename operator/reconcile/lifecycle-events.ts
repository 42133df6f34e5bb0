/**
 * The Normal events of an instance's lifecycle, as a kubebuilder user expects to read them in `kubectl describe`:
 * `Created` (its children), `Scaled`, `Updated` (not for a new image: its rollout tells it), `RollingOut` with its
 * progress (like the Deployment controller's ScalingReplicaSet), `RolloutComplete`, `Ready` (when it turns True
 * again). Pure: each is derived from a change the reconcile is making
 * anyway (an apply, a status write), never from the reconcile itself, so each is recorded once per transition
 * and a converged instance, which makes no apply and writes no status, records none. Events are API writes: the
 * fewest that tell the story (one `Created` for all the children of one reconcile, no progress event for a
 * rollout that only changes counts).
 */
import { Progressing, Ready, type MyAppInstanceStatus } from "../../api/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { isSubset } from "../desired/index.ts";
import { byCodeUnits } from "../../api/code-unit-order.ts";

/** An event about the instance, before it is recorded. */
export interface LifecycleEvent {
  readonly reason: string;
  readonly note: string;
}

/**
 * The one `Created` event for the children a reconcile created, Services first: "Created Service web and
 * Deployment web". Undefined when it created none.
 */
export function createdEvent(created: readonly KubeObject[]): LifecycleEvent | undefined {
  if (created.length === 0) return undefined;
  const names = [...created]
    .sort((a, b) => kindRank(a) - kindRank(b) || byCodeUnits(a.metadata.name ?? "", b.metadata.name ?? ""))
    .map((child) => `${child.kind} ${child.metadata.name ?? ""}`);
  const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return { reason: "Created", note: `Created ${listed}` };
}

function kindRank(object: KubeObject): number {
  return object.kind === "Service" ? 0 : 1;
}

/**
 * The event for applying `desired` over the existing `live` child: `Scaled` when the replica count is all that
 * changes ("Scaled Deployment web from 2 to 3 replicas"), none when a container's image is all that changes (a
 * rollout, which its `RollingOut` and `RolloutComplete` events tell from the status: an `Updated` beside them
 * would be a write that says nothing new), else `Updated`.
 */
export function changedEvent(desired: KubeObject, live: KubeObject): LifecycleEvent | undefined {
  const what = `${desired.kind} ${desired.metadata.name ?? ""}`;
  const wanted = replicasOf(desired);
  const had = replicasOf(live);
  if (wanted !== undefined && had !== undefined && wanted !== had) {
    const rest = { ...desired, spec: { ...(desired["spec"] as object), replicas: had } };
    if (isSubset(rest, live)) return { reason: "Scaled", note: `Scaled ${what} from ${had} to ${wanted} replicas` };
  }
  const withLiveImages = withImagesOf(desired, live);
  if (withLiveImages && isSubset(withLiveImages, live)) return undefined;
  return { reason: "Updated", note: `Updated ${what} to match the spec` };
}

interface Container {
  readonly name?: string;
  readonly image?: string;
}
type WithTemplate = KubeObject & { spec?: { template?: { spec?: { containers?: readonly Container[] } } } };

/**
 * `desired` with each container's image as `live` has it (matched by name), or undefined when `desired` has no
 * pod template or no image differs: then nothing about it is a rollout.
 */
function withImagesOf(desired: KubeObject, live: KubeObject): KubeObject | undefined {
  const wanted = (desired as WithTemplate).spec?.template?.spec?.containers;
  const had = (live as WithTemplate).spec?.template?.spec?.containers ?? [];
  if (!wanted) return undefined;
  let changed = false;
  const containers = wanted.map((container) => {
    const image = had.find((c) => c.name === container.name)?.image;
    if (image === undefined || image === container.image) return container;
    changed = true;
    return { ...container, image };
  });
  if (!changed) return undefined;
  const spec = (desired as WithTemplate).spec!;
  const template = spec.template!;
  return { ...desired, spec: { ...spec, template: { ...template, spec: { ...template.spec, containers } } } };
}

function replicasOf(object: KubeObject): number | undefined {
  const replicas = (object["spec"] as { replicas?: unknown } | undefined)?.replicas;
  return typeof replicas === "number" ? replicas : undefined;
}

/**
 * The Normal events a status write announces, from the status before and after it:
 * - `RollingOut` each time more replicas run a new image ("Rolling out nginx:1.28: 1/3 replicas updated"), read
 *   from the Progressing condition that status.ts writes for a rollout, and only when `countsObserved` (the
 *   workload controller has seen the new template: until then the counts are the old template's); a scale or a
 *   change of anything but the image says nothing here (its `Scaled` or `Updated` event did);
 * - `RolloutComplete` when status.image moves to the new image (which it does only once every replica runs it);
 * - else `Ready` when Ready turns True again (after a scale, a recovery), with the status's message. A new
 *   instance's first Ready (no image rolled out before) records none: its `Created` event told what the operator
 *   did, and the Ready condition's lastTransitionTime tells when it finished, so an event would be a write per
 *   instance that says nothing new.
 */
export function statusEvents(
  previous: MyAppInstanceStatus | undefined,
  next: MyAppInstanceStatus,
  { countsObserved }: { readonly countsObserved: boolean },
): readonly LifecycleEvent[] {
  const events: LifecycleEvent[] = [];
  const rollout = countsObserved ? rolloutOf(next) : undefined;
  if (rollout && rollout.image !== next.image && rollout.updated > 0) {
    const before = rolloutOf(previous);
    if (before?.image !== rollout.image || before.updated !== rollout.updated) {
      events.push({
        reason: "RollingOut",
        note: `Rolling out ${rollout.image}: ${rollout.updated}/${rollout.desired} replicas updated`,
      });
    }
  }
  const imageMoved = next.image !== undefined && previous?.image !== undefined && next.image !== previous.image;
  if (imageMoved) {
    events.push({
      reason: "RolloutComplete",
      note: `${next.image} is rolled out: ${next.readyReplicas ?? 0}/${next.replicas ?? 0} replicas ready`,
    });
  } else if (
    previous?.image !== undefined &&
    conditionStatus(next, Ready) === "True" &&
    conditionStatus(previous, Ready) !== "True"
  ) {
    events.push({ reason: "Ready", note: next.message ?? "Ready" });
  }
  return events;
}

/**
 * A rollout under way as the Progressing condition tells it (status.ts: "rolling out IMAGE: U/D replicas updated,
 * R/D ready"); the lifecycle-events test holds the two files to the same words.
 */
function rolloutOf(
  status: MyAppInstanceStatus | undefined,
): { image: string; updated: number; desired: number } | undefined {
  const progressing = status?.conditions?.find((c) => c.type === Progressing);
  if (progressing?.status !== "True" || progressing.reason !== "RollingOut") return undefined;
  const match = /^rolling out (\S+): (\d+)\/(\d+) replicas updated/.exec(progressing.message);
  return match ? { image: match[1]!, updated: Number(match[2]), desired: Number(match[3]) } : undefined;
}

function conditionStatus(status: MyAppInstanceStatus | undefined, type: string): string | undefined {
  return status?.conditions?.find((c) => c.type === type)?.status;
}
