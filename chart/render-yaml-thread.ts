/**
 * Large rendered documents are parsed on a worker thread, not on the event loop every tenant, webhook and lease
 * renewal is served from. js-yaml cannot be interrupted, and what a document costs it follows its nodes, not its
 * bytes: 2.9 MiB of flow items (`[1,1,…]`) took 0.6–1.6 s and ~230 MiB of heap, where a 3 MiB string takes 20 ms.
 * On the thread a document is bounded in both: a deadline (the thread is ended) and a heap of its own
 * ({@link parseThreadHeapMiB}, which components/node-heap.ts leaves room for in the container).
 *
 * One thread, started on the first large document and ended after {@link idleMs} without one, parses one document
 * at a time; the value comes back by structured clone, which keeps what js-yaml made (own `__proto__` keys, shared
 * aliases, non-finite numbers) and costs the event loop ~10–80 ms for a 3 MiB document.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/** The worker's module, beside this one under the same extension (.ts in the tree, .js built, .mjs bundled). */
export const parseWorkerName = "render-yaml-worker";

/** The old-generation heap the parsing thread may use, in MiB: a storable document needs far less. */
export const parseThreadHeapMiB = 128;

/** How long one document may take to parse, in ms. */
export const parseDeadlineMs = 20_000;

/** The thread ends after this long without a document, giving its memory back. */
const idleMs = 30_000;

/** What the thread answers: the parse, or why the document is refused. */
export type ThreadParse = { readonly value: unknown; readonly expandedBytes: number } | { readonly refusal: string };

/** A request to the thread: a document and what its aliases may expand to (render-yaml.ts's budget). */
export interface ParseRequest {
  readonly text: string;
  readonly budget: number;
}

interface Job extends ParseRequest {
  readonly resolve: (parse: ThreadParse) => void;
  readonly reject: (error: Error) => void;
}

/** Where the worker's module is: in the development tree, in tsc's output, or beside a bundle. */
export function parseWorkerUrl(moduleUrl: string = import.meta.url): URL {
  return new URL(`./${parseWorkerName}${path.extname(fileURLToPath(moduleUrl))}`, moduleUrl);
}

/** Options of {@link ParseThread}; tests shorten the deadline and the heap. */
export interface ParseThreadOptions {
  readonly deadlineMs?: number;
  readonly heapMiB?: number;
  readonly workerUrl?: URL;
}

/** One parsing thread and the documents waiting for it. */
export class ParseThread {
  readonly #deadlineMs: number;
  readonly #heapMiB: number;
  readonly #workerUrl: URL;
  readonly #queue: Job[] = [];
  #worker: Worker | undefined;
  #current: Job | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #idle: NodeJS.Timeout | undefined;

  constructor(options: ParseThreadOptions = {}) {
    this.#deadlineMs = options.deadlineMs ?? parseDeadlineMs;
    this.#heapMiB = options.heapMiB ?? parseThreadHeapMiB;
    this.#workerUrl = options.workerUrl ?? parseWorkerUrl();
  }

  /** Parses `text` on the thread; resolves with the value or the refusal, rejects only on a fault of the thread. */
  parse(text: string, budget: number): Promise<ThreadParse> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ text, budget, resolve, reject });
      this.#next();
    });
  }

  /** Ends the thread (documents waiting are refused). */
  async close(): Promise<void> {
    for (const job of this.#queue.splice(0)) job.resolve({ refusal: "the operator is stopping" });
    await this.#end({ refusal: "the operator is stopping" });
  }

  #next(): void {
    if (this.#current !== undefined) return;
    const job = this.#queue.shift();
    if (job === undefined) {
      this.#worker?.unref();
      this.#idle = setTimeout(() => void this.#end(), idleMs).unref();
      return;
    }
    clearTimeout(this.#idle);
    this.#current = job;
    const worker = (this.#worker ??= this.#start());
    worker.ref();
    this.#deadline = setTimeout(
      () => void this.#end({ refusal: `it took longer than ${this.#deadlineMs / 1000} s to parse` }),
      this.#deadlineMs,
    );
    worker.postMessage({ text: job.text, budget: job.budget } satisfies ParseRequest);
  }

  #start(): Worker {
    const worker = new Worker(this.#workerUrl, {
      name: parseWorkerName,
      resourceLimits: { maxOldGenerationSizeMb: this.#heapMiB, maxYoungGenerationSizeMb: 8 },
    });
    worker.on("message", (parse: ThreadParse | { readonly fault: string }) => {
      if ("fault" in parse) this.#settle((job) => job.reject(new Error(parse.fault)));
      else this.#settle((job) => job.resolve(parse));
    });
    worker.on("error", (error: Error & { code?: string }) => {
      if (error.code === "ERR_WORKER_OUT_OF_MEMORY") {
        void this.#end({ refusal: `it needs more than ${this.#heapMiB} MiB of memory to parse` });
      } else {
        void this.#end(error);
      }
    });
    worker.on("exit", (code) => {
      // A thread this class ended has already settled its document; one that stopped by itself has not.
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#settle((job) => job.reject(new Error(`the YAML parsing thread stopped (exit code ${code})`)));
    });
    return worker;
  }

  /** Ends the thread, settling the document it was parsing with `outcome`. */
  async #end(outcome?: ThreadParse | Error): Promise<void> {
    clearTimeout(this.#idle);
    const worker = this.#worker;
    this.#worker = undefined;
    if (outcome !== undefined) {
      this.#settle((job) => (outcome instanceof Error ? job.reject(outcome) : job.resolve(outcome)));
    }
    await worker?.terminate();
  }

  /** Settles the document being parsed, if any, and starts the next. */
  #settle(settle: (job: Job) => void): void {
    const job = this.#current;
    if (job === undefined) return;
    clearTimeout(this.#deadline);
    this.#current = undefined;
    settle(job);
    this.#next();
  }
}

let shared: ParseThread | undefined;

/** The process's parsing thread, started on first use. */
export function parseOnThread(text: string, budget: number): Promise<ThreadParse> {
  return (shared ??= new ParseThread()).parse(text, budget);
}
