/**
 * The AdmissionReview handlers: the envelope (uid echoed, a 400 for what is not a review), how a denial is encoded
 * (403 or 422, every violation, causes per field), the mutation's patch, the scale subresource, and which lookups
 * a review makes (exactly those its verdict needs; a failing or slow one is a 500 that says what it could not read).
 */
import assert from "node:assert/strict";
import { AdmittedWrites } from "../../../../operator/admission/admitted-writes.ts";
import { describe, it } from "node:test";
import type { MyAppInstanceObject } from "../../../../api/index.ts";
import type { AdmissionLookups } from "../../../../operator/admission/lookups.ts";
import type { ClaimFacts } from "../../../../operator/admission/kept-claims.ts";
import { openPolicy, type PlatformPolicy } from "../../../../operator/admission/policy.ts";
import { admissionHandlers, denial } from "../../../../operator/admission/review.ts";
import { WebhookRequestError } from "../../../../operator/admission/webhook-server.ts";
import type { NamespaceFacts } from "../../../../operator/admission/validate.ts";
import { FakeClock, settle } from "../../runtime/fake-clock.ts";

interface Cluster {
  namespaces?: Record<string, NamespaceFacts>;
  instances?: MyAppInstanceObject[];
  storageClasses?: Record<string, { allowVolumeExpansion?: boolean }>;
  configMaps?: Record<string, string[]>;
  claims?: Record<string, ClaimFacts[]>;
}

/** Lookups over a fixed cluster, recording each call. */
function fakeLookups(cluster: Cluster = {}, overrides: Partial<AdmissionLookups> = {}) {
  const calls: string[] = [];
  const lookups: AdmissionLookups = {
    namespace: (name) => {
      calls.push(`namespace ${name}`);
      return Promise.resolve(cluster.namespaces?.[name]);
    },
    storageClass: (name) => {
      calls.push(`storageClass ${name}`);
      const found = cluster.storageClasses?.[name];
      return Promise.resolve(found && { name, ...found });
    },
    defaultStorageClass: () => {
      calls.push("defaultStorageClass");
      return Promise.resolve(undefined);
    },
    chartConfigMap: (namespace, name) => {
      calls.push(`chartConfigMap ${namespace}/${name}`);
      const keys = cluster.configMaps?.[`${namespace}/${name}`];
      return Promise.resolve(keys && { keys });
    },
    instancesIn: (namespace) => {
      calls.push(`instancesIn ${namespace}`);
      return Promise.resolve((cluster.instances ?? []).filter((item) => item.metadata.namespace === namespace));
    },
    claimsIn: (namespace) => {
      calls.push(`claimsIn ${namespace}`);
      return Promise.resolve(cluster.claims?.[namespace] ?? []);
    },
    instance: (namespace, name) => {
      calls.push(`instance ${namespace}/${name}`);
      return Promise.resolve(
        cluster.instances?.find((item) => item.metadata.namespace === namespace && item.metadata.name === name),
      );
    },
    liveInstance: (namespace, name) => {
      calls.push(`liveInstance ${namespace}/${name}`);
      return Promise.resolve(
        cluster.instances?.find((item) => item.metadata.namespace === namespace && item.metadata.name === name),
      );
    },
    freshNamespace: (name) => {
      calls.push(`freshNamespace ${name}`);
      return Promise.resolve(cluster.namespaces?.[name]);
    },
    liveUsageIn: (namespace, claims) => {
      calls.push(`liveUsageIn ${namespace}${claims ? " with claims" : ""}`);
      return Promise.resolve({
        instances: (cluster.instances ?? []).filter((item) => item.metadata.namespace === namespace),
        resourceVersion: listedAt,
        claims: claims ? (cluster.claims?.[namespace] ?? []) : [],
      });
    },
    ...overrides,
  };
  return { lookups, calls };
}

const lines: { level: string; object: unknown; message: string }[] = [];
const logger = {
  debug: (object: unknown, message: string) => lines.push({ level: "debug", object, message }),
  info: (object: unknown, message: string) => lines.push({ level: "info", object, message }),
  warn: (object: unknown, message: string) => lines.push({ level: "warn", object, message }),
} as never;

function handlers(policy: PlatformPolicy, lookups: AdmissionLookups, lookupTimeoutMs?: number) {
  return admissionHandlers(policy, lookups, logger, lookupTimeoutMs === undefined ? {} : { lookupTimeoutMs });
}

/** An instance as stored: at an early resourceVersion, older than any live list here ({@link listedAt}). */
function object(spec: Record<string, unknown>, name = "web", namespace = "team-a") {
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: { name, namespace, resourceVersion: "1" },
    spec,
  };
}

/** The resourceVersion of every live list here: past what the cache shows, unless a test says otherwise. */
const listedAt = "1000";

function reviewOf(request: Record<string, unknown>) {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: "0df28fbd-5f5f-4e7b-9c1b-3c9a2b0e1a11", namespace: "team-a", name: "web", ...request },
  };
}

function create(spec: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return reviewOf({ operation: "CREATE", object: object(spec), oldObject: null, dryRun: false, ...extra });
}

interface ReviewResponse {
  uid: string;
  allowed: boolean;
  status?: {
    code: number;
    reason: string;
    message: string;
    details?: {
      name: string;
      group: string;
      kind: string;
      causes: { reason: string; field: string; message: string }[];
    };
  };
  patchType?: string;
  patch?: string;
}

function responseOf(answer: unknown): ReviewResponse {
  const body = answer as { apiVersion: string; kind: string; response: ReviewResponse };
  assert.equal(body.apiVersion, "admission.k8s.io/v1");
  assert.equal(body.kind, "AdmissionReview");
  return body.response;
}

describe("the AdmissionReview envelope", () => {
  it("admits with the request's uid, from a parsed body, a string or the raw bytes", async () => {
    const { validate } = handlers(openPolicy, fakeLookups().lookups);
    const review = create({ image: "nginx" });
    for (const body of [review, JSON.stringify(review), Buffer.from(JSON.stringify(review))]) {
      assert.deepEqual(responseOf(await validate(body)), { uid: review.request.uid, allowed: true });
    }
  });

  it("refuses what is not an AdmissionReview v1 with a 400 that says why (the server's WebhookRequestError)", async () => {
    const { validate, mutate } = handlers(openPolicy, fakeLookups().lookups);
    const cases: [unknown, RegExp][] = [
      ["{", /not JSON/],
      ["[]", /not a JSON object/],
      [null, /not a JSON object/],
      [
        { apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: {} },
        /not an AdmissionReview admission\.k8s\.io\/v1/,
      ],
      [{ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }, /has no request/],
      [reviewOf({ uid: "", operation: "CREATE" }), /has no uid/],
      [reviewOf({ operation: 7 }), /has no operation/],
      [reviewOf({ operation: "CREATE", object: "x" }), /request\.object is not an object/],
    ];
    for (const [body, reason] of cases) {
      for (const handler of [validate, mutate]) {
        await assert.rejects(
          handler(body),
          (error: unknown) =>
            error instanceof WebhookRequestError && error.status === 400 && reason.test(error.message),
          JSON.stringify(body),
        );
      }
    }
  });
});

describe("validate", () => {
  const strict: PlatformPolicy = { ...openPolicy, maxReplicas: 2, allowedRegistries: ["ghcr.io/acme"] };

  it("denies with 403 Forbidden, every violation in the message and a cause per field", async () => {
    const { validate } = handlers(strict, fakeLookups().lookups);
    const response = responseOf(await validate(create({ image: "nginx", replicas: 3 })));
    assert.equal(response.allowed, false);
    assert.equal(response.uid, "0df28fbd-5f5f-4e7b-9c1b-3c9a2b0e1a11");
    assert.equal(response.status?.code, 403);
    assert.equal(response.status?.reason, "Forbidden");
    assert.equal(
      response.status?.message,
      "spec.image: nginx (docker.io/library/nginx) is not from a registry the platform allows (only ghcr.io/acme, " +
        "--allowed-registries); use an image from one of them\n" +
        "spec.replicas: 3 is more than the platform allows per instance (at most 2, --max-replicas)",
    );
    assert.deepEqual(
      response.status?.details?.causes.map((cause) => [cause.reason, cause.field]),
      [
        ["FieldValueForbidden", "spec.image"],
        ["FieldValueForbidden", "spec.replicas"],
      ],
    );
    const { causes, ...about } = response.status?.details ?? { causes: [] };
    // The field is the cause's own; kubectl prints it before the message.
    assert.equal(causes[1]?.message, "3 is more than the platform allows per instance (at most 2, --max-replicas)");
    assert.deepEqual(about, { name: "web", group: "example.com", kind: "MyAppInstance" });
  });

  it("denies with 422 Invalid when only references do not resolve", async () => {
    const { validate } = handlers(openPolicy, fakeLookups().lookups);
    const response = responseOf(
      await validate(create({ image: "nginx", storage: "1Gi", storageClassName: "fast", chart: { configMap: "c" } })),
    );
    assert.equal(response.status?.code, 422);
    assert.equal(response.status?.reason, "Invalid");
    assert.deepEqual(
      response.status?.details?.causes.map((cause) => [cause.reason, cause.field]),
      [
        ["FieldValueNotFound", "spec.storageClassName"],
        ["FieldValueNotFound", "spec.chart.configMap"],
      ],
    );
  });

  it("a spec the operator cannot read is 422 Invalid with the schema's words", async () => {
    const { validate } = handlers(openPolicy, fakeLookups().lookups);
    const response = responseOf(await validate(create({ image: "nginx", replicas: -1 })));
    assert.equal(response.status?.code, 422);
    assert.match(response.status?.message ?? "", /^spec\.replicas: must be an integer from 0 to/);
  });

  it("answers 150,000 reserved keys in values with a denial of a dozen lines, not one per key", async () => {
    // GIVEN a create whose values repeat a reserved key 150,000 times (2.7 MB, under the apiserver's 3 MiB)
    const values = { a: Array.from({ length: 150_000 }, () => JSON.parse('{"constructor":1}') as unknown) };
    const { validate } = handlers(openPolicy, fakeLookups().lookups);
    // WHEN it is judged
    const response = responseOf(await validate(create({ image: "nginx", chart: { configMap: "c" }, values })));
    // THEN it is refused naming the first keys and counting the rest, in a few KiB
    assert.equal(response.status?.code, 422);
    assert.equal(response.status?.details?.causes.length, 11);
    assert.match(response.status?.message ?? "", /^spec\.values\.a\[0\]\.constructor: is a reserved name/);
    assert.match(response.status?.message ?? "", /spec\.values: has 149990 more keys named __proto__/);
    assert.ok(JSON.stringify(response).length < 8192, `${JSON.stringify(response).length} bytes`);
  });

  it("refuses values over the platform's size for their size alone, before the schema walks their keys", async () => {
    // GIVEN a platform that allows 128 KiB of values, and a create of 2.7 MB of them, every key a reserved one
    const values = { a: Array.from({ length: 150_000 }, () => JSON.parse('{"constructor":1}') as unknown) };
    const { validate } = handlers({ ...openPolicy, maxValuesKiB: 128 }, fakeLookups().lookups);
    // WHEN it is judged
    const response = responseOf(await validate(create({ image: "nginx", chart: { configMap: "c" }, values })));
    // THEN the one violation is the size
    assert.equal(response.status?.code, 403);
    assert.deepEqual(
      response.status?.details?.causes.map((cause) => [cause.reason, cause.field]),
      [["FieldValueForbidden", "spec.values"]],
    );
    assert.match(
      response.status?.message ?? "",
      /^spec\.values: is 2636\.8 KiB as JSON; the platform allows at most 128 KiB/,
    );
  });

  it("a denial lists at most 20 violations, each in at most 1 KiB, and counts the rest", () => {
    // GIVEN 30 violations with 5,000-character messages
    const violations = Array.from({ length: 30 }, (_, i) => ({
      field: `spec.f${i}`,
      rule: "schema" as const,
      message: `spec.f${i}: ${"x".repeat(5000)}`,
    }));
    // WHEN they become a denial
    const answer = denial({ uid: "u", name: "web" }, violations);
    // THEN 20 are listed, clipped, and the rest counted
    const lines = answer.status.message.split("\n");
    assert.equal(lines.length, 21);
    assert.equal(lines.at(-1), "… and 10 more");
    assert.match(lines[0] ?? "", /^spec\.f0: x+ … \(3985 more characters\)$/);
    assert.equal(answer.status.details.causes.length, 20);
  });

  it("answers a dry run as the real request", async () => {
    const { validate } = handlers(strict, fakeLookups().lookups);
    const real = responseOf(await validate(create({ image: "nginx" })));
    const dry = responseOf(await validate(create({ image: "nginx" }, { dryRun: true })));
    assert.deepEqual(dry, real);
    assert.equal(dry.allowed, false);
  });

  it("admits DELETE and status writes without a lookup", async () => {
    const { lookups, calls } = fakeLookups();
    const { validate } = handlers(strict, lookups);
    const deleting = reviewOf({
      operation: "DELETE",
      object: null,
      oldObject: object({ image: "nginx", replicas: 9 }),
    });
    assert.equal(responseOf(await validate(deleting)).allowed, true);
    const status = create({ image: "nginx", replicas: 9 }, { operation: "UPDATE", subResource: "status" });
    assert.equal(responseOf(await validate(status)).allowed, true);
    assert.deepEqual(calls, []);
  });

  it("makes exactly the lookups the verdict needs", async () => {
    const budget: PlatformPolicy = { ...openPolicy, namespaceBudget: { replicas: 5 } };
    const cluster: Cluster = {
      namespaces: { "team-a": { labels: {} } },
      instances: [
        { ...object({ image: "nginx", replicas: 4 }, "other"), spec: { image: "nginx", replicas: 4 } } as never,
      ],
      configMaps: { "team-a/c": ["chart.tgz"] },
    };
    // The open policy: the namespace is read (its labels could set a budget), nothing else.
    let fake = fakeLookups(cluster);
    assert.equal(
      responseOf(await handlers(openPolicy, fake.lookups).validate(create({ image: "nginx" }))).allowed,
      true,
    );
    assert.deepEqual(fake.calls, ["namespace team-a"]);
    // A budget: the namespace's instances are counted from the cache (4 + 2 > 5), and a refusal read afresh (judged
    // on the list with what the cache has shown since).
    fake = fakeLookups(cluster);
    const over = responseOf(await handlers(budget, fake.lookups).validate(create({ image: "nginx", replicas: 2 })));
    assert.equal(over.status?.code, 403);
    const refused = ["namespace team-a", "instancesIn team-a", "freshNamespace team-a"];
    assert.deepEqual(fake.calls, [...refused, "liveUsageIn team-a", "instancesIn team-a"]);
    fake = fakeLookups(cluster);
    await handlers(budget, fake.lookups).validate(create({ image: "nginx", replicas: 2, storage: "1Gi" }));
    assert.deepEqual(fake.calls, [
      "namespace team-a",
      "instancesIn team-a",
      "claimsIn team-a",
      "freshNamespace team-a",
      "liveUsageIn team-a with claims",
      "instancesIn team-a",
    ]);
    // Nothing read afresh where the namespace does not exist (the apiserver never sends such a review).
    fake = fakeLookups({ ...cluster, namespaces: {} });
    assert.equal(
      responseOf(await handlers(budget, fake.lookups).validate(create({ image: "nginx", replicas: 2 }))).allowed,
      false,
    );
    assert.deepEqual(fake.calls, ["namespace team-a", "instancesIn team-a"]);
    // Storage that grows under a budget: the namespace's kept volume claims are read too.
    fake = fakeLookups(cluster);
    await handlers(budget, fake.lookups).validate(create({ image: "nginx", storage: "1Gi" }));
    assert.deepEqual(fake.calls, ["namespace team-a", "instancesIn team-a", "claimsIn team-a"]);
    // An UPDATE that grows nothing and changes no reference reads nothing.
    fake = fakeLookups(cluster);
    const update = reviewOf({
      operation: "UPDATE",
      object: object({ image: "nginx:2", replicas: 2, chart: { configMap: "c" } }),
      oldObject: object({ image: "nginx:1", replicas: 2, chart: { configMap: "c" } }),
    });
    assert.equal(responseOf(await handlers(budget, fake.lookups).validate(update)).allowed, true);
    assert.deepEqual(fake.calls, []);
  });

  it("a lookup that fails or is too slow is a 500 naming what could not be read", async () => {
    const failing = fakeLookups({}, { namespace: () => Promise.reject(new Error("connection refused")) });
    const failed = responseOf(await handlers(openPolicy, failing.lookups).validate(create({ image: "nginx" })));
    assert.equal(failed.allowed, false);
    assert.equal(failed.status?.code, 500);
    assert.equal(failed.status?.reason, "InternalError");
    assert.equal(
      failed.status?.message,
      "the platform's admission webhook could not judge this instance: reading Namespace team-a failed: " +
        "connection refused; try again",
    );
    const hanging = fakeLookups({}, { namespace: () => new Promise(() => {}) });
    // (its deadline on the clock is the next test's: here, that a lookup that never answers ends in a 500 at all)
    const slow = responseOf(await handlers(openPolicy, hanging.lookups, 50).validate(create({ image: "nginx" })));
    assert.equal(slow.status?.code, 500);
    assert.match(slow.status?.message ?? "", /reading Namespace team-a took longer than 50 ms; try again$/);
  });

  it("times the lookups on its clock's monotonic time: a wall-clock step neither ends nor extends their deadline", async () => {
    const clock = new FakeClock();
    const hanging = fakeLookups({}, { namespace: () => new Promise(() => {}) });
    const review = admissionHandlers(openPolicy, hanging.lookups, logger, { lookupTimeoutMs: 4000, clock });
    let answered: ReviewResponse | undefined;
    void review.validate(create({ image: "nginx" })).then((body) => (answered = responseOf(body)));
    const answer = () => answered; // read through a call: the asserts below must not narrow it
    await clock.advance(3999);
    clock.jumpWall(3_600_000);
    await settle();
    assert.equal(answer(), undefined, "still waiting 1 ms before the deadline, an hour later by the wall clock");
    await clock.advance(1);
    assert.equal(answer()?.status?.code, 500);
    assert.match(answer()?.status?.message ?? "", /reading Namespace team-a took longer than 4000 ms; try again$/);
  });

  it("judges a write to the scale subresource as an edit of spec.replicas", async () => {
    const cluster: Cluster = { instances: [object({ image: "nginx", replicas: 2 }) as never] };
    const scale = (from: number, to: number) =>
      reviewOf({
        operation: "UPDATE",
        subResource: "scale",
        kind: { group: "autoscaling", version: "v1", kind: "Scale" },
        object: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "web" }, spec: { replicas: to } },
        oldObject: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "web" }, spec: { replicas: from } },
      });
    const limited: PlatformPolicy = { ...openPolicy, maxReplicas: 5, allowedRegistries: ["ghcr.io/acme"] };
    const fake = fakeLookups(cluster);
    const { validate } = handlers(limited, fake.lookups);
    const up = responseOf(await validate(scale(2, 6)));
    // Only replicas are judged: the image (not allowed, but unchanged) is not.
    assert.equal(
      up.status?.message,
      "spec.replicas: 6 is more than the platform allows per instance (at most 5, --max-replicas)",
    );
    assert.ok(fake.calls.includes("instance team-a/web"));
    assert.equal(responseOf(await validate(scale(2, 5))).allowed, true);
    assert.equal(responseOf(await validate(scale(7, 6))).allowed, true);
    // The instance is gone: nothing to judge, the apiserver answers 404 itself.
    const gone = fakeLookups({});
    assert.equal(responseOf(await handlers(limited, gone.lookups).validate(scale(2, 9))).allowed, true);
    assert.deepEqual(gone.calls, ["instance team-a/web", "liveInstance team-a/web"]);
    // Just created, not in the cache yet: the apiserver has it, and it is judged.
    const created = fakeLookups(cluster, { instance: () => Promise.resolve(undefined) });
    assert.equal(responseOf(await handlers(limited, created.lookups).validate(scale(2, 9))).allowed, false);
  });

  it("logs a denial at info with the rules, an admission at debug", async () => {
    lines.length = 0;
    const { validate } = handlers(strict, fakeLookups().lookups);
    await validate(create({ image: "ghcr.io/acme/app", replicas: 9 }));
    await validate(create({ image: "ghcr.io/acme/app" }));
    assert.deepEqual(
      lines.map((line) => [line.level, line.message, (line.object as { denied?: string[] }).denied]),
      [
        ["info", "admission: denied", ["maxReplicas"]],
        ["debug", "admission: reviewed", undefined],
      ],
    );
  });
});

describe("mutate", () => {
  const baselineNamespace: Cluster = {
    namespaces: { "team-a": { labels: { "pod-security.kubernetes.io/enforce": "baseline" } } },
  };

  it("answers a JSONPatch, base64, that adds the namespace's level, read afresh", async () => {
    const fake = fakeLookups(baselineNamespace);
    const { mutate } = handlers(openPolicy, fake.lookups);
    const response = responseOf(await mutate(create({ image: "nginx" })));
    // Not the 5 s reuse: the default is stored, so a label set a moment before must give it.
    assert.deepEqual(fake.calls, ["freshNamespace team-a"]);
    assert.equal(response.allowed, true);
    assert.equal(response.patchType, "JSONPatch");
    assert.deepEqual(JSON.parse(Buffer.from(response.patch ?? "", "base64").toString("utf8")), [
      { op: "add", path: "/spec/podSecurityLevel", value: "Baseline" },
    ]);
  });

  it("answers without a patch, and without reading the namespace, when the level is set", async () => {
    const fake = fakeLookups(baselineNamespace);
    const response = responseOf(
      await handlers(openPolicy, fake.lookups).mutate(create({ image: "nginx", podSecurityLevel: "Restricted" })),
    );
    assert.deepEqual(response, { uid: "0df28fbd-5f5f-4e7b-9c1b-3c9a2b0e1a11", allowed: true });
    assert.deepEqual(fake.calls, []);
  });

  it("on UPDATE, gives the default back only where the stored instance has it", async () => {
    const { mutate } = handlers(openPolicy, fakeLookups(baselineNamespace).lookups);
    const update = (old: Record<string, unknown>) =>
      reviewOf({ operation: "UPDATE", object: object({ image: "nginx:2" }), oldObject: object(old) });
    assert.equal(
      responseOf(await mutate(update({ image: "nginx", podSecurityLevel: "Baseline" }))).patchType,
      "JSONPatch",
    );
    assert.equal(responseOf(await mutate(update({ image: "nginx" }))).patch, undefined);
  });

  it("leaves the scale subresource and deletions alone", async () => {
    const fake = fakeLookups(baselineNamespace);
    const { mutate } = handlers(openPolicy, fake.lookups);
    const scale = reviewOf({ operation: "UPDATE", subResource: "scale", object: { spec: { replicas: 3 } } });
    assert.equal(responseOf(await mutate(scale)).patch, undefined);
    assert.equal(responseOf(await mutate(reviewOf({ operation: "DELETE", object: null }))).patch, undefined);
    assert.deepEqual(fake.calls, []);
  });

  it("a namespace that cannot be read is a 500, not an instance without its default", async () => {
    const failing = fakeLookups({}, { freshNamespace: () => Promise.reject(new Error("boom")) });
    const response = responseOf(await handlers(openPolicy, failing.lookups).mutate(create({ image: "nginx" })));
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 500);
  });
});

// A regression that leaves a review waiting on a fake clock no one advances fails here, instead of hanging the run.
describe("budgets under concurrent creates", { timeout: 60_000 }, () => {
  const budget: PlatformPolicy = { ...openPolicy, namespaceBudget: { instances: 3 } };
  const createNamed = (name: string, dryRun = false, namespace = "team-a", replicas = 1) =>
    reviewOf({
      operation: "CREATE",
      namespace,
      name,
      object: object({ image: "nginx", replicas }, name, namespace),
      oldObject: null,
      dryRun,
    });

  /**
   * The apiserver as the webhook sees it: the cache never catches up during the test (every list answers what was
   * there before), but what the webhook admits, the apiserver stores (a live read finds it); a forger's review
   * never reaches storage.
   */
  function apiserver(cluster: Cluster, policy: PlatformPolicy) {
    const clock = new FakeClock();
    const stored: MyAppInstanceObject[] = [...(cluster.instances ?? [])];
    const asked: string[] = [];
    const fake = fakeLookups(cluster, {
      liveInstance: (namespace, name) => {
        asked.push(`${namespace}/${name}`);
        return Promise.resolve(
          stored.find((item) => item.metadata.namespace === namespace && item.metadata.name === name),
        );
      },
      liveUsageIn: (namespace) =>
        Promise.resolve({
          instances: stored.filter((item) => item.metadata.namespace === namespace),
          resourceVersion: listedAt,
          claims: [],
        }),
    });
    const { validate } = admissionHandlers(policy, fake.lookups, logger, { clock });
    const answer = (body: ReturnType<typeof reviewOf>) => validate(body).then((answered) => responseOf(answered));
    return {
      clock,
      /** The live reads of remembered writes. */
      asked,
      /** Through the apiserver: stored when admitted and not a dry run. */
      async write(body: ReturnType<typeof reviewOf>) {
        const response = await answer(body);
        const request = body.request as unknown as { dryRun?: boolean; object: MyAppInstanceObject };
        if (response.allowed && request.dryRun !== true) stored.push(request.object);
        return response;
      },
      /** Straight to the webhook's port. */
      forge: answer,
    };
  }

  /** Runs `answers` while the clock moves past the time remembered writes get to be stored. */
  async function settled<T>(clock: FakeClock, answers: Promise<T>[]): Promise<T[]> {
    await clock.advance(1_000);
    return Promise.all(answers);
  }

  it("admits exactly the budget when ten creates arrive at once and the cache shows none of them", async () => {
    const cluster = apiserver({ namespaces: { "team-a": { labels: {} } } }, budget);
    const answers = await settled(
      cluster.clock,
      Array.from({ length: 10 }, (_, i) => cluster.write(createNamed(`web-${i}`))),
    );
    assert.equal(answers.filter((response) => response.allowed).length, 3);
    // The refused ones were judged on what storage has (the three): no remembered write needed asking for.
    assert.deepEqual(cluster.asked, []);
  });

  it("refuses on what the apiserver has: a shrink, a deletion or a label raised a moment before frees the room", async () => {
    const running = (spec: Record<string, number>) =>
      Object.entries(spec).map(([name, count]) => object({ image: "nginx", replicas: count }, name) as never);
    const budget = (replicas: string) => ({ labels: { "myapp.example.com/max-replicas": replicas } });
    // GIVEN the cache still shows fit-1 at 2 replicas and gone-1 (6 in all) and a budget of 6; the apiserver has
    // fit-1 at 1, no gone-1, and soon a budget of 7
    const cached = running({ "fit-1": 2, "fit-2": 2, "gone-1": 2 });
    const stored = running({ "fit-1": 1, "fit-2": 2 });
    let label = budget("6");
    const { lookups, calls } = fakeLookups(
      { namespaces: { "team-a": budget("6") }, instances: cached },
      {
        freshNamespace: () => Promise.resolve(label),
        liveUsageIn: (namespace) => {
          calls.push(`liveUsageIn ${namespace}`);
          return Promise.resolve({ instances: stored, resourceVersion: listedAt, claims: [] });
        },
      },
    );
    const { validate } = handlers(openPolicy, lookups);
    // WHEN the tenant creates an instance of 3 THEN it is admitted (1 + 2 + 3), after one fresh read
    const fits = responseOf(await validate(createNamed("fit-3", false, "team-a", 3)));
    assert.equal(fits?.allowed, true, JSON.stringify(fits));
    assert.deepEqual(calls, ["namespace team-a", "instancesIn team-a", "liveUsageIn team-a", "instancesIn team-a"]);
    stored.push(...running({ "fit-3": 3 }));
    // AND one that breaks the budget there too is refused with the apiserver's count, not the cache's
    const over = responseOf(await validate(createNamed("fit-4", false, "team-a", 1)));
    assert.equal(over.allowed, false);
    assert.match(over.status?.message ?? "", /at most 6 replicas .* it runs 6 without this instance, which asks for 1/);
    // AND the label raised a moment before counts, where the reused read of the Namespace still says 6
    label = budget("7");
    assert.equal(responseOf(await validate(createNamed("fit-4", false, "team-a", 1))).allowed, true);
  });

  it("judges afresh on the list with what the cache shows since: another replica's write stored after it counts", async () => {
    // GIVEN a budget of 3: the list (at 1000) shows a and b; the cache shows x, stored after the list began (1001),
    // and a stale gone (deleted before the list)
    const at = (name: string, resourceVersion: string) =>
      ({ ...object({ image: "nginx" }, name), metadata: { name, namespace: "team-a", resourceVersion } }) as never;
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": { labels: {} } }, instances: [at("a", "5"), at("gone", "6"), at("x", "1001")] },
      {
        liveUsageIn: () =>
          Promise.resolve({ instances: [at("a", "5"), at("b", "7")], resourceVersion: "1000", claims: [] }),
      },
    );
    // WHEN a create comes THEN it is refused on a, b and x (gone does not count, x does)
    const over = responseOf(await handlers(budget, lookups).validate(createNamed("y")));
    assert.match(over.status?.message ?? "", /at most 3 instances .* it has 3 without this one/);
  });

  it("reopens at once a namespace whose label was raised a moment before, even past what it allowed", async () => {
    const closed = { labels: { "myapp.example.com/max-instances": "0" } };
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": closed } },
      { freshNamespace: () => Promise.resolve({ labels: { "myapp.example.com/max-instances": "2" } }) },
    );
    assert.equal(responseOf(await handlers(openPolicy, lookups).validate(createNamed("web"))).allowed, true);
  });

  it("counts the claims a fresh read shows where storage grows", async () => {
    const storage: PlatformPolicy = { ...openPolicy, namespaceBudget: { storage: "10Gi" } };
    const kept: ClaimFacts[] = [{ name: "data-old-0", instance: "old", storage: "5Gi" }];
    const sized = (name: string) => object({ image: "nginx", storage: "4Gi" }, name) as never;
    // GIVEN the cache shows a and a stale g (8Gi); the apiserver has a and a claim kept from a deleted instance
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": { labels: {} } }, instances: [sized("a"), sized("g")] },
      {
        liveUsageIn: (_namespace, claims) =>
          Promise.resolve({ instances: [sized("a")], resourceVersion: listedAt, claims: claims ? kept : [] }),
      },
    );
    // THEN 4 + 5 kept + 3 asked is more than 10
    const review = reviewOf({
      operation: "CREATE",
      name: "y",
      object: object({ image: "nginx", storage: "3Gi" }, "y"),
      oldObject: null,
    });
    const over = responseOf(await handlers(storage, lookups).validate(review));
    assert.equal(over.allowed, false);
    assert.match(over.status?.message ?? "", /data-old-0/);
  });

  it("counts a chart instance's claims of replicas scaled away, and names them", async () => {
    const storage: PlatformPolicy = { ...openPolicy, namespaceBudget: { storage: "10Gi" } };
    // GIVEN chart instance a, rendered at 4 replicas of 2Gi and scaled to 1: its status counts 2Gi, its claims hold 8Gi
    const a = {
      ...object({ image: "nginx", chart: { configMap: "c" } }, "a"),
      status: { chartUsage: { replicas: 1, storage: "2Gi" } },
    } as never;
    const kept: ClaimFacts[] = [0, 1, 2, 3].map((ordinal) => ({
      name: `data-a-${ordinal}`,
      instance: "a", // the chart's own label, as helm's charts set it
      storage: "2Gi",
      chartInstance: "a",
    }));
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": { labels: {} } }, instances: [a], claims: { "team-a": kept } },
      {
        liveUsageIn: (_namespace, claims) =>
          Promise.resolve({ instances: [a], resourceVersion: listedAt, claims: claims ? kept : [] }),
      },
    );
    // WHEN an instance asks for 3Gi THEN 8 + 3 is more than 10, and the claims are named
    const review = reviewOf({
      operation: "CREATE",
      name: "y",
      object: object({ image: "nginx", storage: "3Gi" }, "y"),
      oldObject: null,
    });
    const over = responseOf(await handlers(storage, lookups).validate(review));
    assert.equal(over.allowed, false);
    assert.match(over.status?.message ?? "", /uses 8Gi without this instance/);
    assert.match(over.status?.message ?? "", /data-a-3/);
  });

  it("counts a write it admitted while a slow fresh list was on its way, though the list began before it", async () => {
    // GIVEN a budget of 3, a and b stored, a stale g in the cache; lists that take 1.4 s, then 2.5 s
    const clock = new FakeClock();
    const stored = [object({ image: "nginx" }, "a"), object({ image: "nginx" }, "b")] as MyAppInstanceObject[];
    const delays = [1_400, 2_500];
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": { labels: {} } }, instances: [...stored, object({ image: "nginx" }, "g") as never] },
      {
        liveInstance: (_namespace, name) => Promise.resolve(stored.find((item) => item.metadata.name === name)),
        liveUsageIn: () => {
          const snapshot = [...stored];
          return new Promise((resolve) =>
            clock.setTimeout(
              () => resolve({ instances: snapshot, resourceVersion: listedAt, claims: [] }),
              delays.shift() ?? 0,
            ),
          );
        },
      },
    );
    const { validate } = admissionHandlers(budget, lookups, logger, { clock });
    // WHEN y is judged afresh and admitted, while w's list (begun before y was) is on its way
    const y = validate(createNamed("y"));
    await settle();
    await clock.advance(100);
    const w = validate(createNamed("w"));
    await clock.advance(1_300);
    assert.equal(responseOf(await y).allowed, true);
    stored.push(object({ image: "nginx" }, "y") as never);
    await clock.advance(1_300);
    // THEN w counts y from memory: a, b, y and w would be 4 of 3
    assert.equal(responseOf(await w).allowed, false);
  });

  it("a review whose turn comes past its deadline makes no read, and says so", async () => {
    // GIVEN a namespace's first review holding the turn on a read that never answers
    const clock = new FakeClock();
    let reads = 0;
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": { labels: {} } } },
      {
        instancesIn: () => {
          reads++;
          return new Promise(() => {});
        },
      },
    );
    const { validate } = admissionHandlers(budget, lookups, logger, { clock, lookupTimeoutMs: 4_000 });
    const first = validate(createNamed("a"));
    const second = validate(createNamed("b"));
    await clock.advance(4_000);
    // THEN both are 500s, and the second, whose turn came at its deadline, read nothing
    assert.equal(responseOf(await first).status?.code, 500);
    const late = responseOf(await second);
    assert.equal(late.status?.code, 500);
    assert.match(late.status?.message ?? "", /no time left of 4000 ms/);
    assert.equal(reads, 1);
  });

  it("keeps the cache's refusal when the fresh read fails: a 403 that says the usage, not a 500", async () => {
    const budget: PlatformPolicy = { ...openPolicy, namespaceBudget: { replicas: 2 } };
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": { labels: {} } }, instances: [object({ image: "nginx", replicas: 2 }, "db") as never] },
      { liveUsageIn: () => Promise.reject(new Error("connection refused")) },
    );
    const over = responseOf(await handlers(budget, lookups).validate(createNamed("web", false, "team-a", 1)));
    assert.equal(over.status?.code, 403);
    assert.match(over.status?.message ?? "", /it runs 2 without this instance/);
  });

  it("counts its remembered writes beside a fresh list until they had time to be stored, then lets the list decide", async () => {
    // GIVEN a cache that never catches up, and three creates admitted into team-a's budget of 3, not stored yet
    const clock = new FakeClock();
    const stored: MyAppInstanceObject[] = [];
    const { lookups } = fakeLookups(
      { namespaces: { "team-a": { labels: {} } } },
      {
        liveInstance: (_namespace, name) => Promise.resolve(stored.find((item) => item.metadata.name === name)),
        liveUsageIn: () => Promise.resolve({ instances: [...stored], resourceVersion: listedAt, claims: [] }),
      },
    );
    const { validate } = admissionHandlers(budget, lookups, logger, { clock });
    const created = (name: string) => object({ image: "nginx", replicas: 1 }, name) as unknown as MyAppInstanceObject;
    for (const name of ["a", "b", "c"]) assert.equal(responseOf(await validate(createNamed(name))).allowed, true);
    // WHEN a fourth comes before the apiserver has stored them THEN the fresh list does not show them, but they count
    const fourth = validate(createNamed("d"));
    await settle();
    stored.push(created("a"), created("b"), created("c"));
    await clock.advance(1_000);
    assert.match(responseOf(await fourth).status?.message ?? "", /at most 3 instances/);
    // AND once the tenant deletes b, a list begun after the writes had time to be stored decides: a fourth fits
    stored.splice(1, 1);
    await clock.advance(1_000);
    const [fits] = (await settled(clock, [validate(createNamed("e"))])).map(responseOf);
    assert.equal(fits?.allowed, true, JSON.stringify(fits));
  });

  it("remembers of each admitted write only what a budget reads, not its values", async () => {
    const admitted = new AdmittedWrites();
    const lookups = fakeLookups({ namespaces: { "team-a": { labels: {} } } }).lookups;
    const { validate } = admissionHandlers(budget, lookups, logger, { admitted });
    const values = { blob: "x".repeat(100_000) };
    const review = reviewOf({
      operation: "CREATE",
      namespace: "team-a",
      name: "big",
      object: object({ image: "nginx", values }, "big", "team-a"),
    });
    assert.equal(responseOf(await validate(review)).allowed, true);
    assert.deepEqual(
      admitted.merge("team-a", []).map((instance) => instance.spec),
      [{ replicas: 1 }],
    );
  });

  it("does not count a dry-run, which stores nothing", async () => {
    const cluster = apiserver({ namespaces: { "team-a": { labels: {} } } }, budget);
    for (let i = 0; i < 5; i++) assert.equal((await cluster.write(createNamed(`probe-${i}`, true))).allowed, true);
    const answers = await settled(
      cluster.clock,
      Array.from({ length: 4 }, (_, i) => cluster.write(createNamed(`web-${i}`))),
    );
    assert.equal(answers.filter((response) => response.allowed).length, 3);
  });

  it("does not let a forged create hold another namespace's budget: the apiserver is asked, and has no such instance", async () => {
    const replicas: PlatformPolicy = { ...openPolicy, namespaceBudget: { replicas: 10 } };
    const db = object({ image: "nginx", replicas: 3 }, "db", "team-b") as never;
    const cluster = apiserver({ namespaces: { "team-b": { labels: {} } }, instances: [db] }, replicas);
    // GIVEN a forged create taking 7 of team-b's 10 replicas, admitted (nothing tells it from the apiserver's)
    assert.equal((await cluster.forge(createNamed("ghost", false, "team-b", 7))).allowed, true);
    // WHEN team-b creates an instance through the apiserver, and the forger keeps sending fresh ghosts meanwhile
    const real = cluster.write(createNamed("web", false, "team-b", 1));
    await settle();
    const ghosts = [cluster.forge(createNamed("ghost-2", false, "team-b", 7))];
    await cluster.clock.advance(500);
    ghosts.push(cluster.forge(createNamed("ghost-3", false, "team-b", 7)));
    // THEN it is admitted once the first ghost had the time a real write takes to be stored, and was not found
    const [web] = await settled(cluster.clock, [real]);
    assert.equal(web?.allowed, true, JSON.stringify(web));
    await settled(cluster.clock, ghosts);
    // AND a real create is still refused by what the apiserver stored (db 3 + web 1 + this 7 > 10)
    const over = await settled(cluster.clock, [cluster.write(createNamed("big", false, "team-b", 7))]);
    assert.equal(over[0]?.allowed, false);
    assert.match(over[0]?.status?.message ?? "", /it runs 4 without this instance/);
  });

  it("does not let a burst refused by one forged create pass the budget together once it is forgotten", async () => {
    // GIVEN team-a running 2 of its 3 instances, and a forged create admitted into the last slot
    const running = [0, 1].map((i) => object({ image: "nginx", replicas: 1 }, `real-${i}`, "team-a") as never);
    const cluster = apiserver({ namespaces: { "team-a": { labels: {} } }, instances: running }, budget);
    assert.equal((await cluster.forge(createNamed("ghost"))).allowed, true);
    // WHEN the tenant creates four at once through the apiserver (the cache shows none of them)
    const burst = Array.from({ length: 4 }, (_, i) => cluster.write(createNamed(`burst-${i}`)));
    // (each round of suspects waits for its writes to settle: the clock moves until every answer is in)
    let done = false;
    void Promise.all(burst).then(() => (done = true));
    for (let step = 0; step < 10 && !done; step++) await cluster.clock.advance(1_000);
    const answers = await Promise.all(burst);
    // THEN once the ghost is found absent, one of them takes the slot, and only one
    assert.equal(answers.filter((response) => response.allowed).length, 1, JSON.stringify(answers));
  });

  it("remembers only what grows a namespace with a budget: no shrink, no other namespace's or made-up name", async () => {
    const admitted = new AdmittedWrites();
    const lookups = fakeLookups({ namespaces: { "team-a": { labels: {} }, open: { labels: {} } } }).lookups;
    const { validate } = admissionHandlers(budget, lookups, logger, { admitted });
    // A shrink of an instance (forged or real) takes nothing more: not remembered, so it replaces no growth.
    const shrink = reviewOf({
      operation: "UPDATE",
      namespace: "team-a",
      name: "web",
      object: object({ image: "nginx", replicas: 1 }, "web", "team-a"),
      oldObject: object({ image: "nginx", replicas: 3 }, "web", "team-a"),
    });
    assert.equal(responseOf(await validate(shrink)).allowed, true);
    assert.equal(admitted.size, 0);
  });

  it("does not remember a write in a namespace that does not exist (the apiserver never sends one)", async () => {
    const admitted = new AdmittedWrites();
    const lookups = fakeLookups({ namespaces: { "team-a": { labels: {} } } }).lookups;
    const { validate } = admissionHandlers(budget, lookups, logger, { admitted });
    for (let i = 0; i < 5; i++) {
      assert.equal(responseOf(await validate(createNamed("ghost", false, `made-up-${i}`))).allowed, true);
    }
    assert.equal(admitted.size, 0);
    assert.equal(responseOf(await validate(createNamed("web"))).allowed, true);
    assert.equal(admitted.size, 1);
  });
});
