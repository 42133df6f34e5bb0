import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import { startHealthServer } from "../../../operator/runtime/health-server.ts";
import {
  bearerTokenAuthorizer,
  kubeAccessReviews,
  type AccessReviewClient,
  type UserInfo,
} from "../../../operator/runtime/metrics-auth.ts";
import { OperatorMetrics } from "../../../operator/runtime/metrics.ts";
import { captureLogger } from "./capture-logger.ts";
import { FakeClock } from "./fake-clock.ts";

/** Tokens "prometheus" (allowed) and "someone" (authenticated, not allowed); counts the reviews. */
function fakeReviews() {
  const calls: string[] = [];
  const users: Record<string, UserInfo> = {
    prometheus: { username: "system:serviceaccount:monitoring:prometheus", groups: ["system:serviceaccounts"] },
    someone: { username: "someone" },
  };
  const reviews: AccessReviewClient = {
    async authenticate(token) {
      calls.push(`TokenReview ${token}`);
      return users[token];
    },
    async authorize(user, verb, path) {
      calls.push(`SubjectAccessReview ${user.username} ${verb} ${path}`);
      return user.username.endsWith(":prometheus")
        ? { allowed: true, reason: "RBAC: allowed by ClusterRoleBinding" }
        : { allowed: false, reason: "" };
    },
  };
  return { reviews, calls };
}

const request = (authorization?: string, remoteAddress = "10.0.0.1") =>
  ({ headers: authorization === undefined ? {} : { authorization }, socket: { remoteAddress } }) as IncomingMessage;

describe("bearerTokenAuthorizer", () => {
  it("answers 401 without a token or with an invalid one, 403 for a user without the right, else allows", async () => {
    const { reviews } = fakeReviews();
    const authorize = bearerTokenAuthorizer(reviews, { clock: new FakeClock() });
    assert.deepEqual(await authorize(request(), "/metrics"), {
      allowed: false,
      status: 401,
      message: "Unauthorized: send Authorization: Bearer <token>",
    });
    assert.equal(((await authorize(request("Bearer forged"), "/metrics")) as { status: number }).status, 401);
    const forbidden = await authorize(request("Bearer someone"), "/metrics");
    assert.deepEqual(forbidden, {
      allowed: false,
      status: 403,
      message: 'Forbidden: user "someone" may not get /metrics',
    });
    assert.deepEqual(await authorize(request("Bearer prometheus"), "/metrics"), { allowed: true });
  });

  it("reuses an allowed verdict for allowedTtlMs and a refusal for cacheTtlMs, then reviews again", async () => {
    const { reviews, calls } = fakeReviews();
    const clock = new FakeClock();
    const authorize = bearerTokenAuthorizer(reviews, { clock, cacheTtlMs: 10_000, allowedTtlMs: 120_000 });
    await authorize(request("Bearer prometheus"), "/metrics");
    await authorize(request("Bearer someone"), "/metrics");
    assert.equal(calls.length, 4, "a TokenReview and a SubjectAccessReview each");
    await clock.advance(10_000);
    await authorize(request("Bearer prometheus"), "/metrics");
    await authorize(request("Bearer someone"), "/metrics");
    assert.equal(calls.length, 6, "the refusal is reviewed again, the allowed verdict reused");
    await clock.advance(110_000);
    await authorize(request("Bearer prometheus"), "/metrics");
    assert.equal(calls.length, 8);
  });

  it("reviews a scraper's token again though a flood from many addresses holds the shared bounds", async () => {
    const { reviews, calls } = fakeReviews();
    const clock = new FakeClock();
    const authorize = bearerTokenAuthorizer(reviews, { clock });
    assert.deepEqual(await authorize(request("Bearer prometheus", "10.0.0.2"), "/metrics"), { allowed: true });
    // WHEN pods on 40 addresses send random tokens, each within its own address's rate, while the verdict expires
    await clock.advance(120_000);
    for (let i = 0; i < 40; i++) await authorize(request(`Bearer r-${i}`, `10.1.0.${i}`), "/metrics");
    const reviewed = calls.length;
    assert.equal(
      ((await authorize(request("Bearer flood", "10.1.0.99"), "/metrics")) as { status: number }).status,
      429,
      "the shared bucket is empty",
    );
    // THEN the scraper's known token is still reviewed, and allowed
    assert.deepEqual(await authorize(request("Bearer prometheus", "10.0.0.2"), "/metrics"), { allowed: true });
    assert.equal(calls.length, reviewed + 2);
  });

  it("keeps at most maxReviewsInFlight reviews at once: random tokens get 429, not a TokenReview each", async () => {
    const { reviews, calls } = fakeReviews();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: AccessReviewClient = {
      authenticate: async (token) => (await held, reviews.authenticate(token)),
      authorize: reviews.authorize,
    };
    const authorize = bearerTokenAuthorizer(slow, { clock: new FakeClock(), maxReviewsInFlight: 4 });
    const flood = Array.from({ length: 100 }, (_, i) => authorize(request(`Bearer random-${i}`), "/metrics"));
    release();
    const verdicts = await Promise.all(flood);
    const statuses = verdicts.map((verdict) => (verdict.allowed ? 200 : verdict.status));
    assert.equal(statuses.filter((status) => status === 429).length, 96);
    assert.equal(calls.filter((call) => call.startsWith("TokenReview")).length, 4);
    // Once those are answered, a scraper's token is reviewed as before.
    assert.deepEqual(await authorize(request("Bearer prometheus"), "/metrics"), { allowed: true });
  });

  it("bounds the rate of reviews from one address and in all: a flood of random tokens gets 429, a scraper elsewhere is reviewed", async () => {
    const { reviews, calls } = fakeReviews();
    const clock = new FakeClock();
    const authorize = bearerTokenAuthorizer(reviews, { clock });
    const tokenReviews = () => calls.filter((call) => call.startsWith("TokenReview")).length;
    // WHEN one address sends 10 random tokens one after another
    const fromOne = [];
    for (let i = 0; i < 10; i++) fromOne.push(await authorize(request(`Bearer random-${i}`, "10.0.0.9"), "/metrics"));
    // THEN 5 are reviewed (the address's burst) and the rest refused, naming the address
    assert.equal(tokenReviews(), 5);
    assert.deepEqual(fromOne.at(-1), {
      allowed: false,
      status: 429,
      message: "Too many requests: too many token reviews from 10.0.0.9",
    });
    // AND a scraper on another address is reviewed, and the flooding address gets one more a second
    assert.deepEqual(await authorize(request("Bearer prometheus", "10.0.0.2"), "/metrics"), { allowed: true });
    await clock.advance(1_000);
    await authorize(request("Bearer random-x", "10.0.0.9"), "/metrics");
    assert.equal(tokenReviews(), 7);
    // WHEN many addresses send one random token each THEN the overall burst (20) holds
    const fresh = bearerTokenAuthorizer(reviews, { clock });
    const many = [];
    for (let i = 0; i < 30; i++) many.push(await fresh(request(`Bearer r-${i}`, `10.1.0.${i}`), "/metrics"));
    assert.equal(tokenReviews(), 7 + 20);
    assert.equal((many.at(-1) as { message: string }).message, "Too many requests: too many token reviews; retry");
  });

  it("keeps the newest verdicts when its cache is full, not none", async () => {
    const { reviews, calls } = fakeReviews();
    const authorize = bearerTokenAuthorizer(reviews, { clock: new FakeClock(), cacheSize: 2 });
    await authorize(request("Bearer prometheus"), "/metrics");
    await authorize(request("Bearer someone"), "/metrics");
    await authorize(request("Bearer forged"), "/metrics");
    const before = calls.length;
    await authorize(request("Bearer forged"), "/metrics");
    await authorize(request("Bearer someone"), "/metrics");
    assert.equal(calls.length, before, "the two newest verdicts are kept");
    await authorize(request("Bearer prometheus"), "/metrics");
    assert.equal(calls.length, before + 2, "the oldest went");
  });

  it("denies (401, not cached) when the review itself fails", async () => {
    let down = true;
    const { reviews } = fakeReviews();
    const flaky: AccessReviewClient = {
      authenticate: async (token) => {
        if (down) throw new Error("connect ECONNREFUSED");
        return reviews.authenticate(token);
      },
      authorize: reviews.authorize,
    };
    const authorize = bearerTokenAuthorizer(flaky, { clock: new FakeClock() });
    const verdict = await authorize(request("Bearer prometheus"), "/metrics");
    assert.deepEqual(verdict, {
      allowed: false,
      status: 401,
      message: "Unauthorized: could not review the token: connect ECONNREFUSED",
    });
    down = false;
    assert.deepEqual(await authorize(request("Bearer prometheus"), "/metrics"), { allowed: true });
  });
});

describe("kubeAccessReviews", () => {
  it("sends a TokenReview, then a SubjectAccessReview for the non-resource URL with the user's groups", async () => {
    const sent: Record<string, unknown>[] = [];
    const reviews = kubeAccessReviews({
      create: async <T>(object: T) => {
        const body = object as Record<string, unknown>;
        sent.push(body);
        const status =
          body.kind === "TokenReview"
            ? { authenticated: true, user: { username: "prom", uid: "u1", groups: ["g"] } }
            : { allowed: true };
        return { ...body, status } as T;
      },
    } as Parameters<typeof kubeAccessReviews>[0]);
    const user = await reviews.authenticate("t0ken");
    assert.deepEqual(user, { username: "prom", uid: "u1", groups: ["g"] });
    assert.deepEqual(await reviews.authorize(user!, "get", "/metrics"), { allowed: true, reason: "" });
    assert.deepEqual(sent[0]?.spec, { token: "t0ken" });
    assert.deepEqual(sent[1]?.spec, {
      user: "prom",
      uid: "u1",
      groups: ["g"],
      nonResourceAttributes: { path: "/metrics", verb: "get" },
    });
  });
});

describe("health server with authenticated /metrics", () => {
  it("guards /metrics and leaves the probes open", async () => {
    const { reviews } = fakeReviews();
    const server = await startHealthServer({
      port: 0,
      host: "127.0.0.1",
      registry: new OperatorMetrics().registry,
      readiness: [],
      logger: captureLogger().logger,
      authorizeMetrics: bearerTokenAuthorizer(reviews),
    });
    try {
      const get = async (path: string, token?: string) => {
        const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
        const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { headers });
        return { status: response.status, body: await response.text() };
      };
      assert.equal((await get("/metrics")).status, 401);
      assert.equal((await get("/metrics", "someone")).status, 403);
      const allowed = await get("/metrics", "prometheus");
      assert.equal(allowed.status, 200);
      assert.match(allowed.body, /leader_election_master_status|# HELP/);
      assert.equal((await get("/healthz")).status, 200, "the kubelet sends no token");
    } finally {
      await server.close();
    }
  });
});
