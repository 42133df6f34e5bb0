/**
 * What both sources of the webhook's certificate share (certificate-store.ts keeps its own, external-certificates.ts
 * reads another issuer's): a first load that retries until a certificate can be served, then a check every interval
 * in the background; and the rule that a bundle is trusted only once it has been in every webhook configuration for
 * `propagationMs` (the apiserver reads the configurations through its own informer).
 */
import type { Logger } from "pino";
import { sleep, type Clock } from "../../kube/clock.ts";
import type { InjectionResult } from "./ca-injection.ts";
import type { CertificatePair } from "./certificates.ts";

/** The least time between two checks, however often they are asked for (checkSoon). */
const minCheckSpacingMs = 1_000;

/** A certificate source: `check` reads (and perhaps rotates) and sets `served` through `serve`. */
export abstract class PolledCertificates {
  protected readonly clock: Clock;
  protected readonly logger: Logger;
  private readonly checkIntervalMs: number;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private served: CertificatePair | undefined;
  /** Ends the current wait between checks early (checkSoon). */
  private wake = new AbortController();

  protected constructor(clock: Clock, logger: Logger, checkIntervalMs: number) {
    this.clock = clock;
    this.logger = logger;
    this.checkIntervalMs = checkIntervalMs;
  }

  /** One check; throws when nothing can be served (a certificate already served stays). */
  abstract check(): Promise<void>;

  /** The serving certificate last handed on. */
  current(): CertificatePair | undefined {
    return this.served;
  }

  /**
   * Checks until a serving certificate is available (retrying failures with a backoff up to 30 s) and returns it;
   * undefined only when stopped first.
   */
  async load(): Promise<CertificatePair | undefined> {
    let delay = 1_000;
    while (!this.served && !this.stopping.signal.aborted) {
      try {
        await this.check();
      } catch (error) {
        this.logger.warn({ err: error, retryInMs: delay }, "could not load the webhook certificate");
        await sleep(this.clock, delay, this.stopping.signal);
        delay = Math.min(30_000, delay * 2);
      }
    }
    return this.served;
  }

  /** Starts checking every checkIntervalMs in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /**
   * Checks now rather than at the end of the interval (a webhook configuration changed: configuration-watch.ts);
   * during a check, once it is done. Checks never overlap.
   */
  checkSoon(): void {
    this.wake.abort();
  }

  /** Records `pair` as served; false when it is the one served already. */
  protected serve(pair: CertificatePair): boolean {
    if (this.served?.cert === pair.cert && this.served.key === pair.key) return false;
    this.served = pair;
    return true;
  }

  private async run(): Promise<void> {
    const stopped = this.stopping.signal;
    let lastCheck = Number.NEGATIVE_INFINITY;
    while (!stopped.aborted) {
      await sleep(this.clock, this.checkIntervalMs, AbortSignal.any([stopped, this.wake.signal]));
      if (stopped.aborted) return;
      // Woken early: at most one check a second, should another writer fight over the configurations.
      const sinceLast = this.clock.monotonicMs() - lastCheck;
      if (sinceLast < minCheckSpacingMs) await sleep(this.clock, minCheckSpacingMs - sinceLast, stopped);
      if (stopped.aborted) return;
      this.wake = new AbortController();
      lastCheck = this.clock.monotonicMs();
      try {
        await this.check();
      } catch (error) {
        this.logger.warn({ err: error }, "webhook certificate check failed; retrying on the next one");
      }
    }
  }
}

/** Injects bundles and says when one has been trusted everywhere for long enough. */
export class BundleTrust {
  private readonly injector: { inject(bundlePem: string): Promise<InjectionResult> };
  private readonly propagationMs: number;
  private readonly clock: Clock;
  /** The bundle last seen trusted everywhere, and since when (monotonic). */
  private trust: { bundle: string; since: number } | undefined;

  constructor(injector: { inject(bundlePem: string): Promise<InjectionResult> }, propagationMs: number, clock: Clock) {
    this.injector = injector;
    this.propagationMs = propagationMs;
    this.clock = clock;
  }

  /** Injects `bundle`; true once it has been in every configuration for propagationMs. */
  async inject(bundle: string): Promise<boolean> {
    const result = await this.injector.inject(bundle);
    const now = this.clock.monotonicMs();
    if (!result.trusted) {
      this.trust = undefined;
      return false;
    }
    if (result.wrote || this.trust?.bundle !== bundle) this.trust = { bundle, since: now };
    return now - this.trust.since >= this.propagationMs;
  }
}
