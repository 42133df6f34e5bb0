/**
 * Wakes the certificate check as soon as a webhook configuration changes. `pulumi up` that adds or renames a webhook
 * writes it without a caBundle (the component leaves the CA to the operator), and the apiserver fails every call
 * to it, closed, until the bundle is in: with the check's interval alone (a minute), instance writes were refused
 * for up to that long after each platform upgrade. One watch per configuration, by name (RBAC grants `watch` on
 * those names only), opened again after a backoff when it ends or fails; the check itself reads and writes only
 * what differs, so the event of its own patch costs a read.
 */
import type { Logger } from "pino";
import { sleep, type Clock } from "../../kube/clock.ts";
import { ApiError, type KubeClient } from "../../kube/index.ts";
import type { WebhookConfigurationKind } from "./ca-injection.ts";

export interface ConfigurationWatchOptions {
  readonly client: Pick<KubeClient, "watch">;
  /** The configurations' one name. */
  readonly name: string;
  readonly kinds: readonly WebhookConfigurationKind[];
  /** Called on every event of either configuration, the first (ADDED) included. */
  readonly onChange: () => void;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  /** The longest wait before a failed watch is opened again. @default 30_000 */
  readonly maxBackoffMs?: number;
}

/** Watches until `signal` aborts; resolves then. */
export async function watchWebhookConfigurations(options: ConfigurationWatchOptions): Promise<void> {
  await Promise.all(options.kinds.map((kind) => watchOne(options, kind)));
}

async function watchOne(options: ConfigurationWatchOptions, kind: WebhookConfigurationKind): Promise<void> {
  const { client, clock, signal } = options;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  let backoffMs = 1_000;
  while (!signal.aborted) {
    const opened = clock.monotonicMs();
    try {
      const events = client.watch("admissionregistration.k8s.io/v1", kind, {
        fieldSelector: `metadata.name=${options.name}`,
        timeoutSeconds: 600,
        signal,
      });
      for await (const event of events) {
        if (event.type === "ADDED" || event.type === "MODIFIED") options.onChange();
      }
    } catch (error) {
      if (signal.aborted) return;
      // Refused (RBAC without `watch`, say, after an upgrade of the operator alone) is worth a warning: a new
      // webhook then waits for the check's interval. A dropped connection is routine.
      const refused = error instanceof ApiError && [401, 403, 404].includes(error.status);
      options.logger[refused ? "warn" : "debug"](
        { err: error, kind, retryInMs: backoffMs },
        "webhook configuration watch failed; a changed configuration gets its CA at the next check instead",
      );
    }
    // A watch that lasted is the server's timeout: open the next at once. One that ended fast waits, longer each time.
    if (clock.monotonicMs() - opened > maxBackoffMs) {
      backoffMs = 1_000;
      continue;
    }
    await sleep(clock, backoffMs, signal);
    backoffMs = Math.min(maxBackoffMs, backoffMs * 2);
  }
}
