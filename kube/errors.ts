/**
 * Our own API error types, mapped from the HTTP status of a Kubernetes response (kopf's habit). Callers branch on
 * these classes; undici's errors never leave this layer (they become the `cause`).
 */

/** One field-level failure from a 422 Status (`details.causes`). */
export interface FieldCause {
  readonly field: string;
  readonly message: string;
  readonly reason?: string;
}

/** The parts of a metav1.Status we read. */
export interface StatusBody {
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: { readonly causes?: readonly { field?: string; message?: string; reason?: string }[] };
}

export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly causes: readonly FieldCause[];
  constructor(
    status: number,
    message: string,
    reason = "",
    causes: readonly FieldCause[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
    this.status = status;
    this.reason = reason;
    this.causes = causes;
  }
}
export class UnauthorizedError extends ApiError {}
/**
 * 403: the request was forbidden. As such, authorization's verdict (RBAC, or another authorizer): the caller lacks
 * a permission, which a rollout of roles may grant in a moment. {@link AdmissionDeniedError} is the other 403.
 */
export class ForbiddenError extends ApiError {}
/**
 * 403 from admission, not authorization: a ValidatingAdmissionPolicy, a webhook, PodSecurity, a ResourceQuota or
 * LimitRange refused this object. The caller was allowed to ask; the object itself is what was refused, so the
 * same request will be refused again until the object (or the policy) changes. Still a {@link ForbiddenError}.
 */
export class AdmissionDeniedError extends ForbiddenError {}
export class NotFoundError extends ApiError {}
export class ConflictError extends ApiError {}
/** 410: the resourceVersion a watch asked for is too old; relist. */
export class GoneError extends ApiError {}
/** 422 or 400: the object was rejected (schema, CEL, admission); `causes` name the fields. */
export class InvalidError extends ApiError {}
export class TooManyRequestsError extends ApiError {}
export class ServerError extends ApiError {}
/** The request never got an HTTP answer (connection refused, reset, timeout). */
export class TransportError extends ApiError {}

/** Maps an HTTP status and Status body to our error type. */
export function apiErrorFrom(status: number, body: StatusBody | undefined, fallback: string): ApiError {
  const message = body?.message || fallback;
  const reason = body?.reason ?? "";
  const causes = (body?.details?.causes ?? []).map((c) => ({
    field: c.field ?? "",
    message: c.message ?? "",
    ...(c.reason ? { reason: c.reason } : {}),
  }));
  const Type = isAllocatorFailure(status, causes)
    ? ServerError
    : isUntypedApply(status, message)
      ? InvalidError
      : status === 403 && isAdmissionDenial(body, causes)
        ? AdmissionDeniedError
        : errorTypeFor(status);
  return new Type(status, message, reason, causes);
}

/**
 * True for admission's 403, false for authorization's. Authorization (RBAC or any authorizer) words its 403 one
 * way, k8s.io/apiserver's `forbiddenMessage`: `... is forbidden: User "system:serviceaccount:ns:sa" cannot patch
 * resource "deployments" in API group "apps" in the namespace "ns"`, or `cannot get path "/metrics"`. An admission
 * plugin that checks a permission itself (OwnerReferencesPermissionEnforcement: `cannot set blockOwnerDeletion ...:
 * User "..." cannot update resource "myappinstances/finalizers" ...`) quotes the same words, and is as transient.
 * Every other 403 is admission's: `ValidatingAdmissionPolicy '...' with binding '...' denied request: ...`,
 * `admission webhook "..." denied the request: ...`, `exceeded quota: ...`, `violates PodSecurity "...": ...`; the
 * Status carries nothing else that tells them apart (reason Forbidden and the object's details for all).
 */
function isAdmissionDenial(body: StatusBody | undefined, causes: readonly FieldCause[]): boolean {
  // No Status at all (a proxy's bare 403) tells nothing: as authorization's, it is retried.
  if (!body?.message) return false;
  return !authorizationDenied.test(body.message) && !isNamespaceTerminating(causes);
}
const authorizationDenied = /\bUser "[^"]*" cannot [A-Za-z]+ (?:resource|path) "/;

/**
 * NamespaceLifecycle's 403 (`unable to create new content in namespace x because it is being terminated`, cause
 * NamespaceTerminating) says nothing against the object: the namespace, and the instance in it, are going away.
 */
function isNamespaceTerminating(causes: readonly FieldCause[]): boolean {
  return causes.some((cause) => cause.reason === "NamespaceTerminating");
}

/**
 * The apiserver answers a Service create with 422 on `spec.clusterIPs` ("failed to allocate IP: ...") when its IP
 * allocator fails for any reason but a full range, e.g. while etcd restarts (pkg/registry/core/service/storage/
 * alloc.go). Nothing in the request was wrong, so it is a server error worth retrying, not a rejection. A cause's
 * message is the field error's body, `Invalid value: [""]: failed to allocate IP: rpc error: ...`; a refused chosen
 * IP reads `failed to allocate IP 10.0.0.9: ...` and stays a rejection.
 */
function isAllocatorFailure(status: number, causes: readonly FieldCause[]): boolean {
  return (
    status === 422 &&
    causes.length > 0 &&
    causes.every((c) => c.field === "spec.clusterIPs" && allocatorFailed.test(c.message))
  );
}
const allocatorFailed = /^(?:Invalid value: .*?: )?failed to allocate IP: /;

/**
 * A server-side apply whose configuration does not fit the kind's schema (a chart rendering `data.x: true` in a
 * ConfigMap, a number where a string belongs) is answered with 500, `failed to create typed patch object (/v1,
 * Kind=ConfigMap): .data.x: expected string, got &value.valueUnstructured{Value:true}`, though nothing failed on the
 * server: the same request fails the same way every time, so it is the request's fault, a rejection, not retried.
 */
function isUntypedApply(status: number, message: string): boolean {
  return status === 500 && message.startsWith("failed to create typed patch object");
}

function errorTypeFor(status: number): typeof ApiError {
  if (status === 400 || status === 422) return InvalidError;
  if (status === 401) return UnauthorizedError;
  if (status === 403) return ForbiddenError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 410) return GoneError;
  if (status === 429) return TooManyRequestsError;
  if (status >= 500) return ServerError;
  return ApiError;
}

/** True for failures worth retrying with backoff: transport, throttling, server errors, conflicts. */
export function isTransient(error: unknown): boolean {
  return (
    error instanceof TransportError ||
    error instanceof TooManyRequestsError ||
    error instanceof ServerError ||
    error instanceof ConflictError
  );
}
