/**
 * The waits of one instance in `pulumi up` and `pulumi destroy`: the apply while the operator's admission webhook
 * does not answer yet, Ready after an apply, gone after a delete. Each follows the object (follow.ts) within the
 * instance's `timeoutSeconds`, shows its progress (progress.ts), ends at the engine's Cancel (cancellation.ts), and
 * says why when it gives up (readiness.ts's conditions, warning-events.ts).
 */
import { finalizer } from "../../api/index.ts";
import type { KubeClient } from "../../kube/index.ts";
import { formatObjectKey } from "../../kube/object-key.ts";
import { realClock } from "../../kube/clock.ts";
import type { ClusterIdentity } from "../../kube/cluster-identity.ts";
import { instanceLabel } from "../console.ts";
import { ResourceInitError } from "../init-error.ts";
import { defaultTimeoutSeconds, fieldManager, type InstanceInputs, type InstanceOutputs } from "../inputs.ts";
import { desiredInstance, outputsFor, type LiveInstance } from "../manifest.ts";
import { applyWhenAdmitted } from "./admission-wait.ts";
import { cancellation } from "./cancellation.ts";
import { followObject, type Snapshot } from "./follow.ts";
import { instanceWatchClient } from "./instance-client.ts";
import { waitProgress } from "./progress.ts";
import { assessReadiness, describeConditions, operatorSilenceMs, waitingPhase, type Readiness } from "./readiness.ts";
import { latestWarnings } from "./warning-events.ts";

/**
 * When an operation on an instance (a create or an update: its apply, then Ready) began and must be over: its
 * waits share the one `timeoutSeconds`, so an apply that waited for the webhook leaves Ready the rest.
 */
export interface OperationTime {
  readonly startedMs: number;
  readonly deadlineMs: number;
}

/** An operation's time, starting now. */
export function operationTime(inputs: InstanceInputs): OperationTime {
  const startedMs = realClock.monotonicMs();
  return { startedMs, deadlineMs: startedMs + timeoutMs(inputs) };
}

/** The server-side apply of the instance, waiting while the operator's admission webhook does not answer. */
export async function applyInstance(
  client: KubeClient,
  inputs: InstanceInputs,
  request: string,
  incarnation: string | undefined,
  time: OperationTime = operationTime(inputs),
): Promise<LiveInstance> {
  const progress = waitProgress(instanceLabel(inputs), { timeoutMs: timeoutMs(inputs), startedMs: time.startedMs });
  try {
    return await applyWhenAdmitted(
      () => client.apply<LiveInstance>(desiredInstance(inputs, request, incarnation), { fieldManager, force: true }),
      {
        clock: realClock,
        deadline: time.deadlineMs,
        report: (phase) => progress.report(phase),
        signal: cancellation(),
      },
    );
  } finally {
    progress.stop();
  }
}

/**
 * Follows the applied instance until the operator reports it Ready for the applied generation and answers
 * `request`, showing progress; its outputs then. Throws a {@link ResourceInitError} (the resource stays in state,
 * the next `pulumi up` carries on) when the operator reports a permanent failure, the timeout passes or the
 * engine cancels, with the conditions, hints and Warning events that say why.
 */
export async function waitUntilReady(
  client: KubeClient,
  inputs: InstanceInputs,
  applied: LiveInstance,
  request: string,
  id: string,
  cluster: ClusterIdentity,
  provider: Record<string, unknown>,
  time: OperationTime = operationTime(inputs),
): Promise<InstanceOutputs> {
  const generation = applied.metadata.generation ?? 0;
  const progress = waitProgress(instanceLabel(inputs), { timeoutMs: timeoutMs(inputs), startedMs: time.startedMs });
  // Without any event (no operator at all) nothing re-evaluates the phase: look again once the silence is long.
  let waiting: (Readiness & { state: "waiting" }) | undefined;
  let silent = false;
  const silence = realClock.setTimeout(() => {
    silent = true;
    if (waiting) progress.report(waitingPhase(waiting, silent));
  }, operatorSilenceMs);
  const cancelled = cancellation();
  const instance = instanceWatchClient(client, inputs.namespace, inputs.name);
  const initial: Snapshot<LiveInstance> = { object: applied, resourceVersion: applied.metadata.resourceVersion ?? "" };
  const result = await followObject(
    instance,
    initial,
    (object) => {
      if (!object) return { state: "deleted" as const };
      const readiness = assessReadiness(object, generation, request);
      if (readiness.state === "waiting") {
        waiting = readiness;
        progress.report(waitingPhase(readiness, silent));
        return undefined;
      }
      return { ...readiness, object };
    },
    { clock: realClock, deadline: time.deadlineMs, signal: cancelled },
  );
  progress.stop();
  realClock.clearTimeout(silence);

  const where = `${inputs.logicalName} (MyAppInstance ${id})`;
  const verdict = result.decided ? result.value : undefined;
  if (verdict?.state === "ready") return outputsFor(inputs, verdict.object, cluster);
  if (verdict?.state === "deleted") throw new Error(`${where} was deleted while waiting for it to become Ready`);

  const last = verdict ? verdict.object : result.decided ? undefined : result.last;
  const headline = verdict
    ? `${where} cannot become Ready: the operator reports ${verdict.reason}: ${verdict.message}`
    : cancelled.aborted
      ? `${where} was applied; stopped waiting for Ready because the deployment was cancelled`
      : `${where} did not become Ready within ${inputs.timeoutSeconds}s`;
  const observed = last?.status?.observedGeneration;
  const answered = last?.status?.lastHandledReconcileAt;
  const hints =
    observed === undefined || observed < generation
      ? [`the operator has not acted on generation ${generation} yet: is it running?`]
      : answered !== undefined && answered !== request
        ? [`the operator has not answered this update's reconcile request (${request}) yet: is it running?`]
        : [];
  const warnings = cancelled.aborted ? [] : await latestWarnings(client, inputs.namespace, inputs.name);
  const next = cancelled.aborted
    ? "The instance stays in the stack: run `pulumi up` again to continue waiting."
    : "The instance stays in the stack: fix the cause and run `pulumi up` again to continue.";
  // The CLI lists `reasons` (not the message) under the resource, so both carry everything.
  const reasons = [headline, ...describeConditions(last, generation), ...hints, ...warnings, next];
  const text = [headline, ...reasons.slice(1, -1).map((line) => `  ${line}`), next].join("\n");
  throw new ResourceInitError(text, id, { ...outputsFor(inputs, last ?? applied, cluster), ...provider }, reasons);
}

/**
 * Follows a deleted instance until it is gone (the finalizers have run) or replaced by an object with another
 * uid; throws naming what is still pending, and how to remove the finalizer by hand, when the timeout passes.
 */
export async function waitUntilGone(
  client: KubeClient,
  inputs: InstanceInputs,
  uid: string | undefined,
): Promise<void> {
  const instance = instanceWatchClient(client, inputs.namespace, inputs.name);
  const progress = waitProgress(instanceLabel(inputs), { timeoutMs: timeoutMs(inputs) });
  const cancelled = cancellation();
  const result = await followObject(
    instance,
    await instance.snapshot(),
    (object) => {
      if (object === undefined || (uid !== undefined && object.metadata.uid !== uid)) return true;
      progress.report(`deleting: ${pendingDeletion(object.metadata.finalizers ?? [])}`);
      return undefined;
    },
    { clock: realClock, deadline: deadline(inputs), signal: cancelled },
  );
  progress.stop();
  if (result.decided) return;

  const where = `MyAppInstance ${formatObjectKey(inputs)}`;
  const pending = result.last?.metadata.finalizers ?? [];
  if (cancelled.aborted) {
    const operator = pending.includes(finalizer) ? " with the operator running (it removes the finalizer)" : "";
    throw new Error(
      `${where} is being deleted; stopped waiting for its finalizer because the deployment was cancelled. It ` +
        `stays in the stack: run \`pulumi destroy\` (or \`pulumi up\`) again${operator} to finish.`,
    );
  }
  const cause = pending.includes(finalizer)
    ? `finalizer ${finalizer} has not been removed. The operator removes it once it has cleaned up the ` +
      `instance's workload and volumes; check that the operator is running and read its logs`
    : `finalizers [${pending.join(", ")}] are still pending`;
  const warnings = await latestWarnings(client, inputs.namespace, inputs.name);
  const lines = [
    `${where} is still there ${inputs.timeoutSeconds}s after its deletion: ${cause}.`,
    ...describeConditions(result.last).map((line) => `  ${line}`),
    ...warnings.map((line) => `  ${line}`),
    `If the operator is gone for good, remove the finalizer by hand (its cleanup will not run): kubectl -n ` +
      `${inputs.namespace} patch myappinstance ${inputs.name} --type=merge -p '{"metadata":{"finalizers":null}}'`,
  ];
  throw new Error(lines.join("\n"));
}

/**
 * What a deletion waits for, as its progress line says it: the operator's own finalizer is run by the operator,
 * which may not be running (a destroy after the operator's terminal was closed), so the line says so.
 */
export function pendingDeletion(finalizers: readonly string[]): string {
  if (finalizers.length === 0) return "waiting for the apiserver";
  const others = finalizers.filter((name) => name !== finalizer);
  if (others.length === finalizers.length) return `waiting for ${finalizers.join(", ")}`;
  return (
    `waiting for the operator to clean up and remove ${finalizer} (is it running?)` +
    (others.length > 0 ? `, and for ${others.join(", ")}` : "")
  );
}

/** When a wait gives up: timeoutSeconds from now (the default if state predates the input). */
function deadline(inputs: InstanceInputs): number {
  return realClock.monotonicMs() + timeoutMs(inputs);
}

function timeoutMs(inputs: InstanceInputs): number {
  return (inputs.timeoutSeconds ?? defaultTimeoutSeconds) * 1000;
}
