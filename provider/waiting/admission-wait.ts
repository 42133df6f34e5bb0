/**
 * An apply that the operator's admission webhook cannot judge yet. The webhooks fail closed (components/webhooks.ts):
 * while no operator replica answers, the apiserver refuses the write with a 500 "failed calling webhook". That is
 * the normal state of a stack that installs the platform and its instances in one `pulumi up` (the webhooks exist
 * a moment before a replica has its certificate injected) and of an operator rollout, so `pulumi up` waits for an
 * answer, for up to the instance's timeout, saying what it waits for; a denial, or anything else, fails at once.
 * The same stack meets a second such moment on a fresh cluster: the apiserver's defaults policy refuses writes of a
 * kind whose CRD is seconds old (a 503); that is waited for alike.
 */
import { ServerError } from "../../kube/index.ts";
import type { Clock } from "../../kube/clock.ts";

/**
 * The webhook a "failed calling webhook" error names, with where the apiserver called it (two installations'
 * webhooks may share a name), or undefined for any other failure.
 */
export function unansweredWebhook(error: unknown): string | undefined {
  if (!(error instanceof ServerError)) return undefined;
  const name = /failed calling webhook "([^"]+)"/.exec(error.message)?.[1];
  if (name === undefined) return undefined;
  const target = /(?:Post|POST) "?(https:\/\/[^/"?\s]+)/.exec(error.message)?.[1];
  return target ? `${name} at ${target}` : name;
}

/**
 * Why a webhook {@link unansweredWebhook} names did not answer, in words: its serving certificate not yet trusted
 * (a webhook `pulumi up` just added, whose caBundle the operator injects on seeing it), or no replica serving.
 */
export function webhookWaitReason(error: unknown): string {
  return /x509: certificate signed by unknown authority/.test(String((error as Error)?.message))
    ? "the apiserver does not trust its certificate yet (the operator puts its CA into a changed configuration)"
    : "is an operator replica serving it?";
}

/**
 * The kind a MutatingAdmissionPolicy cannot patch yet, from the apiserver's 503 "Resource kind ... not found. There
 * can be a delay between when CustomResourceDefinitions are created and when they are available" (k8s.io/apiserver
 * `policy/mutating`): the CRD was made moments ago and the policy's type converter has not caught up. A fresh
 * install meets it for a few seconds in every namespace where the platform's defaults policy applies; undefined for
 * any other failure.
 */
export function kindNotYetKnown(error: unknown): string | undefined {
  if (!(error instanceof ServerError)) return undefined;
  return /Resource kind (.+?) not found\. There can be a delay between when CustomResourceDefinitions are created/.exec(
    error.message,
  )?.[1];
}

export interface AdmissionWait {
  readonly clock: Clock;
  /** Monotonic milliseconds (the clock's) after which the last failure is thrown. */
  readonly deadline: number;
  /** Told once per failed attempt what the wait is for. */
  readonly report: (phase: string) => void;
  /** @default 1_000, doubling to 8_000 */
  readonly firstRetryMs?: number;
  /** Ends the wait at once (the engine's Cancel: Ctrl-C), with the last failure. */
  readonly signal?: AbortSignal;
}

/** The hint an unanswered webhook's final error carries. */
export const webhookHint =
  "no operator replica answers the platform's admission webhook: is the operator running (in the cluster: the " +
  "MyAppOperator's Deployment and its pods; outside it: `npx --no-install myapp-operator` with the webhook flags)?";

/** The hint a kind the admission policies never came to know carries. */
export const kindHint =
  "the apiserver's MutatingAdmissionPolicy still does not know MyAppInstance: is the platform's CRD installed and " +
  "Established (kubectl get crd myappinstances.example.com)?";

/**
 * `apply()`, retried while the operator's webhook does not answer, or the apiserver's admission policies do not know
 * the kind yet, until `wait.deadline`.
 */
export async function applyWhenAdmitted<T>(apply: () => Promise<T>, wait: AdmissionWait): Promise<T> {
  let delay = wait.firstRetryMs ?? 1_000;
  for (;;) {
    try {
      return await apply();
    } catch (error) {
      const webhook = unansweredWebhook(error);
      const kind = webhook === undefined ? kindNotYetKnown(error) : undefined;
      if (webhook === undefined && kind === undefined) throw error;
      const hint = webhook !== undefined ? webhookHint : kindHint;
      const cancelled = () =>
        new Error(`cancelled while the apply waited: ${(error as Error).message}\n${hint}`, { cause: error });
      if (wait.signal?.aborted) throw cancelled();
      if (wait.clock.monotonicMs() + delay > wait.deadline) {
        throw new Error(`${(error as Error).message}\n${hint}`, { cause: error });
      }
      wait.report(
        webhook !== undefined
          ? `waiting for the admission webhook ${webhook} to answer: ${webhookWaitReason(error)}`
          : `waiting for the apiserver's admission policies to know ${kind ?? "the kind"} (its CRD is new)`,
      );
      await pause(wait, delay);
      if (wait.signal?.aborted) throw cancelled();
      delay = Math.min(delay * 2, 8_000);
    }
  }
}

/** `ms` on the wait's clock, or less when its signal aborts first. */
function pause(wait: AdmissionWait, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (wait.signal?.aborted) return resolve();
    const timer = wait.clock.setTimeout(done, ms);
    wait.signal?.addEventListener("abort", done, { once: true });
    function done() {
      wait.clock.clearTimeout(timer);
      wait.signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
