/**
 * Puts the webhook CA bundle into `webhooks[*].clientConfig.caBundle` of the ValidatingWebhookConfiguration and the
 * MutatingWebhookConfiguration (one name for both), which is how the apiserver learns to trust the operator's
 * self-signed serving certificate. Read first, write only the webhooks whose bundle differs: an idle operator makes
 * no writes. Every replica injects (any of them may be the one that rotated the CA and then died), so two replicas
 * with different views of the Secret must not undo each other: a bundle whose newest CA is older than one the
 * configuration already trusts is never written (see {@link isOlderBundle}).
 */
import type { Logger } from "pino";
import { NotFoundError, type KubeClient, type KubeObject } from "../../kube/index.ts";
import { fingerprintOf, splitPemBundle, validityOf } from "./certificates.ts";

export const webhookConfigurationKinds = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] as const;
export type WebhookConfigurationKind = (typeof webhookConfigurationKinds)[number];

/** The parts of a webhook configuration injection reads. */
export interface WebhookConfiguration {
  readonly webhooks?: readonly {
    readonly name: string;
    readonly clientConfig?: { readonly caBundle?: string };
  }[];
}

/** One RFC 6902 operation. */
export interface JsonPatchOperation {
  readonly op: "test" | "add";
  readonly path: string;
  readonly value: unknown;
}

/** Where the configurations live: a narrow client, so injection is unit-tested against an in-memory pair. */
export interface WebhookConfigurationClient {
  /** The configuration of this kind, or undefined when it does not exist. */
  get(kind: WebhookConfigurationKind): Promise<WebhookConfiguration | undefined>;
  /** Applies a JSON patch to the configuration of this kind. */
  patch(kind: WebhookConfigurationKind, operations: readonly JsonPatchOperation[]): Promise<void>;
}

/**
 * The JSON patch that sets `caBundle` (base64 of the PEM bundle) on every webhook that lacks it; empty when all
 * have it. Each change is guarded by a `test` of the webhook's name at that index, so a concurrent edit that
 * reorders the list makes the patch fail (and the next check retry) instead of touching the wrong webhook.
 */
export function caBundlePatch(configuration: WebhookConfiguration, caBundle: string): JsonPatchOperation[] {
  return (configuration.webhooks ?? []).flatMap((webhook, index) =>
    webhook.clientConfig?.caBundle === caBundle
      ? []
      : [
          { op: "test" as const, path: `/webhooks/${index}/name`, value: webhook.name },
          { op: "add" as const, path: `/webhooks/${index}/clientConfig/caBundle`, value: caBundle },
        ],
  );
}

/**
 * True when `ours` (PEM) is older than what `theirs` (a caBundle, base64) already trusts: theirs holds a CA that
 * ours lacks and that was issued after every CA in ours. That is a replica that read the Secret before another one
 * rotated the CA; writing its bundle would take the new CA away from the apiserver just as serving certificates
 * from it appear. An unreadable bundle is never "newer": it is overwritten.
 */
export function isOlderBundle(ours: string, theirs: string | undefined): boolean {
  if (!theirs) return false;
  let theirCerts: string[];
  try {
    theirCerts = splitPemBundle(Buffer.from(theirs, "base64").toString("utf8"));
    const ourCerts = splitPemBundle(ours);
    const known = new Set(ourCerts.map(fingerprintOf));
    const newestOurs = Math.max(...ourCerts.map((cert) => validityOf(cert).notBefore));
    return theirCerts.some((cert) => !known.has(fingerprintOf(cert)) && validityOf(cert).notBefore > newestOurs);
  } catch {
    return false;
  }
}

/** What one injection found and did. */
export interface InjectionResult {
  /**
   * Every configuration that exists now holds the bundle in every webhook (true when none exists: nobody calls
   * the webhook then). A certificate from a new CA may be served only once this is true.
   */
  readonly trusted: boolean;
  /** A patch was sent: the apiserver may take a moment to use it. */
  readonly wrote: boolean;
}

/** Injects a bundle into both configurations; never throws (failures are logged and reported as not trusted). */
export class CaInjector {
  private readonly configurations: WebhookConfigurationClient;
  private readonly name: string;
  private readonly logger: Logger;
  /** Kinds reported missing, so each absence is logged once (and again after it was found in between). */
  private readonly missing = new Set<WebhookConfigurationKind>();
  /** The configurations that exist by design (no MutatingWebhookConfiguration when a policy gives the defaults). */
  private readonly kinds: readonly WebhookConfigurationKind[];

  constructor(
    configurations: WebhookConfigurationClient,
    name: string,
    logger: Logger,
    kinds: readonly WebhookConfigurationKind[] = webhookConfigurationKinds,
  ) {
    this.configurations = configurations;
    this.name = name;
    this.logger = logger.child({ webhookConfiguration: name });
    this.kinds = kinds;
  }

  /** Makes the configurations trust `bundlePem` (the CA certificates, PEM). */
  async inject(bundlePem: string): Promise<InjectionResult> {
    const caBundle = Buffer.from(bundlePem, "utf8").toString("base64");
    let trusted = true;
    let wrote = false;
    for (const kind of this.kinds) {
      try {
        const configuration = await this.configurations.get(kind);
        if (!configuration) {
          this.reportMissing(kind);
          continue;
        }
        this.missing.delete(kind);
        const stale = (configuration.webhooks ?? []).find((w) => isOlderBundle(bundlePem, w.clientConfig?.caBundle));
        if (stale) {
          this.logger.info({ kind, webhook: stale.name }, "not injecting: the webhook trusts a newer CA already");
          trusted = false;
          continue;
        }
        const operations = caBundlePatch(configuration, caBundle);
        if (operations.length === 0) continue;
        await this.configurations.patch(kind, operations);
        wrote = true;
        this.logger.info({ kind, webhooks: operations.length / 2 }, "injected the webhook CA bundle");
      } catch (error) {
        // Deleted between the read and the patch: as missing, found again on the next check.
        if (error instanceof NotFoundError) {
          this.reportMissing(kind);
          continue;
        }
        trusted = false;
        this.logger.warn({ err: error, kind }, "could not inject the webhook CA bundle; retrying on the next check");
      }
    }
    return { trusted, wrote };
  }

  private reportMissing(kind: WebhookConfigurationKind): void {
    if (this.missing.has(kind)) return;
    this.missing.add(kind);
    this.logger.warn(
      { kind },
      `${kind} ${this.name} does not exist (yet): its caBundle is injected once it does (--webhook-configuration)`,
    );
  }
}

const admissionApiVersion = "admissionregistration.k8s.io/v1";

/** A WebhookConfigurationClient over the real configurations named `name`. */
export function kubeWebhookConfigurationClient(
  client: Pick<KubeClient, "find" | "jsonPatch">,
  name: string,
): WebhookConfigurationClient {
  return {
    async get(kind) {
      return client.find<KubeObject & WebhookConfiguration>(admissionApiVersion, kind, name);
    },
    async patch(kind, operations) {
      await client.jsonPatch(admissionApiVersion, kind, name, undefined, operations);
    },
  };
}
