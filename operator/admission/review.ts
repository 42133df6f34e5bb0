/**
 * The webhooks' HTTP handlers: an AdmissionReview (admission.k8s.io/v1) in, an AdmissionReview out, with the
 * request's uid echoed. webhook-server.ts routes `POST /validate` and `POST /mutate` here.
 *
 * - A denial is `allowed: false` with a Status: code 403, reason Forbidden when a platform rule refuses; 422,
 *   reason Invalid when the only problems are references that do not resolve (a StorageClass, a chart
 *   ConfigMap) or a spec the operator cannot read. The message holds every violation, one per line, and
 *   `details.causes` names each field, so `kubectl apply` and `pulumi preview` show the same words.
 * - A mutation is `patchType: JSONPatch` with the base64 patch (mutate.ts), or no patch.
 * - A lookup that fails or takes longer than {@link defaultLookupTimeoutMs} is answered with a denial, code 500,
 *   reason InternalError, that says what could not be read: a client retries it, and an instance is never
 *   admitted unjudged (failure is closed, as the webhook configuration's failurePolicy: Fail). The reads that judge
 *   a budget's refusal again are the exception: when they fail or run out of time the refusal stands.
 * - A body that is not an AdmissionReview v1 with a request and a uid is refused with a WebhookRequestError, which
 *   webhook-server.ts answers with HTTP 400 and the reason: the apiserver then applies the failurePolicy. Nothing
 *   else rejects.
 * - dryRun requests are judged the same way (the webhooks have no side effects), without waiting for the
 *   namespace's turn and without being remembered; a budget's refusal of one is read afresh as any (shared:
 *   fresh-reads.ts).
 */
import type { Logger } from "pino";
import { group, kind, validateSpec, type MyAppInstanceObject } from "../../api/index.ts";
import { realClock, type Clock, type TimerHandle } from "../../kube/index.ts";
import { AdmittedWrites, type LiveInstance, type Suspect } from "./admitted-writes.ts";
import { freshestInstances } from "./freshest-instances.ts";
import { defaultsFor } from "./mutate.ts";
import { grows, hasBudget, specUsage } from "./namespace-budget.ts";
import type { AdmissionLookups, LiveUsage } from "./lookups.ts";
import type { PlatformPolicy } from "./policy.ts";
import { WebhookRequestError, type WebhookHandler } from "./webhook-server.ts";
import {
  factsNeeded,
  invalidRules,
  oversizedValues,
  validateInstance,
  type AdmissionFacts,
  type AdmittedInstance,
  type NamespaceFacts,
  type Violation,
  type ViolationRule,
} from "./validate.ts";

/**
 * The webhook-server.ts routes: the request body (parsed JSON, or its text or bytes) → the AdmissionReview answered.
 */
export interface AdmissionHandlers {
  readonly validate: WebhookHandler;
  readonly mutate: WebhookHandler;
}

export interface AdmissionHandlerOptions {
  /**
   * How long the cluster lookups of one review may take together; below the webhook's timeoutSeconds, so the
   * apiserver gets a reason rather than a timeout. @default defaultLookupTimeoutMs
   */
  readonly lookupTimeoutMs?: number;
  /** This replica's admitted writes, counted in budgets while its cache may lag them. @default a new one on `clock` */
  readonly admitted?: AdmittedWrites;
  /** Times the lookups' deadline and each review's logged duration (monotonicMs). @default realClock */
  readonly clock?: Clock;
}

/** Lookups of one review: a few GETs against a responsive apiserver take milliseconds. */
export const defaultLookupTimeoutMs = 4_000;

const reviewApiVersion = "admission.k8s.io/v1";

/** The part of an AdmissionReview request the handlers read. */
interface ReviewRequest {
  readonly uid: string;
  readonly operation: string;
  readonly namespace: string;
  readonly name: string;
  readonly subResource: string | undefined;
  readonly dryRun: boolean;
  readonly object: Record<string, unknown> | undefined;
  readonly oldObject: Record<string, unknown> | undefined;
}

/** Thrown by a lookup that failed or ran out of time: the review is answered 500 with this message. */
class LookupError extends Error {}

/** A judgement: its verdict, and the remembered writes that alone refuse it (to ask the apiserver about). */
interface Judged {
  readonly violations: Violation[];
  readonly suspects: readonly Suspect[];
  /** A budget refuses on the cache: what to read afresh to judge again. */
  readonly refresh?: Refresh;
  /** What to remember if it is admitted and stored. */
  readonly record?: AdmittedInstance;
}

/** What a fresh read of a namespace takes: its claims too where storage grows. */
interface Refresh {
  readonly claims: boolean;
}

/** A namespace as the apiserver has it, read after `listedAfter` (monotonicMs). */
interface FreshUsage extends LiveUsage {
  readonly listedAfter: number;
  readonly namespace: NamespaceFacts | undefined;
}

/** The rules a remembered write can decide. */
const budgetRules: ReadonlySet<ViolationRule> = new Set([
  "namespaceMaxInstances",
  "namespaceMaxReplicas",
  "namespaceMaxStorage",
]);

/** True when `a` and `b` refuse for the same budgets. */
function sameBudgetRefusals(a: readonly Violation[], b: readonly Violation[]): boolean {
  const rules = (violations: readonly Violation[]) =>
    violations
      .filter((violation) => budgetRules.has(violation.rule))
      .map((violation) => violation.rule)
      .join();
  return rules(a) === rules(b);
}

/** Whether a budget refuses, or a budget label that cannot be read (which a fresh reading may find fixed). */
function refusesByBudget(violations: readonly Violation[]): boolean {
  return violations.some((violation) => budgetRules.has(violation.rule) || violation.rule === "namespaceBudgetLabel");
}

/** What of a live instance a budget reads. */
function liveUsage(instance: MyAppInstanceObject | undefined): LiveInstance {
  if (instance === undefined) return undefined;
  const { replicas, storage } = instance.spec ?? {};
  return { replicas, ...(storage !== undefined ? { storage } : {}) };
}

/** The validating and mutating handlers for `policy`, reading the cluster through `lookups`. */
export function admissionHandlers(
  policy: PlatformPolicy,
  lookups: AdmissionLookups,
  logger: Pick<Logger, "debug" | "info" | "warn">,
  options: AdmissionHandlerOptions = {},
): AdmissionHandlers {
  const timeoutMs = options.lookupTimeoutMs ?? defaultLookupTimeoutMs;
  const clock = options.clock ?? realClock;
  const admitted = options.admitted ?? new AdmittedWrites({ clock });

  /** Runs `read`; a failure or a timeout becomes a LookupError naming `what`. */
  async function look<T>(what: string, read: () => Promise<T>, deadline: number): Promise<T> {
    // A review out of time makes no more reads: its answer is given, nobody would wait for theirs.
    if (clock.monotonicMs() >= deadline) throw new LookupError(`reading ${what}: no time left of ${timeoutMs} ms`);
    let timer: TimerHandle | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(
        () => reject(new LookupError(`reading ${what} took longer than ${timeoutMs} ms`)),
        deadline - clock.monotonicMs(),
      );
    });
    try {
      return await Promise.race([read(), timeout]);
    } catch (error) {
      if (error instanceof LookupError) throw error;
      throw new LookupError(`reading ${what} failed: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    } finally {
      if (timer) clock.clearTimeout(timer);
    }
  }

  /**
   * The verdict on `request`; an admitted write that will be stored is remembered, and judgements of one
   * namespace run one at a time, so budgets count what was just admitted (admitted-writes.ts). A refusal by a
   * budget is judged again on the namespace as the apiserver has it (the cache may lag a shrink or a deletion the
   * tenant just made), read once per review and shared with the reviews waiting for the same (fresh-reads.ts); one
   * that only remembered writes the list cannot show yet make is judged again once the apiserver has been asked for
   * them. The reads and waits are outside the namespace's turn: they hold no other write of the namespace back.
   */
  async function judgeCounting(request: ReviewRequest): Promise<Violation[]> {
    const deadline = clock.monotonicMs() + timeoutMs;
    const attempt = (fresh?: FreshUsage) => {
      const run = async () => {
        const judged = await judge(request, deadline, fresh);
        // An admitted growth is remembered (judge's `record`: shrinks are not), counted while the cache may lag it.
        if (!request.dryRun && judged.violations.length === 0 && judged.record) admitted.record(judged.record);
        return judged;
      };
      return request.dryRun ? run() : admitted.serially(request.namespace, run);
    };
    // Each judgement again counts every write remembered then, those admitted by other judgements meanwhile too:
    // a burst refused by one forged write, judged again once it is forgotten, must not pass the budget together.
    // A forger's fresh writes are suspects of the next round, until the deadline leaves the refusal standing.
    let judged = await attempt();
    let fresh: FreshUsage | undefined;
    while (clock.monotonicMs() < deadline) {
      try {
        if (judged.refresh && fresh === undefined) fresh = await readFresh(request.namespace, judged.refresh, deadline);
        else if (judged.suspects.length > 0) await confirmSuspects(judged.suspects, deadline);
        else break;
        judged = await attempt(fresh);
      } catch (error) {
        // The apiserver could not say (or not in time): the refusal stands, on the safe side.
        if (error instanceof LookupError) return judged.violations;
        throw error;
      }
    }
    return judged.violations;
  }

  /** The namespace's labels and usage as the apiserver has them, read after this call (see judgeCounting). */
  async function readFresh(namespace: string, refresh: Refresh, deadline: number): Promise<FreshUsage> {
    const listedAfter = clock.monotonicMs();
    const [facts, usage] = await Promise.all([
      look(`Namespace ${namespace}`, () => lookups.freshNamespace(namespace), deadline),
      look(
        `the instances${refresh.claims ? " and volume claims" : ""} of namespace ${namespace}`,
        () => lookups.liveUsageIn(namespace, refresh.claims),
        deadline,
      ),
    ]);
    return { listedAfter, namespace: facts, ...usage };
  }

  /**
   * Waits until every suspect has had the time a real write takes to be stored, then asks the apiserver for each
   * (admitted-writes.ts forgets the ones it does not have); all within the review's deadline.
   */
  async function confirmSuspects(suspects: readonly Suspect[], deadline: number): Promise<void> {
    const settled = Math.max(...suspects.map((suspect) => suspect.settledAt));
    const wait = Math.min(settled, deadline) - clock.monotonicMs();
    if (wait > 0) await new Promise<void>((resolve) => clock.setTimeout(resolve, wait));
    await Promise.all(
      suspects.map((suspect) =>
        admitted.confirm(suspect, () =>
          look(
            `MyAppInstance ${suspect.namespace}/${suspect.name}`,
            async () => liveUsage(await lookups.liveInstance(suspect.namespace, suspect.name)),
            deadline,
          ),
        ),
      ),
    );
  }

  /** One judgement, on the cache, or on `fresh` (the namespace as the apiserver has it) once a budget refused. */
  async function judge(request: ReviewRequest, deadline: number, fresh?: FreshUsage): Promise<Judged> {
    // The last write recorded before this judgement: its suspects are among those.
    const judgedAsOf = admitted.recorded;
    const verdict = (violations: Violation[]): Judged => ({ violations, suspects: [] });
    const oversized = valuesFirst(request, policy);
    if (oversized.length > 0) return verdict(oversized);
    const subject = await subjectOf(request, lookups, (what, read) => look(what, read, deadline));
    if (subject === undefined) return verdict([]);
    if ("issues" in subject) return verdict(subject.issues);
    const { instance, old } = subject;
    const needed = factsNeeded(instance, old, policy);
    const { namespace } = instance;
    const [namespaceFacts, storageClass, defaultStorageClass, chartConfigMap] = await Promise.all([
      fresh
        ? fresh.namespace
        : needed.namespace
          ? look(`Namespace ${namespace}`, () => lookups.namespace(namespace), deadline)
          : undefined,
      needed.storageClass === undefined
        ? undefined
        : look(`StorageClass ${needed.storageClass}`, () => lookups.storageClass(needed.storageClass ?? ""), deadline),
      needed.defaultStorageClass
        ? look("the default StorageClass", () => lookups.defaultStorageClass(), deadline)
        : undefined,
      needed.chartConfigMap === undefined
        ? undefined
        : look(
            `ConfigMap ${namespace}/${needed.chartConfigMap}`,
            () => lookups.chartConfigMap(namespace, needed.chartConfigMap ?? ""),
            deadline,
          ),
    ]);
    const counted = needed.instances && hasBudget(namespaceFacts, policy);
    const [cached, claims] = await Promise.all([
      counted ? look(`the instances of namespace ${namespace}`, () => lookups.instancesIn(namespace), deadline) : [],
      fresh
        ? fresh.claims
        : counted && needed.claims
          ? look(`the volume claims of namespace ${namespace}`, () => lookups.claimsIn(namespace), deadline)
          : [],
    ]);
    // Judged afresh: the list, with what the cache has shown since it began (another replica's writes, say).
    const listed = fresh ? freshestInstances(fresh.instances, fresh.resourceVersion, cached) : cached;
    const listedAfter = fresh?.listedAfter;
    const facts: AdmissionFacts = {
      namespace: namespaceFacts,
      instances: counted ? admitted.merge(namespace, listed, { listedAfter }) : [],
      claims,
      storageClass,
      defaultStorageClass,
      chartConfigMap,
    };
    const violations = validateInstance(instance, old, facts, policy);
    // Remembered only where a budget counts it (so in a namespace that exists: names made up by the thousand would
    // otherwise fill the memory), and only a write that takes more than before: a shrink counts once the cache or a
    // fresh list shows it (a growth remembered before it that alone refuses a write is asked for, as a suspect), so
    // a forged shrink can neither take memory nor replace a real growth.
    const record =
      counted && namespaceFacts !== undefined && grows(specUsage(instance.spec), old && specUsage(old.spec))
        ? instance
        : undefined;
    if (!counted || !refusesByBudget(violations)) return { ...verdict(violations), ...(record ? { record } : {}) };
    if (!fresh) {
      // Read afresh where the namespace exists (the apiserver sends no review for one that does not): its labels
      // too, as a budget just raised or a label just fixed may admit what the reused reading refuses.
      const refresh = namespaceFacts !== undefined;
      return { ...verdict(violations), ...(refresh ? { refresh: { claims: needed.claims } } : {}) };
    }
    // Would the list and the confirmed writes alone have admitted it? Then the unconfirmed ones refuse it: suspects.
    const withoutUnconfirmed = validateInstance(
      instance,
      old,
      { ...facts, instances: admitted.merge(namespace, listed, { unconfirmed: false, listedAfter }) },
      policy,
    );
    const suspects = sameBudgetRefusals(withoutUnconfirmed, violations)
      ? []
      : admitted.suspects(namespace, listed, judgedAsOf, listedAfter);
    return { violations, suspects, ...(record ? { record } : {}) };
  }

  async function defaults(request: ReviewRequest): Promise<unknown[]> {
    const { object, oldObject } = request;
    // Only the instance itself is defaulted; a Scale or a status write is not.
    if (object === undefined || request.subResource !== undefined) return [];
    const spec = object["spec"];
    // Fast path: the field is set, so no namespace needs reading.
    if (typeof spec !== "object" || spec === null || "podSecurityLevel" in spec) return [];
    const deadline = clock.monotonicMs() + timeoutMs;
    // Read afresh, not reused: a default is stored in the instance, so a label changed a moment before (by the same
    // `pulumi up`, say) must give it.
    const namespace = await look(
      `Namespace ${request.namespace}`,
      () => lookups.freshNamespace(request.namespace),
      deadline,
    );
    return defaultsFor(object, namespace?.labels, request.operation === "UPDATE" ? (oldObject ?? {}) : undefined);
  }

  return {
    async validate(body) {
      const started = clock.monotonicMs();
      const request = requestOf(body);
      try {
        const violations = judges(request) ? await judgeCounting(request) : [];
        const response = violations.length === 0 ? { uid: request.uid, allowed: true } : denial(request, violations);
        log(logger, "validate", request, clock.monotonicMs() - started, violations);
        return review(response);
      } catch (error) {
        return internalError(request, error, logger);
      }
    },
    async mutate(body) {
      const started = clock.monotonicMs();
      const request = requestOf(body);
      try {
        const patch = judges(request) ? await defaults(request) : [];
        log(logger, "mutate", request, clock.monotonicMs() - started, [], patch.length);
        return review(
          patch.length === 0
            ? { uid: request.uid, allowed: true }
            : {
                uid: request.uid,
                allowed: true,
                patchType: "JSONPatch",
                patch: Buffer.from(JSON.stringify(patch)).toString("base64"),
              },
        );
      } catch (error) {
        return internalError(request, error, logger);
      }
    },
  };
}

/**
 * `spec.values` over the platform's size, judged before anything else: a 2.7 MB request of values is refused for its
 * size in one `JSON.stringify`, where the schema would walk each of its keys first. A stored spec this operator
 * cannot read counts as no values, as everywhere in the review.
 */
function valuesFirst(request: ReviewRequest, policy: PlatformPolicy): Violation[] {
  if (request.subResource !== undefined) return [];
  const valuesOf = (object: Record<string, unknown> | undefined | null) => {
    const spec = object?.["spec"];
    return typeof spec === "object" && spec !== null ? (spec as { values?: unknown }).values : undefined;
  };
  const old = request.operation === "UPDATE" ? { values: valuesOf(request.oldObject) } : undefined;
  return oversizedValues(valuesOf(request.object), old, policy);
}

/** CREATE and UPDATE of the instance or its scale are judged; DELETE, CONNECT and status writes pass. */
function judges(request: ReviewRequest): boolean {
  if (request.operation !== "CREATE" && request.operation !== "UPDATE") return false;
  return request.subResource === undefined || request.subResource === "scale";
}

type Subject =
  | { readonly instance: AdmittedInstance; readonly old: AdmittedInstance | undefined }
  | { readonly issues: Violation[] };

/**
 * The instance and its stored version as the verdict reads them. A write to the scale subresource carries a
 * Scale (autoscaling/v1), so the instance is read and given the Scale's replicas: `kubectl scale` is judged as
 * an edit of spec.replicas. Undefined when there is nothing to judge (the scaled instance is gone).
 */
async function subjectOf(
  request: ReviewRequest,
  lookups: AdmissionLookups,
  look: <T>(what: string, read: () => Promise<T>) => Promise<T>,
): Promise<Subject | undefined> {
  const { namespace } = request;
  if (request.subResource === "scale") {
    // An instance the cache lacks may just have been created: the apiserver is asked before nothing is judged.
    const stored = await look(
      `MyAppInstance ${namespace}/${request.name}`,
      async () => (await lookups.instance(namespace, request.name)) ?? lookups.liveInstance(namespace, request.name),
    );
    const verdict = validateSpec(stored?.spec);
    if (!stored || !verdict.ok) return undefined;
    const spec = verdict.spec;
    const replicas = scaleReplicas(request.object) ?? spec.replicas;
    const oldReplicas = scaleReplicas(request.oldObject) ?? spec.replicas;
    return {
      instance: { name: request.name, namespace, spec: { ...spec, replicas } },
      old: { name: request.name, namespace, spec: { ...spec, replicas: oldReplicas } },
    };
  }
  const name = metadataName(request.object) ?? request.name;
  const verdict = validateSpec(request.object?.["spec"]);
  if (!verdict.ok) {
    return {
      issues: verdict.issues.map((issue) => ({
        field: issue.path,
        rule: "schema" as const,
        message: `${issue.path}: ${issue.message}`,
      })),
    };
  }
  const oldVerdict = request.operation === "UPDATE" ? validateSpec(request.oldObject?.["spec"]) : undefined;
  return {
    instance: { name, namespace, spec: verdict.spec },
    // A stored spec this operator cannot read is judged as absent: every rule applies, as on a create.
    old: oldVerdict?.ok ? { name, namespace, spec: oldVerdict.spec } : undefined,
  };
}

function scaleReplicas(scale: Record<string, unknown> | undefined): number | undefined {
  const spec = scale?.["spec"];
  const replicas = typeof spec === "object" && spec !== null ? (spec as { replicas?: unknown }).replicas : undefined;
  return typeof replicas === "number" && Number.isSafeInteger(replicas) ? replicas : undefined;
}

function metadataName(object: Record<string, unknown> | undefined): string | undefined {
  const metadata = object?.["metadata"];
  const name = typeof metadata === "object" && metadata !== null ? (metadata as { name?: unknown }).name : undefined;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/** The request of an AdmissionReview v1; a WebhookRequestError (400) saying why the body is not one. */
function requestOf(body: unknown): ReviewRequest {
  const parsed = parseReview(body);
  if (typeof parsed === "string") throw new WebhookRequestError(400, `not an AdmissionReview: ${parsed}`);
  return parsed;
}

/** The request of an AdmissionReview v1, or why the body is not one. */
function parseReview(body: unknown): ReviewRequest | string {
  let value: unknown = body;
  if (typeof body === "string" || body instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof body === "string" ? body : Buffer.from(body).toString("utf8"));
    } catch {
      return "the body is not JSON";
    }
  }
  if (!isRecord(value)) return "the body is not a JSON object";
  if (value["apiVersion"] !== reviewApiVersion || value["kind"] !== "AdmissionReview") {
    return `the body is not an AdmissionReview ${reviewApiVersion} (apiVersion ${JSON.stringify(value["apiVersion"])}, kind ${JSON.stringify(value["kind"])})`;
  }
  const request = value["request"];
  if (!isRecord(request)) return "the AdmissionReview has no request";
  const { uid, operation, namespace, name, subResource, dryRun, object, oldObject } = request;
  if (typeof uid !== "string" || uid === "") return "the AdmissionReview's request has no uid";
  if (typeof operation !== "string") return "the AdmissionReview's request has no operation";
  if (object !== undefined && object !== null && !isRecord(object)) return "request.object is not an object";
  if (oldObject !== undefined && oldObject !== null && !isRecord(oldObject))
    return "request.oldObject is not an object";
  return {
    uid,
    operation,
    namespace: typeof namespace === "string" ? namespace : "",
    name: typeof name === "string" ? name : "",
    subResource: typeof subResource === "string" && subResource !== "" ? subResource : undefined,
    dryRun: dryRun === true,
    object: isRecord(object) ? object : undefined,
    oldObject: isRecord(oldObject) ? oldObject : undefined,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A denial lists at most this many violations, each in at most this many characters: the text quotes tenants. */
const maxListedViolations = 20;
const maxViolationLength = 1024;

/**
 * The denial for `violations`: 403 Forbidden, or 422 Invalid when only references or the schema fail. Its size is
 * bounded whatever the request held: the apiserver keeps it in memory and returns it, and kubectl prints it.
 */
export function denial(request: Pick<ReviewRequest, "uid" | "name">, all: readonly Violation[]) {
  const invalid = all.every((violation) => invalidRules.has(violation.rule));
  const violations = all.slice(0, maxListedViolations).map((violation) => ({
    ...violation,
    message:
      violation.message.length <= maxViolationLength
        ? violation.message
        : `${violation.message.slice(0, maxViolationLength)} … (${violation.message.length - maxViolationLength} more characters)`,
  }));
  const more = all.length - violations.length;
  return {
    uid: request.uid,
    allowed: false,
    status: {
      status: "Failure",
      code: invalid ? 422 : 403,
      reason: invalid ? "Invalid" : "Forbidden",
      message: [...violations.map((violation) => violation.message), ...(more > 0 ? [`… and ${more} more`] : [])].join(
        "\n",
      ),
      details: {
        name: request.name,
        group,
        kind,
        // A cause's field is printed before its message (kubectl: `spec.replicas: ...`): not twice.
        causes: violations.map((violation) => ({
          reason: causeReason(violation),
          field: violation.field,
          message: violation.message.startsWith(`${violation.field}: `)
            ? violation.message.slice(violation.field.length + 2)
            : violation.message,
        })),
      },
    },
  };
}

function causeReason(violation: Violation): string {
  if (violation.rule === "storageClassExists" || violation.rule === "chartConfigMap") return "FieldValueNotFound";
  return violation.rule === "schema" ? "FieldValueInvalid" : "FieldValueForbidden";
}

/** The AdmissionReview that carries `response`. */
function review(response: Record<string, unknown>) {
  return { apiVersion: reviewApiVersion, kind: "AdmissionReview", response };
}

function internalError(request: ReviewRequest, error: unknown, logger: Pick<Logger, "warn">) {
  const message =
    error instanceof LookupError
      ? `the platform's admission webhook could not judge this instance: ${error.message}; try again`
      : `the platform's admission webhook failed: ${error instanceof Error ? error.message : String(error)}; try again`;
  logger.warn(
    { uid: request.uid, namespace: request.namespace, name: request.name, err: error },
    "admission: could not judge",
  );
  return review({
    uid: request.uid,
    allowed: false,
    status: { status: "Failure", code: 500, reason: "InternalError", message },
  });
}

function log(
  logger: Pick<Logger, "debug" | "info">,
  webhook: "validate" | "mutate",
  request: ReviewRequest,
  durationMs: number,
  violations: readonly Violation[],
  patched = 0,
): void {
  const line = {
    webhook,
    uid: request.uid,
    operation: request.operation,
    namespace: request.namespace,
    name: request.name,
    ...(request.subResource ? { subResource: request.subResource } : {}),
    dryRun: request.dryRun,
    durationMs: Math.round(durationMs),
    ...(violations.length > 0 ? { denied: violations.map((violation) => violation.rule) } : {}),
    ...(patched > 0 ? { patched } : {}),
  };
  // Denials are what a platform owner looks for; admitted requests are the steady stream.
  if (violations.length > 0) logger.info(line, "admission: denied");
  else logger.debug(line, "admission: reviewed");
}
