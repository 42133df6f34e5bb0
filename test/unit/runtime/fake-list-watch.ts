/** A scripted list+watch client: the test decides what each list returns and feeds each watch its events. */
import type { KubeObject, ListOptions, ObjectList, WatchEvent, WatchOptions } from "../../../kube/client.ts";
import type { ListWatchClient } from "../../../operator/runtime/informer.ts";

type Item = { event: WatchEvent<KubeObject> } | { error: unknown } | { end: true };

/** One watch request in flight. */
export class FakeWatch {
  readonly options: WatchOptions;
  ended = false;
  /** The apiserver answered (200) as the stream started; false: the request waits for an answer. */
  private readonly answered: boolean;
  private readonly items: Item[] = [];
  private wake: (() => void) | undefined;

  constructor(options: WatchOptions, answered = true) {
    this.options = options;
    this.answered = answered;
  }

  send(type: WatchEvent<KubeObject>["type"], object: KubeObject): void {
    this.push({ event: { type, object } });
  }

  /** The server ends the stream cleanly (its timeoutSeconds). */
  close(): void {
    this.push({ end: true });
  }

  fail(error: unknown): void {
    this.push({ error });
  }

  async *stream(): AsyncGenerator<WatchEvent<KubeObject>> {
    const signal = this.options.signal;
    const onAbort = () => this.push({ end: true });
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (this.answered) this.options.onOpen?.();
      for (;;) {
        while (this.items.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
        const item = this.items.shift()!;
        if ("end" in item) return;
        if ("error" in item) throw item.error;
        yield item.event;
      }
    } finally {
      this.ended = true;
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private push(item: Item): void {
    this.items.push(item);
    this.wake?.();
    this.wake = undefined;
  }
}

export class FakeListWatch {
  /** Responses for the next list calls, in order: a list, or an error to throw. */
  readonly lists: (ObjectList<KubeObject> | Error)[] = [];
  readonly watches: FakeWatch[] = [];
  /** The options of every list call, in order. */
  readonly listOptions: ListOptions[] = [];
  listCalls = 0;
  /** Whether new watch requests get an answer (see FakeWatch). */
  answerWatches = true;
  /** Called with each new watch, e.g. to fail it at once. */
  onWatch: ((watch: FakeWatch) => void) | undefined;

  get lastWatch(): FakeWatch | undefined {
    return this.watches.at(-1);
  }

  readonly client: ListWatchClient = {
    listEach: (async (apiVersion: string, kind: string, options: ListOptions, each: (item: KubeObject) => unknown) => {
      this.listCalls++;
      this.listOptions.push(options);
      const next = this.lists.shift();
      if (!next) throw new Error("test bug: no list response scripted");
      if (next instanceof Error) throw next;
      const { metadata, items } = structuredClone(next);
      // As the real client: items get their apiVersion and kind, then each is what `each` makes of it.
      return { metadata, items: items.map((item) => each({ ...item, apiVersion, kind })) };
    }) as ListWatchClient["listEach"],
    watch: ((_apiVersion: string, _kind: string, options: WatchOptions = {}) => {
      const watch = new FakeWatch(options, this.answerWatches);
      this.watches.push(watch);
      this.onWatch?.(watch);
      return watch.stream();
    }) as ListWatchClient["watch"],
  };
}

/** A Deployment as a list item or event object. */
export function deployment(name: string, resourceVersion: string): KubeObject {
  return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: "ns", resourceVersion } };
}

export function listOf(resourceVersion: string, ...items: KubeObject[]): ObjectList<KubeObject> {
  // A real list response has no apiVersion/kind on its items.
  const bare = items.map((item) => {
    const body: Partial<KubeObject> = { ...item };
    delete body.apiVersion;
    delete body.kind;
    return body as KubeObject;
  });
  return { metadata: { resourceVersion }, items: bare };
}
