/**
 * An in-memory ClusterClient that records every request, for unit tests of the reconcile logic. It behaves like the
 * apiserver where the reconciler depends on it (uid, generation, resourceVersion preconditions, finalizers
 * holding a deletion, server defaults, canonical quantities, an immutable StatefulSet claim template) and nowhere
 * else. Controllers are simulated explicitly by the tests (`rollOut`, `provisionClaims`): nothing moves by itself.
 */
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import {
  apiVersion as instanceApiVersion,
  kind as instanceKind,
  type MyAppInstanceStatus,
} from "../../../api/index.ts";
import { ConflictError, InvalidError, NotFoundError, type KubeObject } from "../../../kube/index.ts";
import type {
  ApplyConfiguration,
  ClusterClient,
  DeleteOptions,
  EventRecord,
  JsonPatchOperation,
  ObjectKey,
} from "../../../operator/reconcile/index.ts";

/** One request the reconciler sent; reads are counted, not recorded. */
export interface RecordedRequest {
  readonly verb: "apply" | "create" | "jsonPatch" | "applyStatus" | "setFinalizers" | "delete" | "event";
  readonly kind: string;
  readonly name: string;
  readonly body?: unknown;
  readonly options?: DeleteOptions;
}

type Verb = RecordedRequest["verb"] | "find" | "list";

export class FakeCluster implements ClusterClient {
  readonly requests: RecordedRequest[] = [];
  readonly events: EventRecord[] = [];
  reads = 0;
  /** The reads, as "find Kind/name" and "list Kind" lines in order (for "this reconcile never looked at X"). */
  readonly readLines: string[] = [];
  /** The finds asked to bypass the operator's cache (`live`), as "find Kind/name" lines in order. */
  readonly liveReadLines: string[] = [];
  /**
   * What the operator's cache would hold of namespaced objects, when set: a find that is not `live` sees only the
   * objects it accepts, as the informers see only objects with the operator's label. Unset: finds see everything.
   */
  cacheHolds: ((object: KubeObject) => boolean) | undefined;
  /**
   * What the operator's cache keeps of what a find that is not `live`, or a list by labels alone, returns, when set
   * (its transforms).
   */
  cacheKeeps: ((object: KubeObject) => KubeObject) | undefined;
  private readonly objects = new Map<string, KubeObject>();
  private readonly failures: { verb: Verb; kind?: string; error: Error }[] = [];
  private sequence = 0;

  // ---- the ClusterClient ----

  async find<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    options?: { readonly live?: boolean },
  ): Promise<T | undefined> {
    this.reads += 1;
    this.readLines.push(`find ${kind}/${name}`);
    if (options?.live) this.liveReadLines.push(`find ${kind}/${name}`);
    this.failIfScripted("find", kind);
    const object = this.objects.get(keyOf(apiVersion, kind, namespace, name));
    if (object && !options?.live && namespace !== undefined && this.cacheHolds?.(object) === false) return undefined;
    if (!object) return undefined;
    return (options?.live || !this.cacheKeeps ? clone(object) : this.cacheKeeps(clone(object))) as T;
  }

  async list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    labelSelector: string,
    fieldSelector = "",
  ): Promise<T[]> {
    this.reads += 1;
    this.readLines.push(`list ${kind}`);
    this.failIfScripted("list", kind);
    const wanted = labelSelector
      .split(",")
      .filter(Boolean)
      .map((term) => term.split("=") as [string, string]);
    return (
      [...this.objects.values()]
        // A cluster-scoped kind (StorageClass) has no namespace and is listed with "".
        .filter((o) => o.apiVersion === apiVersion && o.kind === kind && (o.metadata.namespace ?? "") === namespace)
        .filter((o) => wanted.every(([key, value]) => o.metadata.labels?.[key] === value))
        .filter((o) =>
          fieldSelector
            .split(",")
            .filter(Boolean)
            .every((term) => fieldMatches(o, term)),
        )
        .map((o) => (fieldSelector || !this.cacheKeeps ? clone(o) : this.cacheKeeps(clone(o))) as T)
    );
  }

  async apply<T extends KubeObject>(configuration: ApplyConfiguration): Promise<T> {
    const { apiVersion, kind, metadata } = configuration;
    this.requests.push({ verb: "apply", kind, name: metadata.name, body: clone(configuration) });
    this.failIfScripted("apply", kind);
    const key = keyOf(apiVersion, kind, metadata.namespace, metadata.name);
    const existing = this.objects.get(key);
    const incoming = canonicalQuantities(clone(configuration) as unknown as KubeObject);
    if (!existing) {
      const created = withServerDefaults(incoming);
      created.metadata = {
        ...created.metadata,
        uid: this.uid(),
        generation: 1,
        resourceVersion: this.rv(),
        creationTimestamp: this.now(),
      };
      this.objects.set(key, created);
      return clone(created) as T;
    }
    // A resourceVersion in the configuration is a precondition, as for any patch.
    if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== existing.metadata.resourceVersion) {
      throw new ConflictError(409, "the object has been modified; please apply your changes to the latest version");
    }
    delete incoming.metadata.resourceVersion;
    const merged = merge(existing, incoming) as KubeObject;
    if (kind === "StatefulSet") {
      const before = (existing["spec"] as { volumeClaimTemplates?: unknown }).volumeClaimTemplates;
      const after = (merged["spec"] as { volumeClaimTemplates?: unknown }).volumeClaimTemplates;
      if (!isDeepStrictEqual(before, after)) {
        throw new InvalidError(
          422,
          `StatefulSet.apps "${metadata.name}" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`,
        );
      }
    }
    const specChanged = !isDeepStrictEqual(existing["spec"], merged["spec"]);
    merged.metadata = {
      ...merged.metadata,
      generation: (existing.metadata.generation ?? 1) + (specChanged ? 1 : 0),
      resourceVersion: isDeepStrictEqual(existing, merged) ? existing.metadata.resourceVersion : this.rv(),
    };
    this.objects.set(key, merged);
    return clone(merged) as T;
  }

  async create<T extends KubeObject>(configuration: ApplyConfiguration): Promise<T> {
    const { apiVersion, kind, metadata } = configuration;
    this.requests.push({ verb: "create", kind, name: metadata.name, body: clone(configuration) });
    this.failIfScripted("create", kind);
    const key = keyOf(apiVersion, kind, metadata.namespace, metadata.name);
    if (this.objects.has(key)) {
      throw new ConflictError(409, `${kind.toLowerCase()}s "${metadata.name}" already exists`, "AlreadyExists");
    }
    const created = withServerDefaults(canonicalQuantities(clone(configuration) as unknown as KubeObject));
    created.metadata = {
      ...created.metadata,
      uid: this.uid(),
      generation: 1,
      resourceVersion: this.rv(),
      creationTimestamp: this.now(),
    };
    this.objects.set(key, created);
    return clone(created) as T;
  }

  /**
   * RFC 6902 as the apiserver applies it: all operations or none (422 when a `test` fails or a path is missing),
   * `add` on an object member replacing it; generation moves when the spec changes.
   */
  async jsonPatch<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string,
    operations: readonly JsonPatchOperation[],
  ): Promise<T> {
    this.requests.push({ verb: "jsonPatch", kind, name, body: clone(operations) });
    this.failIfScripted("jsonPatch", kind);
    const key = keyOf(apiVersion, kind, namespace, name);
    const object = this.objects.get(key);
    if (!object) throw new NotFoundError(404, `${kind.toLowerCase()}s "${name}" not found`);
    const patched = clone(object);
    for (const operation of operations) {
      const segments = operation.path.split("/").slice(1);
      const last = segments.pop() ?? "";
      let parent: unknown = patched;
      for (const segment of segments) parent = (parent as Record<string, unknown> | undefined)?.[segment];
      const container = parent as Record<string, unknown> | unknown[] | undefined;
      const missing = () => new InvalidError(422, `the server rejected our request: ${operation.path} does not exist`);
      if (typeof container !== "object" || container === null) throw missing();
      if (operation.op === "test") {
        if (!isDeepStrictEqual((container as Record<string, unknown>)[last], operation.value)) {
          throw new InvalidError(422, `testing value ${operation.path} failed: test operation failed`);
        }
      } else if (Array.isArray(container)) {
        const index = last === "-" ? container.length : Number(last);
        if (!Number.isInteger(index) || index < 0 || index > container.length) throw missing();
        if (operation.op !== "add" && index >= container.length) throw missing();
        if (operation.op === "remove") container.splice(index, 1);
        else container.splice(index, operation.op === "add" ? 0 : 1, clone(operation.value));
      } else {
        const record = container as Record<string, unknown>;
        if (operation.op !== "add" && !(last in record)) throw missing();
        if (operation.op === "remove") delete record[last];
        else record[last] = clone(operation.value);
      }
    }
    if (operations.every((operation) => operation.op === "test")) return clone(object) as T;
    const specChanged = !isDeepStrictEqual(object["spec"], patched["spec"]);
    patched.metadata = {
      ...patched.metadata,
      generation: (object.metadata.generation ?? 1) + (specChanged ? 1 : 0),
      resourceVersion: this.rv(),
    };
    this.objects.set(key, patched);
    return clone(patched) as T;
  }

  async applyStatus(instance: ObjectKey, status: MyAppInstanceStatus): Promise<void> {
    this.requests.push({ verb: "applyStatus", kind: instanceKind, name: instance.name, body: clone(status) });
    this.failIfScripted("applyStatus", instanceKind);
    const object = this.objects.get(keyOf(instanceApiVersion, instanceKind, instance.namespace, instance.name));
    if (!object) throw new NotFoundError(404, `myappinstances "${instance.name}" not found`);
    // We are the only manager of status, so an apply sets it whole.
    object["status"] = clone(status);
    object.metadata.resourceVersion = this.rv();
  }

  async setFinalizers(
    instance: ObjectKey & { resourceVersion: string; finalizers: readonly string[] },
    finalizers: readonly string[],
  ): Promise<void> {
    this.requests.push({ verb: "setFinalizers", kind: instanceKind, name: instance.name, body: [...finalizers] });
    this.failIfScripted("setFinalizers", instanceKind);
    const key = keyOf(instanceApiVersion, instanceKind, instance.namespace, instance.name);
    const object = this.objects.get(key);
    if (!object) throw new NotFoundError(404, `myappinstances "${instance.name}" not found`);
    if (object.metadata.resourceVersion !== instance.resourceVersion) {
      throw new ConflictError(409, "the object has been modified; please apply your changes to the latest version");
    }
    // The change is made from the list as read at that version (only the change is sent): it must be that list.
    assert.deepEqual(object.metadata.finalizers ?? [], instance.finalizers, "finalizers as stored at the version");
    object.metadata.finalizers = [...finalizers];
    object.metadata.resourceVersion = this.rv();
    if (object.metadata.deletionTimestamp && finalizers.length === 0) this.objects.delete(key);
  }

  async delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string,
    options: DeleteOptions,
  ): Promise<boolean> {
    this.requests.push({ verb: "delete", kind, name, options });
    this.failIfScripted("delete", kind);
    const key = keyOf(apiVersion, kind, namespace, name);
    const object = this.objects.get(key);
    if (!object) return false;
    if (options.preconditionUid && options.preconditionUid !== object.metadata.uid) {
      throw new ConflictError(409, `Precondition failed: UID in precondition: ${options.preconditionUid}`);
    }
    if ((object.metadata.finalizers ?? []).length > 0) object.metadata.deletionTimestamp = "2030-01-01T00:00:00Z";
    else this.objects.delete(key);
    return true;
  }

  async emitEvent(event: EventRecord): Promise<void> {
    this.requests.push({ verb: "event", kind: "Event", name: event.reason });
    this.events.push(event);
  }

  // ---- what tests see and script ----

  /** The writes (not events), as "verb Kind/name" lines in order. */
  writeLines(): string[] {
    return this.requests.filter((r) => r.verb !== "event").map((r) => `${r.verb} ${r.kind}/${r.name}`);
  }

  /** Every request including events, so "zero writes" means zero of anything. */
  allWrites(): RecordedRequest[] {
    return [...this.requests];
  }

  /** Forgets recorded requests and events (between steps of a test). */
  reset(): void {
    this.requests.length = 0;
    this.events.length = 0;
    this.reads = 0;
    this.readLines.length = 0;
    this.liveReadLines.length = 0;
  }

  /** Makes the next `verb` (on `kind`, if given) throw `error`. */
  failNext(verb: Verb, error: Error, kind?: string): void {
    this.failures.push({ verb, error, ...(kind ? { kind } : {}) });
  }

  get<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace = "default",
  ): T | undefined {
    const object = this.objects.get(keyOf(apiVersion, kind, namespace, name));
    return object ? (clone(object) as T) : undefined;
  }

  /** Puts an object as it is (seeding a StorageClass, a foreign namesake, ...), with uid and resourceVersion. */
  put(object: KubeObject): KubeObject {
    const stored = clone(object);
    stored.metadata = {
      uid: this.uid(),
      generation: 1,
      creationTimestamp: this.now(),
      ...stored.metadata,
      resourceVersion: this.rv(),
    };
    this.objects.set(keyOf(stored.apiVersion, stored.kind, stored.metadata.namespace, stored.metadata.name), stored);
    return clone(stored);
  }

  /** Removes an object without the reconciler's involvement (a person's `kubectl delete`). */
  remove(apiVersion: string, kind: string, name: string, namespace = "default"): void {
    this.objects.delete(keyOf(apiVersion, kind, namespace, name));
  }

  /** Edits an object as a person would (`kubectl edit`): generation moves when the spec changes. */
  edit(
    apiVersion: string,
    kind: string,
    name: string,
    change: (object: KubeObject) => void,
    namespace = "default",
  ): void {
    const object = this.objects.get(keyOf(apiVersion, kind, namespace, name));
    if (!object) throw new Error(`fake: no ${kind} ${namespace}/${name} to edit`);
    const before = clone(object["spec"]);
    change(object);
    if (!isDeepStrictEqual(before, object["spec"])) object.metadata.generation = (object.metadata.generation ?? 1) + 1;
    object.metadata.resourceVersion = this.rv();
  }

  /** A MyAppInstance as a user creates it. */
  createInstance(name: string, spec: Record<string, unknown>, namespace = "default"): KubeObject {
    return this.put({ apiVersion: instanceApiVersion, kind: instanceKind, metadata: { name, namespace }, spec });
  }

  instance(name: string, namespace = "default"): (KubeObject & { status?: MyAppInstanceStatus }) | undefined {
    return this.get(instanceApiVersion, instanceKind, name, namespace);
  }

  /** `kubectl delete myappinstance`: with finalizers, only a deletionTimestamp; without, gone. */
  deleteInstance(name: string, namespace = "default"): void {
    if ((this.instance(name, namespace)?.metadata.finalizers ?? []).length === 0) {
      this.remove(instanceApiVersion, instanceKind, name, namespace);
      return;
    }
    this.edit(
      instanceApiVersion,
      instanceKind,
      name,
      (o) => void (o.metadata.deletionTimestamp = "2030-01-01T00:00:00Z"),
      namespace,
    );
  }

  /** The workload controller at work: `updated` pods run the current template, `ready` of all are ready. */
  progress(
    kind: "Deployment" | "StatefulSet",
    name: string,
    counts: { updated: number; ready: number; replicas?: number },
    namespace = "default",
  ): void {
    this.edit(
      "apps/v1",
      kind,
      name,
      (o) => {
        const generation = o.metadata.generation ?? 1;
        const status: Record<string, unknown> = {
          observedGeneration: generation,
          replicas: counts.replicas ?? (o["spec"] as { replicas: number }).replicas,
          updatedReplicas: counts.updated,
          readyReplicas: counts.ready,
          availableReplicas: counts.ready,
        };
        if (kind === "StatefulSet") {
          const desired = (o["spec"] as { replicas: number }).replicas;
          status["updateRevision"] = `${name}-rev${generation}`;
          status["currentRevision"] =
            counts.updated >= desired ? `${name}-rev${generation}` : `${name}-rev${generation - 1}`;
        }
        o["status"] = status;
      },
      namespace,
    );
  }

  /** The workload controller finished: every replica runs the current template and is ready. */
  rollOut(kind: "Deployment" | "StatefulSet", name: string, namespace = "default"): void {
    const replicas = (this.get("apps/v1", kind, name, namespace)?.["spec"] as { replicas: number }).replicas;
    this.progress(kind, name, { updated: replicas, ready: replicas }, namespace);
  }

  /**
   * The StatefulSet controller and a provisioner: one bound claim per replica from the claim template. Claims
   * that wait (`pendingClaims`) are bound as they are.
   */
  provisionClaims(statefulSet: string, storageClassName: string, namespace = "default"): void {
    this.makeClaims(statefulSet, namespace, (claim) => {
      const existing = this.get("v1", "PersistentVolumeClaim", claim.name, namespace);
      const spec = {
        accessModes: ["ReadWriteOnce"],
        storageClassName,
        resources: { requests: { storage: claim.storage } },
      };
      const status = { phase: "Bound", capacity: { storage: claim.storage } };
      if (!existing) {
        this.put({
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: claim.name, namespace, labels: claim.labels },
          spec,
          status,
        });
      } else if ((existing["status"] as { phase?: string } | undefined)?.phase !== "Bound") {
        this.edit("v1", "PersistentVolumeClaim", claim.name, (o) => void (o["status"] = status), namespace);
      }
    });
  }

  /**
   * The StatefulSet controller without a provisioner: one Pending claim per replica, with the template's class
   * (none when the template names none and no default class is there to fill it in).
   */
  pendingClaims(statefulSet: string, namespace = "default"): void {
    this.makeClaims(statefulSet, namespace, (claim) => {
      if (this.get("v1", "PersistentVolumeClaim", claim.name, namespace)) return;
      this.put({
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: claim.name, namespace, labels: claim.labels },
        spec: {
          accessModes: ["ReadWriteOnce"],
          ...(claim.storageClassName !== undefined ? { storageClassName: claim.storageClassName } : {}),
          resources: { requests: { storage: claim.storage } },
        },
        status: { phase: "Pending" },
      });
    });
  }

  /** Calls `make` for each claim the StatefulSet's templates and replica count call for. */
  private makeClaims(
    statefulSet: string,
    namespace: string,
    make: (claim: { name: string; labels: Record<string, string>; storage: string; storageClassName?: string }) => void,
  ): void {
    const sts = this.get("apps/v1", "StatefulSet", statefulSet, namespace);
    if (!sts) throw new Error(`fake: no StatefulSet ${statefulSet}`);
    const spec = sts["spec"] as {
      replicas: number;
      volumeClaimTemplates: {
        metadata: { name: string; labels: Record<string, string> };
        spec: { storageClassName?: string; resources: { requests: { storage: string } } };
      }[];
    };
    for (const template of spec.volumeClaimTemplates) {
      for (let ordinal = 0; ordinal < spec.replicas; ordinal++) {
        make({
          name: `${template.metadata.name}-${statefulSet}-${ordinal}`,
          labels: { ...template.metadata.labels },
          storage: template.spec.resources.requests.storage,
          ...(template.spec.storageClassName !== undefined ? { storageClassName: template.spec.storageClassName } : {}),
        });
      }
    }
  }

  private failIfScripted(verb: Verb, kind: string): void {
    const index = this.failures.findIndex((f) => f.verb === verb && (f.kind === undefined || f.kind === kind));
    if (index < 0) return;
    const [failure] = this.failures.splice(index, 1);
    if (failure) throw failure.error;
  }

  private uid(): string {
    this.sequence += 1;
    return `uid-${this.sequence}`;
  }

  /** A creation time as the apiserver stamps it (whole seconds): a second later for each object created. */
  private now(): string {
    this.sequence += 1;
    return new Date(Date.UTC(2026, 0, 1) + this.sequence * 1000).toISOString().replace(".000Z", "Z");
  }

  private rv(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}

function keyOf(apiVersion: string, kind: string, namespace: string | undefined, name: string | undefined): string {
  return `${apiVersion}|${kind}|${namespace ?? ""}|${name ?? ""}`;
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** What the apiserver adds on create: the fields a naive compare would see as drift. */
function withServerDefaults(object: KubeObject): KubeObject {
  const spec = object["spec"] as Record<string, unknown> | undefined;
  if (!spec) return object;
  const podSpec = (spec["template"] as { spec?: Record<string, unknown> } | undefined)?.spec;
  if (podSpec) {
    podSpec["restartPolicy"] = "Always";
    podSpec["dnsPolicy"] = "ClusterFirst";
    podSpec["terminationGracePeriodSeconds"] = 30;
    for (const container of (podSpec["containers"] as Record<string, unknown>[] | undefined) ?? []) {
      container["imagePullPolicy"] = "IfNotPresent";
      container["terminationMessagePath"] = "/dev/termination-log";
      const probe = container["readinessProbe"] as Record<string, unknown> | undefined;
      if (probe)
        Object.assign(probe, { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
    }
  }
  if (object.kind === "Deployment") {
    Object.assign(spec, {
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    });
  }
  if (object.kind === "StatefulSet") {
    Object.assign(spec, {
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
    });
    for (const template of (spec["volumeClaimTemplates"] as Record<string, unknown>[] | undefined) ?? []) {
      Object.assign(template, { apiVersion: "v1", kind: "PersistentVolumeClaim", status: { phase: "Pending" } });
      (template["spec"] as Record<string, unknown>)["volumeMode"] = "Filesystem";
    }
  }
  if (object.kind === "Service") {
    // A headless Service keeps clusterIP "None".
    const clusterIP = spec["clusterIP"] === "None" ? "None" : "10.96.0.42";
    Object.assign(spec, {
      clusterIP,
      clusterIPs: [clusterIP],
      sessionAffinity: "None",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      internalTrafficPolicy: "Cluster",
    });
  }
  return object;
}

/** The apiserver stores quantities in canonical form: "1024Mi" comes back as "1Gi". */
function canonicalQuantities<T>(value: T): T {
  if (Array.isArray(value)) return value.map(canonicalQuantities) as T;
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = key === "storage" && item === "1024Mi" ? "1Gi" : canonicalQuantities(item);
  }
  return out as T;
}

/** Server-side apply's merge, as far as these tests need: maps merge, keyed lists merge by key, others replace. */
function merge(live: unknown, applied: unknown): unknown {
  if (Array.isArray(applied)) {
    if (!Array.isArray(live)) return clone(applied);
    const keyed = applied.every((item) => listKey(item) !== undefined);
    if (!keyed) return clone(applied);
    const result = live.map((item) => {
      const match = applied.find((a) => listKey(a) === listKey(item));
      return match === undefined ? item : merge(item, match);
    });
    for (const item of applied) if (!live.some((l) => listKey(l) === listKey(item))) result.push(clone(item));
    return result;
  }
  if (typeof applied === "object" && applied !== null) {
    const base =
      typeof live === "object" && live !== null && !Array.isArray(live) ? { ...(live as Record<string, unknown>) } : {};
    for (const [key, value] of Object.entries(applied)) base[key] = merge(base[key], value);
    return base;
  }
  return applied;
}

function listKey(item: unknown): string | undefined {
  if (typeof item !== "object" || item === null) return undefined;
  const record = item as Record<string, unknown>;
  if (typeof record["uid"] === "string") return record["uid"];
  if (typeof record["name"] === "string") return record["name"];
  const metadata = record["metadata"] as Record<string, unknown> | undefined;
  return typeof metadata?.["name"] === "string" ? metadata["name"] : undefined;
}

/** A field selector term `a.b=value` against an object's fields (what the apiserver's field selectors read). */
function fieldMatches(object: KubeObject, term: string): boolean {
  const [path = "", value] = term.split("=");
  let current: unknown = object;
  for (const part of path.split(".")) {
    current = typeof current === "object" && current !== null ? (current as Record<string, unknown>)[part] : undefined;
  }
  return String(current) === value;
}
