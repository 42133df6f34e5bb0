/**
 * Large rendered documents are parsed on a worker thread, not on the event loop every tenant, webhook and lease
 * renewal is served from. js-yaml cannot be interrupted, and what a document costs it follows its nodes, not its
 * bytes: 2.9 MiB of flow items (`[1,1,…]`) took 0.6–1.6 s and ~230 MiB of heap, where a 3 MiB string takes 20 ms.
 * On the thread a document is bounded in both: a deadline, and a heap of {@link parseThreadHeapMiB} (which
 * components/chart-limits.ts leaves room for in the container); past either the thread is ended. The heap is
 * watched from here, not only set as the thread's `resourceLimits`: a `--max-old-space-size` in NODE_OPTIONS, as
 * the container runs with, is process-wide and overrides them (nodejs/node#43991).
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

/**
 * The heap of the admission webhook's thread that parses large reviews (operator/admission/review-parse-thread.ts),
 * in MiB: a review the apiserver sends is at most ~3 MiB of JSON (object and oldObject within etcd's limit), tens
 * of MiB parsed. Here, beside this thread's, so the component leaves room for both (components/deployment.ts).
 */
export const reviewParseThreadHeapMiB = 64;

/** How long one document may take to parse, in ms. */
export const parseDeadlineMs = 20_000;

/** The thread ends after this long without a document, giving its memory back. */
const idleMs = 30_000;

/** How often the thread's heap is looked at while it parses: what it may grow past the bound in between. */
const heapWatchMs = 20;

/** What the thread answers: the parse, or why the document is refused. */
export type ThreadParse = { readonly value: unknown; readonly expandedBytes: number } | { readonly refusal: string };

/**
 * A request to the thread: a document and what its aliases may expand to (render-yaml.ts's budget), or a chart's
 * values schema whose references to check (schema-references.ts; the answer's value is the problem, or null).
 */
export type ParseRequest =
  { readonly text: string; readonly budget: number } | { readonly text: string; readonly schemaFile: string };

interface Job {
  readonly request: ParseRequest;
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
  #heapWatch: NodeJS.Timeout | undefined;
  /** The most heap the thread was seen using for the document being parsed. */
  #seenUsed = 0;
  #idle: NodeJS.Timeout | undefined;

  constructor(options: ParseThreadOptions = {}) {
    this.#deadlineMs = options.deadlineMs ?? parseDeadlineMs;
    this.#heapMiB = options.heapMiB ?? parseThreadHeapMiB;
    this.#workerUrl = options.workerUrl ?? parseWorkerUrl();
  }

  /** Parses `text` on the thread; resolves with the value or the refusal, rejects only on a fault of the thread. */
  parse(text: string, budget: number): Promise<ThreadParse> {
    return this.run({ text, budget });
  }

  /** Runs `request` on the thread: the answer, or the refusal; rejects only on a fault of the thread. */
  run(request: ParseRequest): Promise<ThreadParse> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, resolve, reject });
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
    let worker: Worker;
    try {
      worker = this.#worker ??= this.#start();
    } catch (error) {
      this.#settle((failed) => failed.reject(error instanceof Error ? error : new Error(String(error))));
      return;
    }
    worker.ref();
    this.#deadline = setTimeout(
      () => void this.#end({ refusal: `it took longer than ${this.#deadlineMs / 1000} s to parse` }),
      this.#deadlineMs,
    );
    this.#heapWatch = setInterval(() => {
      worker.getHeapStatistics().then(
        ({ used_heap_size: used }) => {
          if (this.#current !== job || this.#worker !== worker) return;
          this.#seenUsed = Math.max(this.#seenUsed, used);
          if (used > this.#heapMiB * 1024 * 1024) void this.#end(this.#outOfMemory());
        },
        () => undefined, // the thread ended meanwhile
      );
    }, heapWatchMs).unref();
    worker.postMessage(job.request);
  }

  #outOfMemory(): ThreadParse {
    return { refusal: `it needs more than ${this.#heapMiB} MiB of memory to parse` };
  }

  #start(): Worker {
    const worker = new Worker(this.#workerUrl, {
      name: parseWorkerName,
      // None of the process's own flags: the thread needs none, and some are not allowed on a thread (an entry
      // point's --input-type, say), which would fail every large document.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: this.#heapMiB, maxYoungGenerationSizeMb: 8 },
    });
    // Only the thread parsing now speaks for the document parsing now: an ended thread's late answer or error
    // (one queued as its deadline struck) would otherwise settle the next document, perhaps another tenant's.
    worker.on("message", (parse: ThreadParse | { readonly fault: string }) => {
      if (this.#worker !== worker) return;
      if ("fault" in parse) this.#settle((job) => job.reject(new Error(parse.fault)));
      else this.#settle((job) => job.resolve(parse));
    });
    // An answer the event loop cannot read back (a structured clone nested past its stack) refuses the document
    // instead of leaving it to the deadline.
    worker.on("messageerror", (error: Error) => {
      if (this.#worker !== worker) return;
      void this.#end({ refusal: `its parsed form cannot be passed back: ${error.message}` });
    });
    worker.on("error", (error: Error & { code?: string }) => {
      if (this.#worker !== worker) return;
      void this.#end(error.code === "ERR_WORKER_OUT_OF_MEMORY" ? this.#outOfMemory() : error);
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

  /**
   * Settles the document being parsed, if any, and starts the next. A thread seen holding a quarter of its heap is
   * ended too: what the heap watch sees includes garbage, which a process-wide --max-old-space-size lets the
   * thread keep, so the next document (perhaps another tenant's) starts on a fresh heap rather than on its remains.
   */
  #settle(settle: (job: Job) => void): void {
    const job = this.#current;
    if (job === undefined) return;
    clearTimeout(this.#deadline);
    clearInterval(this.#heapWatch);
    this.#current = undefined;
    const heavy = this.#seenUsed > (this.#heapMiB * 1024 * 1024) / 4;
    this.#seenUsed = 0;
    settle(job);
    const worker = this.#worker;
    if (heavy && worker) {
      this.#worker = undefined;
      void worker.terminate();
    }
    this.#next();
  }
}

let shared: ParseThread | undefined;

/** The process's parsing thread, started on first use. */
export function parseOnThread(text: string, budget: number): Promise<ThreadParse> {
  return (shared ??= new ParseThread()).parse(text, budget);
}

/** What is wrong with a large values schema (schema-references.ts), checked on the process's parsing thread. */
export async function schemaProblemOnThread(text: string, schemaFile: string): Promise<string | undefined> {
  const answer = await (shared ??= new ParseThread()).run({ text, schemaFile });
  if ("refusal" in answer) return `${schemaFile} cannot be checked: ${answer.refusal}`;
  return typeof answer.value === "string" ? answer.value : undefined;
}
