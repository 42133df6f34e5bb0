/**
 * The admission webhooks' wiring for the operator process (`--webhook-bind-address`): the handlers judge with the
 * platform policy (`--allowed-registries`, `--max-*`, `--namespace-max-*`, `--chart-sources`) and read instances
 * from the manager's informer cache, which every replica keeps warm, so every replica serves, leader or not. Its
 * /readyz line stays false until the server listens with a certificate, so an in-cluster Service sends the
 * apiserver only to replicas that can answer.
 */
import type { Logger } from "pino";
import type { KubeClient } from "../kube/index.ts";
import { admissionHandlers } from "./admission/review.ts";
import { kubeLookups } from "./admission/lookups.ts";
import { offLoopBytes, ReviewParseThread } from "./admission/review-parse-thread.ts";
import { startAdmissionTls, type AdmissionTls } from "./admission/serving.ts";
import type { WebhookServerMetrics } from "./admission/webhook-server.ts";
import type { OperatorOptions, WebhookOptions } from "./options.ts";
import type { CacheReader, ReadinessCheck } from "./runtime/index.ts";

/** The webhooks' paths; components/operator-endpoints.ts points the webhook configurations at the same. */
export const admissionPaths = { validate: "/validate", mutate: "/mutate" } as const;

export class AdmissionWebhooks {
  private tls: AdmissionTls | undefined;
  private parser: ReviewParseThread | undefined;
  private readonly stopped = new AbortController();

  private readonly options: Pick<OperatorOptions, "policy"> & { readonly webhook: WebhookOptions };
  private readonly logger: Logger;

  constructor(options: Pick<OperatorOptions, "policy"> & { readonly webhook: WebhookOptions }, logger: Logger) {
    this.options = options;
    this.logger = logger;
  }

  /** Its /readyz line. */
  readonly readiness: ReadinessCheck = {
    name: "admission-webhooks",
    check: () =>
      this.tls ? { ok: true, detail: `serving on port ${this.tls.port}` } : { ok: false, detail: "no certificate yet" },
  };

  /** Loads (or creates) the certificate and listens; resolves with the port once serving. */
  async start(client: KubeClient, cache: CacheReader, metrics?: WebhookServerMetrics): Promise<number> {
    const logger = this.logger.child({ component: "admission" });
    const handlers = admissionHandlers(this.options.policy, kubeLookups(client, cache), logger);
    // Large reviews are parsed on their own thread, which gives back only what the handlers read.
    const parser = (this.parser = new ReviewParseThread(this.options.policy.maxValuesKiB));
    this.tls = await startAdmissionTls({
      client,
      logger,
      webhook: this.options.webhook,
      routes: {
        [admissionPaths.validate]: handlers.validate,
        // A MutatingAdmissionPolicy gives the defaults instead: nothing should call here, and nothing is answered.
        ...(this.options.webhook.defaults === "webhook" ? { [admissionPaths.mutate]: handlers.mutate } : {}),
      },
      signal: this.stopped.signal,
      parseLarge: { fromBytes: offLoopBytes, parse: (body) => parser.parse(body) },
      ...(metrics ? { metrics } : {}),
    });
    return this.tls.port;
  }

  /**
   * Stops the certificate checks and the server: /readyz turns false at once (a Service stops sending the apiserver
   * here), then requests on open connections are still answered for a moment, each closing its connection.
   */
  async close(): Promise<void> {
    this.stopped.abort();
    const tls = this.tls;
    this.tls = undefined;
    await tls?.close();
    await this.parser?.close();
  }
}
