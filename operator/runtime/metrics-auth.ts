/**
 * Authentication and authorization of /metrics, as controller-runtime's secure metrics
 * (`filters.WithAuthenticationAndAuthorization`) and kube-rbac-proxy do it: the scraper presents a bearer token;
 * a TokenReview says whose it is, a SubjectAccessReview whether that user may `get` the non-resource URL
 * `/metrics`. Grant it with a ClusterRole rule `nonResourceURLs: ["/metrics"], verbs: ["get"]`. Verdicts are
 * cached (keyed by a hash of the token): an allowed one for 2 minutes, so a scraper every 15 s costs the apiserver
 * two small requests every 2 minutes; a refusal for 10 s. Reviews of tokens not in the cache are bounded in rate
 * (per client address and in all) and in flight, so random tokens sent from the pod network cannot spend the
 * operator's share of the apiserver (a flood measured 1,150 TokenReviews a second with the in-flight bound alone);
 * a token allowed within the last 10 minutes is reviewed again outside those shared bounds, so such a flood cannot
 * lock a scraper out either.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { realClock, type Clock } from "../../kube/clock.ts";
import { BucketRateLimiter } from "./rate-limiter.ts";
import type { KubeClient, KubeObject } from "../../kube/index.ts";

/** Who a token belongs to, as a TokenReview reports it. */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The two reviews, as a narrow client (faked in unit tests, the apiserver otherwise). */
export interface AccessReviewClient {
  /** The token's user, or undefined when the token is not valid (expired, revoked, unknown). */
  authenticate(token: string): Promise<UserInfo | undefined>;
  /** Whether `user` may `verb` the non-resource `path`, and the authorizer's reason. */
  authorize(
    user: UserInfo,
    verb: string,
    path: string,
  ): Promise<{ readonly allowed: boolean; readonly reason: string }>;
}

interface TokenReview extends KubeObject {
  status?: { authenticated?: boolean; user?: UserInfo; error?: string };
}

interface SubjectAccessReview extends KubeObject {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/** The reviews against the apiserver; the client needs `create` on tokenreviews and subjectaccessreviews. */
export function kubeAccessReviews(client: Pick<KubeClient, "create">): AccessReviewClient {
  return {
    async authenticate(token) {
      const review = await client.create<TokenReview>({
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        metadata: {},
        spec: { token },
      });
      return review.status?.authenticated === true && review.status.user ? review.status.user : undefined;
    },
    async authorize(user, verb, path) {
      const review = await client.create<SubjectAccessReview>({
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        metadata: {},
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: user.groups ?? [],
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path, verb },
        },
      });
      return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? "" };
    },
  };
}

/** What to answer a request: go on, or this status with this message. */
export type AccessVerdict =
  { readonly allowed: true } | { readonly allowed: false; readonly status: 401 | 403 | 429; readonly message: string };

export interface BearerAuthorizerOptions {
  /** How long a refusal is reused. @default 10_000 */
  readonly cacheTtlMs?: number;
  /** How long an allowed verdict is reused. @default 120_000 */
  readonly allowedTtlMs?: number;
  /**
   * Verdicts kept at most (a handful of scrapers is the normal case); when full, expired ones go first, then the
   * oldest. @default 1_000
   */
  readonly cacheSize?: number;
  /**
   * Reviews in flight at most; a request with a token not in the cache beyond them is answered 429. The port is
   * open to the pod network, and each unknown token costs a TokenReview under the operator's identity, whose
   * share of the apiserver (API Priority and Fairness) its reconciles need. @default 4
   */
  readonly maxReviewsInFlight?: number;
  /** Reviews a second, after a burst, in all and from one client address. @default { qps: 5, burst: 20 } and { qps: 1, burst: 5 } */
  readonly reviewRate?: { readonly qps: number; readonly burst: number };
  readonly reviewRatePerAddress?: { readonly qps: number; readonly burst: number };
  /** @default realClock */
  readonly clock?: Clock;
}

/**
 * Checks a request's `Authorization: Bearer <token>` for `get` on its path: 401 without a valid token, 403 when
 * the user may not, allowed otherwise. A review that fails (the apiserver unreachable) denies with 401 and is not
 * cached, like the apiserver's own delegated authentication.
 */
export function bearerTokenAuthorizer(
  reviews: AccessReviewClient,
  options: BearerAuthorizerOptions = {},
): (request: IncomingMessage, path: string) => Promise<AccessVerdict> {
  const clock = options.clock ?? realClock;
  const ttl = options.cacheTtlMs ?? 10_000;
  const allowedTtl = options.allowedTtlMs ?? 120_000;
  // Tokens allowed lately (key → until when): reviewed again outside the shared bounds, which a flood may hold.
  const knownGood = new Map<string, number>();
  const knownGoodMs = 600_000;
  const size = options.cacheSize ?? 1_000;
  const cache = new Map<string, { readonly verdict: AccessVerdict; readonly until: number }>();
  const maxInFlight = options.maxReviewsInFlight ?? 4;
  let inFlight = 0;
  const overall = new BucketRateLimiter(clock, options.reviewRate ?? { qps: 5, burst: 20 });
  const perAddress = options.reviewRatePerAddress ?? { qps: 1, burst: 5 };
  const addresses = new Map<string, BucketRateLimiter>();
  const addressBucket = (address: string) => {
    let bucket = addresses.get(address);
    if (!bucket) {
      // Buckets that have refilled hold nothing worth keeping: memory follows the addresses reviewed lately.
      if (addresses.size >= size) for (const [key, full] of addresses) if (full.isFull()) addresses.delete(key);
      addresses.set(address, (bucket = new BucketRateLimiter(clock, perAddress)));
    }
    return bucket;
  };
  const keep = (key: string, verdict: AccessVerdict, now: number) => {
    if (cache.size >= size) {
      for (const [old, entry] of cache) if (entry.until <= now) cache.delete(old);
      // Still full of live verdicts: the oldest goes (a Map iterates in insertion order).
      for (const old of cache.keys()) {
        if (cache.size < size) break;
        cache.delete(old);
      }
    }
    cache.set(key, { verdict, until: now + (verdict.allowed ? allowedTtl : ttl) });
    if (verdict.allowed) {
      knownGood.delete(key);
      if (knownGood.size >= size) knownGood.delete(knownGood.keys().next().value ?? "");
      knownGood.set(key, now + knownGoodMs);
    }
  };

  const review = async (token: string, path: string): Promise<AccessVerdict> => {
    const user = await reviews.authenticate(token);
    if (!user) return { allowed: false, status: 401, message: "Unauthorized: the bearer token is not valid" };
    const { allowed, reason } = await reviews.authorize(user, "get", path);
    if (allowed) return { allowed: true };
    const why = reason ? `: ${reason}` : "";
    return { allowed: false, status: 403, message: `Forbidden: user "${user.username}" may not get ${path}${why}` };
  };

  return async (request, path) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
    if (!match) return { allowed: false, status: 401, message: "Unauthorized: send Authorization: Bearer <token>" };
    const key = createHash("sha256").update(`${path}\0${match[1]}`).digest("hex");
    const now = clock.monotonicMs();
    const cached = cache.get(key);
    if (cached && cached.until > now) return cached.verdict;
    const trusted = (knownGood.get(key) ?? 0) > now;
    if (!trusted && inFlight >= maxInFlight) {
      return { allowed: false, status: 429, message: "Too many requests: tokens are being reviewed; retry" };
    }
    const address = request.socket?.remoteAddress ?? "unknown";
    if (!trusted && !addressBucket(address).tryTake()) {
      return { allowed: false, status: 429, message: `Too many requests: too many token reviews from ${address}` };
    }
    if (!trusted && !overall.tryTake()) {
      return { allowed: false, status: 429, message: "Too many requests: too many token reviews; retry" };
    }
    let verdict: AccessVerdict;
    inFlight++;
    try {
      verdict = await review(match[1]!, path);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return { allowed: false, status: 401, message: `Unauthorized: could not review the token: ${detail}` };
    } finally {
      inFlight--;
    }
    keep(key, verdict, now);
    return verdict;
  };
}
