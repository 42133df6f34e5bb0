/** A scripted ObjectWatchClient: the test pushes watch events, ends streams and fails them, on its own schedule. */
import type { WatchEvent } from "../../../../kube/index.ts";
import type { ObjectWatchClient, Snapshot } from "../../../../provider/waiting/follow.ts";
import type { LiveInstance } from "../../../../provider/manifest.ts";

type Item = { kind: "event"; event: WatchEvent<LiveInstance> } | { kind: "end" } | { kind: "error"; error: unknown };

export class FakeInstanceClient implements ObjectWatchClient<LiveInstance> {
  /** What `snapshot()` returns next. */
  current: Snapshot<LiveInstance>;
  /** The resourceVersion of every watch started, in order. */
  readonly watchesFrom: string[] = [];
  snapshots = 0;
  /** Watches whose signal aborted. */
  aborted = 0;
  private readonly queue: Item[] = [];
  private wake: (() => void) | undefined;

  constructor(current: Snapshot<LiveInstance>) {
    this.current = current;
  }

  async snapshot(): Promise<Snapshot<LiveInstance>> {
    this.snapshots++;
    return this.current;
  }

  async *watch(resourceVersion: string, signal: AbortSignal): AsyncGenerator<WatchEvent<LiveInstance>> {
    this.watchesFrom.push(resourceVersion);
    const onAbort = () => this.wake?.();
    signal.addEventListener("abort", onAbort);
    try {
      for (;;) {
        if (signal.aborted) {
          this.aborted++;
          return;
        }
        const item = this.queue.shift();
        if (!item) {
          await new Promise<void>((resolve) => (this.wake = resolve));
          continue;
        }
        if (item.kind === "end") return;
        if (item.kind === "error") throw item.error;
        yield item.event;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Delivers an event to the open (or next) watch. */
  emit(type: WatchEvent<LiveInstance>["type"], object: LiveInstance): void {
    this.push({ kind: "event", event: { type, object } });
  }

  /** Ends the open watch as the apiserver does at timeoutSeconds. */
  end(): void {
    this.push({ kind: "end" });
  }

  /** Makes the open watch throw. */
  fail(error: unknown): void {
    this.push({ kind: "error", error });
  }

  private push(item: Item): void {
    this.queue.push(item);
    this.wake?.();
  }
}

/** A MyAppInstance at `resourceVersion` with `readyReplicas`, Ready when all 3 are. */
export function instanceAt(resourceVersion: string, readyReplicas: number, generation = 2): LiveInstance {
  const ready = readyReplicas === 3;
  return {
    apiVersion: "example.com/v1",
    kind: "MyAppInstance",
    metadata: { name: "web", namespace: "default", uid: "u-1", resourceVersion, generation },
    spec: { replicas: 3, image: "nginx:1.28" },
    status: {
      observedGeneration: generation,
      readyReplicas,
      conditions: [
        {
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "Available" : "RollingOut",
          message: "",
          observedGeneration: generation,
          lastTransitionTime: "2030-01-01T00:00:00Z",
        },
      ],
    },
  };
}
