/**
 * `.Capabilities` of the live cluster, kept for a while: what the server's version and discovery said, as
 * `helm install` would ask them, without asking on every render. A cluster's API set changes rarely (a CRD
 * installed, an upgrade), so a read is reused for `maxAgeMs`; then the next render reads again. A failed refresh
 * keeps the last good answer (a blip of the apiserver must not fail renders that rendered a minute ago) and is
 * retried on the next call; with no answer yet, the failure is the caller's.
 */
import type { Capabilities } from "./helm.ts";

export interface CapabilitiesCacheOptions {
  /** How long one read of the cluster is used. @default 300000 (5 minutes) */
  readonly maxAgeMs?: number;
  /**
   * Where the age of a read is measured: the caller's kube/clock.ts Clock (realClock, or a fake in tests).
   * Structural, as chart/ may not import kube/, and a runtime interface has no place among api/'s schemas.
   */
  readonly clock: { monotonicMs(): number };
}

/** How long a read of the cluster's capabilities is reused by default. */
export const defaultCapabilitiesMaxAgeMs = 300_000;

/** `load` (the live read), called at most once per `maxAgeMs` and never twice at once. */
export function cachedCapabilities(
  load: () => Promise<Capabilities>,
  options: CapabilitiesCacheOptions,
): () => Promise<Capabilities> {
  const maxAgeMs = options.maxAgeMs ?? defaultCapabilitiesMaxAgeMs;
  const { clock } = options;
  let last: { readonly value: Capabilities; readonly at: number } | undefined;
  let loading: Promise<Capabilities> | undefined;
  return () => {
    if (last && clock.monotonicMs() - last.at < maxAgeMs) return Promise.resolve(last.value);
    loading ??= load()
      .then((value) => {
        last = { value, at: clock.monotonicMs() };
        return value;
      })
      .catch((error: unknown) => {
        if (last) return last.value;
        throw error;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
}
