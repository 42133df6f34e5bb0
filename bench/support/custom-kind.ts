/**
 * Create, merge-patch, list and follow one custom kind the product does not know (kube/resources.ts is a static
 * table of the kinds the operator touches): a peer's custom resource, such as the Helm operator's PodinfoApp. Admin
 * credentials of KUBECONFIG, one undici keep-alive pool, as KubeClient reaches the apiserver, so creates through
 * this cost what creates through KubeClient cost.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, request, type Dispatcher } from "undici";
import type { KubeObject, WatchEvent } from "../../kube/index.ts";
import { readUpstream } from "./counting-proxy.ts";

/** An answer that is not 2xx, with its status for the caller. */
export class CustomKindError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export class CustomKindClient<T extends KubeObject> {
  private readonly origin: string;
  private readonly dispatcher: Dispatcher;
  private readonly headers: Record<string, string>;
  private readonly collection: string;

  /** `collection`: the kind's namespaced collection path with NS for the namespace. */
  constructor(kubeconfig: string, collection: string) {
    const upstream = readUpstream(kubeconfig);
    this.origin = upstream.url.origin;
    this.collection = collection;
    this.dispatcher = new Agent({
      connections: 16,
      connect: {
        ...(upstream.ca ? { ca: upstream.ca } : {}),
        ...(upstream.cert ? { cert: upstream.cert } : {}),
        ...(upstream.key ? { key: upstream.key } : {}),
      },
    });
    this.headers = upstream.token ? { authorization: `Bearer ${upstream.token}` } : {};
  }

  private path(namespace: string, name?: string): string {
    return `${this.collection.replace("NS", encodeURIComponent(namespace))}${name ? `/${encodeURIComponent(name)}` : ""}`;
  }

  private async send<R>(method: Dispatcher.HttpMethod, path: string, body?: unknown, contentType?: string): Promise<R> {
    const response = await request(`${this.origin}${path}`, {
      method,
      dispatcher: this.dispatcher,
      headers: { ...this.headers, accept: "application/json", "content-type": contentType ?? "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new CustomKindError(response.statusCode, `${method} ${path}: ${text}`);
    return JSON.parse(text) as R;
  }

  create(namespace: string, object: T): Promise<T> {
    return this.send("POST", this.path(namespace), object);
  }

  mergePatch(namespace: string, name: string, patch: unknown): Promise<T> {
    return this.send("PATCH", this.path(namespace, name), patch, "application/merge-patch+json");
  }

  list(namespace: string): Promise<{ metadata: { resourceVersion?: string }; items: T[] }> {
    return this.send("GET", this.path(namespace));
  }

  /**
   * Every ADDED/MODIFIED/DELETED event from `resourceVersion` on, resuming where it left off when the server ends
   * a request, until `signal` aborts; rejects on an error event (a 410 would leave a hole in the record).
   */
  async follow(
    namespace: string,
    resourceVersion: string,
    signal: AbortSignal,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<void> {
    let from = resourceVersion;
    while (!signal.aborted) {
      const query = `?watch=true&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${from}`;
      try {
        const response = await request(`${this.origin}${this.path(namespace)}${query}`, {
          dispatcher: this.dispatcher,
          headers: this.headers,
          signal,
          bodyTimeout: 0,
        });
        if (response.statusCode >= 300)
          throw new CustomKindError(response.statusCode, `watch: ${await response.body.text()}`);
        const decoder = new TextDecoder();
        let partial = "";
        for await (const chunk of response.body) {
          // One JSON event per line; the last piece of a chunk may be the start of the next event.
          const pieces = (partial + decoder.decode(chunk as Uint8Array, { stream: true })).split("\n");
          partial = pieces.pop() ?? "";
          for (const piece of pieces.filter((text) => text.trim() !== "")) {
            const event = JSON.parse(piece) as WatchEvent<T>;
            if ((event.type as string) === "ERROR") throw new CustomKindError(500, `watch: ${piece}`);
            from = event.object.metadata.resourceVersion ?? from;
            if (event.type !== "BOOKMARK") onEvent(event);
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof CustomKindError) throw error;
        await sleep(100); // the connection dropped: resume from the last event
      }
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
