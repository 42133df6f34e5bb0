/**
 * The webhook's TLS side assembled: the certificate Secret (load or create; or only read, when another issuer keeps
 * it: external-certificates.ts), the caBundle injection, the HTTPS server, and the background checks that rotate
 * and reload. operator/main.ts starts it on every replica when
 * `--webhook-bind-address` is set, with the admission handlers as routes.
 */
import type { Logger } from "pino";
import type { KubeClient } from "../../kube/index.ts";
import { realClock, type Clock } from "../../kube/clock.ts";
import { CaInjector, kubeWebhookConfigurationClient, webhookConfigurationKinds } from "./ca-injection.ts";
import { CertificateStore, kubeCertificateSecretClient } from "./certificate-store.ts";
import { watchWebhookConfigurations } from "./configuration-watch.ts";
import type { CertificatePair } from "./certificates.ts";
import { ExternalCertificates } from "./external-certificates.ts";
import type { WebhookOptions } from "./policy.ts";
import {
  startWebhookServer,
  type LargeBodyParser,
  type WebhookHandler,
  type WebhookServer,
  type WebhookServerMetrics,
} from "./webhook-server.ts";

export interface AdmissionTlsOptions {
  readonly client: Pick<KubeClient, "find" | "create" | "mergePatch" | "jsonPatch" | "watch">;
  readonly logger: Logger;
  /** The `--webhook-*` flags (`--webhook-bind-address`, `--webhook-cert-secret`, ...), parsed. */
  readonly webhook: WebhookOptions;
  /** Path → handler, e.g. `{ "/validate": ..., "/mutate": ... }`. */
  readonly routes: Readonly<Record<string, WebhookHandler>>;
  /** Stops the first load (which retries until the Secret can be read or created) and rejects. */
  readonly signal?: AbortSignal;
  /** The CA's validity. @default 10 × webhook.certValidityMs */
  readonly caValidityMs?: number;
  /** See CertificateStoreOptions.propagationMs. @default 10_000 */
  readonly propagationMs?: number;
  /** See CertificateStoreOptions.checkIntervalMs. */
  readonly checkIntervalMs?: number;
  readonly clock?: Clock;
  /** The fieldManager of the Secret's creation. @default "myapp-operator" */
  readonly fieldManager?: string;
  /** Per-request metrics of the server. */
  readonly metrics?: WebhookServerMetrics;
  /** Parses large bodies off the event loop (review-parse-thread.ts). */
  readonly parseLarge?: LargeBodyParser;
}

export interface AdmissionTls {
  /** The bound port. */
  readonly port: number;
  /** Stops the checks, then the server (requests in flight may finish, see WebhookServer.close). */
  close(): Promise<void>;
}

/**
 * Loads or creates the certificates, injects the caBundle, starts serving, and keeps rotating and reloading in the
 * background. Resolves once the server listens; until a certificate could be loaded, it retries (a Secret that
 * RBAC does not grant is logged at warn each time) unless `signal` aborts.
 */
export async function startAdmissionTls(options: AdmissionTlsOptions): Promise<AdmissionTls> {
  const { webhook } = options;
  const logger = options.logger.child({ component: "admission-tls" });
  const injectedKinds =
    webhook.defaults === "webhook" ? webhookConfigurationKinds : (["ValidatingWebhookConfiguration"] as const);
  const injector = new CaInjector(
    kubeWebhookConfigurationClient(options.client, webhook.configuration),
    webhook.configuration,
    logger,
    injectedKinds,
  );
  // Set once listening: the store's first certificate arrives before there is a server to reload.
  const serving: { server?: WebhookServer } = {};
  const secret = kubeCertificateSecretClient(
    options.client,
    webhook.certSecret.namespace,
    webhook.certSecret.name,
    options.fieldManager,
  );
  const onServing = (pair: CertificatePair) => serving.server?.reload(pair);
  const secretLogger = logger.child({ secret: `${webhook.certSecret.namespace}/${webhook.certSecret.name}` });
  const store =
    webhook.certIssuer === "external"
      ? new ExternalCertificates({
          secret,
          secretName: `${webhook.certSecret.namespace}/${webhook.certSecret.name}`,
          injector,
          onServing,
          logger: secretLogger,
          ...(options.propagationMs !== undefined ? { propagationMs: options.propagationMs } : {}),
          ...(options.checkIntervalMs !== undefined ? { checkIntervalMs: options.checkIntervalMs } : {}),
          ...(options.clock ? { clock: options.clock } : {}),
        })
      : new CertificateStore({
          secret,
          injector,
          hosts: webhook.hosts,
          certValidityMs: webhook.certValidityMs,
          onServing,
          logger: secretLogger,
          ...(options.caValidityMs !== undefined ? { caValidityMs: options.caValidityMs } : {}),
          ...(options.propagationMs !== undefined ? { propagationMs: options.propagationMs } : {}),
          ...(options.checkIntervalMs !== undefined ? { checkIntervalMs: options.checkIntervalMs } : {}),
          ...(options.clock ? { clock: options.clock } : {}),
        });
  const abort = () => void store.stop();
  options.signal?.addEventListener("abort", abort, { once: true });
  const pair = await store.load().finally(() => options.signal?.removeEventListener("abort", abort));
  if (!pair) throw new Error("stopped before the webhook certificate could be loaded");
  const server = await startWebhookServer({
    host: webhook.address.host,
    port: webhook.address.port,
    flag: "--webhook-bind-address",
    tls: pair,
    routes: options.routes,
    logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.parseLarge ? { parseLarge: options.parseLarge } : {}),
  });
  serving.server = server;
  // Checks start only now, so every certificate change after the first reaches a listening server; a changed
  // configuration is checked at once (a new webhook has no caBundle yet).
  store.start();
  const watching = new AbortController();
  const watched = watchWebhookConfigurations({
    client: options.client,
    name: webhook.configuration,
    kinds: injectedKinds,
    onChange: () => store.checkSoon(),
    logger,
    clock: options.clock ?? realClock,
    signal: watching.signal,
  });
  return {
    port: server.port,
    async close() {
      watching.abort();
      await watched;
      await store.stop();
      await server.close();
    },
  };
}
