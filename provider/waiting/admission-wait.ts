/**
 * An apply that the operator's admission webhook cannot judge yet. The webhooks fail closed (components/webhooks.ts):
 * while no operator replica answers, the apiserver refuses the write with a 500 "failed calling webhook". That is
 * the normal state of a stack that installs the platform and its instances in one `pulumi up` (the webhooks exist
 * a moment before a replica has its certificate injected) and of an operator rollout, so `pulumi up` waits for an
 * answer, for up to the instance's timeout, saying what it waits for; a denial, or anything else, fails at once.
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

export interface AdmissionWait {
  readonly clock: Clock;
  /** Monotonic milliseconds (the clock's) after which the last failure is thrown. */
  readonly deadline: number;
  /** Told once per failed attempt what the wait is for. */
  readonly report: (phase: string) => void;
  /** @default 1_000, doubling to 8_000 */
  readonly firstRetryMs?: number;
}

/** The hint an unanswered webhook's final error carries. */
export const webhookHint =
  "no operator replica answers the platform's admission webhook: is the operator running (in the cluster: the " +
  "MyAppOperator's Deployment and its pods; outside it: `npx myapp-operator` with the webhook flags)?";

/** `apply()`, retried while the operator's webhook does not answer, until `wait.deadline`. */
export async function applyWhenAdmitted<T>(apply: () => Promise<T>, wait: AdmissionWait): Promise<T> {
  let delay = wait.firstRetryMs ?? 1_000;
  for (;;) {
    try {
      return await apply();
    } catch (error) {
      const webhook = unansweredWebhook(error);
      if (webhook === undefined) throw error;
      if (wait.clock.monotonicMs() + delay > wait.deadline) {
        throw new Error(`${(error as Error).message}\n${webhookHint}`, { cause: error });
      }
      wait.report(`waiting for the admission webhook ${webhook} to answer: is an operator replica serving it?`);
      await new Promise<void>((resolve) => wait.clock.setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 8_000);
    }
  }
}
