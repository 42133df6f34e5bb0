/**
 * The one Kubernetes client of this project: a narrow REST layer (client-node's typed APIs cannot send
 * fieldValidation, dry-run applies of subresources, or bookmark-aware watches) over one keep-alive connection pool
 * per client (kube/transport.ts), shared by every request and watch. Credentials are read per request
 * (kube/credentials.ts), so rotating tokens never rebuild the pool; a 401 re-reads them and retries once.
 * Every error leaves as one of kube/errors.ts.
 */
import type { Dispatcher } from "undici";
import type { KubeConfig } from "./config.ts";
import { realClock } from "./clock.ts";
import { Credentials } from "./credentials.ts";
import { ApiError, apiErrorFrom, NotFoundError, TransportError, type StatusBody } from "./errors.ts";
import { LineSplitter } from "./line-stream.ts";
import { ListSplitter } from "./list-stream.ts";
import { resourcePath, resourceType, type ResourceType } from "./resources.ts";
import { connectionPool } from "./transport.ts";

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectList<T> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

export type WriteVerb = "create" | "apply" | "patch" | "update" | "delete";

export interface ClientOptions {
  /** Called once per write request that reached the apiserver (dry runs excluded), for metrics. */
  readonly onWrite?: (verb: WriteVerb, kind: string) => void;
  /** Gives up on a request (not a watch) that has not completed after this long. @default 60_000 */
  readonly requestTimeoutMs?: number;
  /** Kinds beyond kube/resources.ts's table, e.g. a benchmark peer's custom resource. */
  readonly resources?: readonly ResourceType[];
}

export interface ApplyOptions {
  readonly fieldManager: string;
  readonly force?: boolean;
  readonly dryRun?: boolean;
  readonly subresource?: "status" | "scale";
}

export interface ListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  /** A page token from the previous page's `metadata.continue`. */
  readonly continue?: string;
  /** "0": any version, served from the apiserver's watch cache; unset: a consistent (quorum) read. */
  readonly resourceVersion?: string;
  /** How `resourceVersion` is matched: NotOlderThan (the default) or Exact. */
  readonly resourceVersionMatch?: "NotOlderThan" | "Exact";
}

export interface WatchOptions extends Omit<ListOptions, "continue" | "resourceVersionMatch"> {
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
  readonly signal?: AbortSignal;
  /**
   * Called once the apiserver has accepted the watch (its 200 arrived), before any event: a quiet resource sends
   * none for minutes, and this is how a caller tells a connected watch from one still waiting for an answer.
   */
  readonly onOpen?: () => void;
}

type Query = Record<string, string | number | boolean | undefined>;

/** Asks for an object's metadata alone; a server that cannot say it so sends the whole object (still JSON). */
const partialObjectMetadataAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/** Attempts for a request the apiserver throttles with 429 + Retry-After (client-go retries up to 10). */
const maxThrottleRetries = 5;

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

interface SendOptions {
  readonly body?: unknown;
  readonly contentType?: string;
  readonly query?: Query;
  readonly signal?: AbortSignal | undefined;
  /** A watch: no request timeout, the caller's idle watchdog decides. */
  readonly stream?: boolean;
  /** The Accept header. @default "application/json" */
  readonly accept?: string;
}

export class KubeClient {
  readonly config: KubeConfig;
  /** The apiserver's base URL, without a trailing slash. */
  readonly server: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly pool: Dispatcher & { close(): Promise<void> };
  private readonly credentials: Credentials;
  private readonly onWrite: ClientOptions["onWrite"];
  private readonly requestTimeoutMs: number;
  private readonly extraResources: readonly ResourceType[];

  constructor(config: KubeConfig, options: ClientOptions = {}) {
    this.config = config;
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    this.server = cluster.server.replace(/\/$/, "");
    const url = new URL(this.server);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/$/, "");
    this.pool = connectionPool(cluster, config.getCurrentUser());
    this.credentials = new Credentials(config.getCurrentUser());
    this.onWrite = options.onWrite;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.extraResources = options.resources ?? [];
  }

  /** The REST type of apiVersion+kind: the table's, or one of `options.resources`. */
  private typeOf(apiVersion: string, kind: string): ResourceType {
    return (
      this.extraResources.find((type) => type.apiVersion === apiVersion && type.kind === kind) ??
      resourceType(apiVersion, kind)
    );
  }

  /** Closes the connection pool (ends open watches). The client cannot be used afterwards. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }

  async get<T extends KubeObject>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T> {
    return this.request<T>("GET", resourcePath(this.typeOf(apiVersion, kind), namespace, name));
  }

  /** Like get, but undefined when the object does not exist. */
  async find<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    try {
      return await this.get<T>(apiVersion, kind, name, namespace);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * An object's metadata alone (a `PartialObjectMetadata`: no spec, data or status), or undefined when it does not
   * exist, served from the apiserver's watch cache (`resourceVersion=0`: no etcd read, at most a moment behind). For
   * a large object whose uid and resourceVersion are all a caller needs to know whether its copy is current.
   */
  async findMetadata(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<KubeObject | undefined> {
    try {
      return await this.request<KubeObject>("GET", resourcePath(this.typeOf(apiVersion, kind), namespace, name), {
        accept: partialObjectMetadataAccept,
        query: { resourceVersion: "0" },
      });
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  async list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    const type = this.typeOf(apiVersion, kind);
    const { namespace, ...query } = options;
    return this.request<ObjectList<T>>("GET", resourcePath(type, namespace), { query });
  }

  /**
   * A list read item by item as the response arrives (list-stream.ts), each item (with its apiVersion and kind set,
   * which list items lack) made into what `each` returns: memory holds one item's text and object at a time, and
   * then only what `each` keeps of it. `each` is also told the item's length in characters as it came. An item
   * longer than `limits.maxItemChars` is not parsed at all, only counted (`oversized`): for lists of objects whose
   * legitimate ones are small, where a long one is someone else's (a tenant's forged Event) and parsing it would
   * cost the time its length does. `limits.onItemText` is told the length of every item, parsed or not, first: what
   * it throws ends the read, as what `each` throws does (a budget of what a list may cost to read).
   */
  async listEach<T>(
    apiVersion: string,
    kind: string,
    options: ListOptions,
    each: (item: KubeObject, textLength: number) => T,
    limits: { readonly maxItemChars?: number; readonly onItemText?: (textLength: number) => void } = {},
  ): Promise<ObjectList<T> & { oversized: number }> {
    const type = this.typeOf(apiVersion, kind);
    const { namespace, ...query } = options;
    const response = await this.send("GET", resourcePath(type, namespace), { query });
    const items: T[] = [];
    const maxItemChars = limits.maxItemChars ?? Infinity;
    let oversized = 0;
    // What `each` throws (a caller's own limit) ends the read as it is, not as a broken list.
    let eachFailure: { error: unknown } | undefined;
    const splitter = new ListSplitter((text) => {
      try {
        limits.onItemText?.(text.length);
        if (text.length > maxItemChars) {
          oversized += 1;
          return;
        }
        const item = JSON.parse(text) as KubeObject;
        items.push(each({ ...item, apiVersion, kind }, text.length));
      } catch (error) {
        if (error instanceof SyntaxError) throw error;
        eachFailure = { error };
        throw error;
      }
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) splitter.push(decoder.decode(chunk as Uint8Array, { stream: true }));
      splitter.push(decoder.decode());
      const list = splitter.end() as { metadata?: ObjectList<T>["metadata"] };
      return { metadata: list.metadata ?? {}, items, oversized };
    } catch (error) {
      if (eachFailure && error === eachFailure.error) throw error;
      if (error instanceof SyntaxError) {
        throw new TransportError(0, `list ${type.plural}: ${error.message}`, "", [], { cause: error });
      }
      throw new TransportError(0, `list ${type.plural} interrupted: ${String(error)}`, "", [], { cause: error });
    } finally {
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  async create<T extends KubeObject>(object: T, options: { fieldManager?: string; dryRun?: boolean } = {}): Promise<T> {
    const type = this.typeOf(object.apiVersion, object.kind);
    return this.write<T>("create", type, "POST", resourcePath(type, object.metadata.namespace), {
      body: object,
      query: {
        fieldManager: options.fieldManager,
        dryRun: options.dryRun ? "All" : undefined,
        fieldValidation: "Strict",
      },
      dryRun: options.dryRun,
    });
  }

  /** Server-side apply: the object states every field this manager owns. */
  async apply<T extends KubeObject>(object: KubeObject, options: ApplyOptions): Promise<T> {
    const type = this.typeOf(object.apiVersion, object.kind);
    const path = resourcePath(type, object.metadata.namespace, object.metadata.name, options.subresource);
    return this.write<T>("apply", type, "PATCH", path, {
      body: object,
      contentType: "application/apply-patch+yaml",
      query: {
        fieldManager: options.fieldManager,
        force: options.force ?? true,
        dryRun: options.dryRun ? "All" : undefined,
        fieldValidation: "Strict",
      },
      dryRun: options.dryRun,
    });
  }

  /** JSON merge patch, for the few writes that must not take field ownership (e.g. removing our finalizer). */
  async mergePatch<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    subresource?: "status",
  ): Promise<T> {
    const type = this.typeOf(apiVersion, kind);
    return this.write<T>("patch", type, "PATCH", resourcePath(type, namespace, name, subresource), {
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  /** JSON patch (RFC 6902), e.g. a `test` on resourceVersion plus a change, for optimistic concurrency. */
  async jsonPatch<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace: string | undefined,
    operations: readonly unknown[],
  ): Promise<T> {
    const type = this.typeOf(apiVersion, kind);
    return this.write<T>("patch", type, "PATCH", resourcePath(type, namespace, name), {
      body: operations,
      contentType: "application/json-patch+json",
    });
  }

  async replace<T extends KubeObject>(object: T, options: { fieldManager?: string } = {}): Promise<T> {
    const type = this.typeOf(object.apiVersion, object.kind);
    const path = resourcePath(type, object.metadata.namespace, object.metadata.name);
    return this.write<T>("update", type, "PUT", path, { body: object, query: { fieldManager: options.fieldManager } });
  }

  /** Deletes; resolves false when it was already gone. */
  async delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    options: {
      propagationPolicy?: "Foreground" | "Background" | "Orphan";
      preconditionUid?: string;
      /** Deletes only this version: a ConflictError when the object changed since it was read. */
      preconditionResourceVersion?: string;
    } = {},
  ): Promise<boolean> {
    const type = this.typeOf(apiVersion, kind);
    const preconditions = {
      ...(options.preconditionUid ? { uid: options.preconditionUid } : {}),
      ...(options.preconditionResourceVersion ? { resourceVersion: options.preconditionResourceVersion } : {}),
    };
    const body = {
      kind: "DeleteOptions",
      apiVersion: "v1",
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(Object.keys(preconditions).length > 0 ? { preconditions } : {}),
    };
    try {
      await this.write("delete", type, "DELETE", resourcePath(type, namespace, name), { body });
      return true;
    } catch (error) {
      if (error instanceof NotFoundError) return false;
      throw error;
    }
  }

  /**
   * One watch request as an async stream of events. It ends when the server closes the stream (timeoutSeconds)
   * or the signal aborts; an ERROR event with code 410 throws GoneError so the caller relists.
   */
  async *watch<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    const type = this.typeOf(apiVersion, kind);
    const { namespace, signal, onOpen, ...query } = options;
    const response = await this.send("GET", resourcePath(type, namespace), {
      query: { ...query, watch: true },
      signal,
      stream: true,
    });
    onOpen?.();
    // Split as it arrives, in time linear in the bytes: a tenant's object may be a MiB or more (line-stream.ts).
    const lines = new LineSplitter();
    try {
      for await (const chunk of response.body) {
        for (const text of lines.push(chunk as Uint8Array)) {
          const line = text.trim();
          if (!line) continue;
          const event = JSON.parse(line) as WatchEvent<T>;
          if (event.type === "ERROR") {
            const status = event.object as unknown as StatusBody;
            throw apiErrorFrom(status.code ?? 500, status, "watch error");
          }
          yield event;
        }
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ApiError) throw error;
      throw new TransportError(0, `watch ${type.plural} interrupted: ${String(error)}`, "", [], { cause: error });
    } finally {
      // An abandoned stream (the consumer stopped early) must release its connection.
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  /** Raw POST of JSON to a path, e.g. a subresource such as `.../serviceaccounts/NAME/token`; the parsed answer. */
  async post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("POST", path, { body });
  }

  /**
   * Raw GET of a non-resource path such as /readyz, /version or /apis; `accept` asks for another representation
   * (aggregated discovery, for one).
   */
  async raw(path: string, options: { readonly accept?: string } = {}): Promise<string> {
    const response = await this.send("GET", path, options.accept ? { accept: options.accept } : {});
    return response.body.text();
  }

  private async write<T>(
    verb: WriteVerb,
    type: ResourceType,
    method: Method,
    path: string,
    options: { body?: unknown; contentType?: string; query?: Query; dryRun?: boolean | undefined },
  ): Promise<T> {
    const result = await this.request<T>(method, path, options);
    if (!options.dryRun) this.onWrite?.(verb, type.kind);
    return result;
  }

  private async request<T>(method: Method, path: string, options: SendOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    return (await response.body.json()) as T;
  }

  private async send(method: Method, path: string, options: SendOptions): Promise<Dispatcher.ResponseData> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) search.set(key, String(value));
    }
    const query = search.size > 0 ? `?${search.toString()}` : "";
    const headers: Record<string, string> = { accept: options.accept ?? "application/json" };
    if (options.body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const timeout = options.stream ? undefined : AbortSignal.timeout(this.requestTimeoutMs);
    const signals = [options.signal, timeout].filter((s) => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const deadline = timeout ? realClock.monotonicMs() + this.requestTimeoutMs : Infinity;
    let response: Dispatcher.ResponseData;
    let reauthenticated = false;
    // Like client-go: a 429 with Retry-After (apiserver overload, or a new resource's storage still
    // initializing) was not processed, so it is retried after the delay the server asks for, a few times.
    for (let attempt = 1; ; attempt++) {
      let authorization: string | undefined;
      try {
        authorization = await this.credentials.authorization();
      } catch (error) {
        throw new TransportError(0, `${method} ${path}: credentials: ${describe(error)}`, "", [], { cause: error });
      }
      try {
        response = await this.pool.request({
          origin: this.origin,
          path: `${this.basePath}${path}${query}`,
          method,
          headers: authorization ? { ...headers, authorization } : headers,
          body,
          signal,
          ...(options.stream ? { bodyTimeout: 0 } : {}),
        });
      } catch (error) {
        const reason = timeout?.aborted ? `no answer within ${this.requestTimeoutMs} ms` : describe(error);
        throw new TransportError(0, `${method} ${path}: ${reason}`, "", [], { cause: error });
      }
      if (response.statusCode === 401 && !reauthenticated) {
        // The token may have rotated under us (a projected ServiceAccount token, an expired exec credential).
        reauthenticated = true;
        this.credentials.invalidate();
        await response.body.dump();
        continue;
      }
      const retryAfter = Number(header(response, "retry-after"));
      if (response.statusCode !== 429 || !retryAfter || attempt >= maxThrottleRetries) break;
      // A wait the request's deadline would cut short, or leave the retry too little of, is not waited: the 429 is
      // the answer, not "no answer".
      const waitMs = Math.min(retryAfter, 10) * 1000;
      const retryMs = Math.min(1_000, this.requestTimeoutMs / 10);
      if (realClock.monotonicMs() + waitMs + retryMs >= deadline) break;
      await response.body.dump();
      await throttledWait(waitMs, options.signal);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    const text = await response.body.text();
    let status: StatusBody | undefined;
    try {
      status = JSON.parse(text) as StatusBody;
    } catch {
      status = { message: text.trim() };
    }
    throw apiErrorFrom(response.statusCode, status, `${method} ${path}: HTTP ${response.statusCode}`);
  }
}

function header(response: Dispatcher.ResponseData, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}

/**
 * Waits `ms` as a 429's Retry-After asks, or until `signal` aborts (a shutdown; the next attempt then fails at once
 * with it). The timer keeps the process alive, unlike the runtime's unref'd ones: in a short script this request
 * may be the only work left, and Node would end mid-request.
 */
function throttledWait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
