/**
 * Notes that cover several instances, said once and naming every instance they cover: `server-side dry-run
 * skipped for web (shop/web-095128ad), db (shop/db-5f0e1a2b): namespace shop does not exist yet; ...`.
 *
 * The engine checks one instance at a time and never says which is the last, so a note cannot wait for the
 * complete list: the first instance prints it at once (nothing is lost if the run ends there), and instances
 * that join it later print it again, naming all of them, once they stop coming for {@link settleMs}, or when the
 * process is told to end (the engine interrupts its plugins when it is done), whichever is first.
 */
import { realClock, type Clock, type TimerHandle } from "../kube/clock.ts";
import { stdoutLines, type LineWriter } from "./console.ts";

/** Instances that join a note within this long of each other are named by one line. */
export const settleMs = 500;

/** `a`, `a and b`, `a, b and c`: the instances a note covers, in the order they came. */
export function listSubjects(subjects: readonly string[]): string {
  if (subjects.length <= 1) return subjects.join("");
  return `${subjects.slice(0, -1).join(", ")} and ${subjects.at(-1)}`;
}

export interface NoteBoardOptions {
  /** @default stdout */
  readonly write?: LineWriter;
  /** @default the process clock */
  readonly clock?: Clock;
  /**
   * Calls `flush` when the process is about to end; returns how to stop doing so. Asked only while a line is
   * pending. @default none: tests flush by hand; see {@link flushOnShutdown}
   */
  readonly onShutdown?: (flush: () => void) => () => void;
}

interface Note {
  readonly render: (subjects: string) => string;
  readonly subjects: string[];
  printed: number;
}

/** The notes of one process, each keyed by what it says apart from whom it covers. */
export class NoteBoard {
  private readonly notes = new Map<string, Note>();
  private readonly write: LineWriter;
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private releaseShutdown: (() => void) | undefined;
  private readonly onShutdown: NoteBoardOptions["onShutdown"];

  constructor(options: NoteBoardOptions = {}) {
    this.write = options.write ?? stdoutLines;
    this.onShutdown = options.onShutdown;
    this.clock = options.clock ?? realClock;
  }

  /**
   * Says `key`'s note for `subject` too. `render` gets the covered instances as one phrase ({@link listSubjects})
   * and returns the line; notes with the same key are one note.
   */
  add(key: string, subject: string, render: (subjects: string) => string): void {
    const note = this.notes.get(key);
    if (!note) {
      this.notes.set(key, { render, subjects: [subject], printed: 1 });
      this.write(render(listSubjects([subject])));
      return;
    }
    if (note.subjects.includes(subject)) return;
    note.subjects.push(subject);
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => this.flush(), settleMs);
    this.releaseShutdown ??= this.onShutdown?.(() => this.flush());
  }

  /** Prints each note that has gained instances since it was last printed, naming all of them. */
  flush(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.releaseShutdown?.();
    this.releaseShutdown = undefined;
    for (const note of this.notes.values()) {
      if (note.subjects.length === note.printed) continue;
      note.printed = note.subjects.length;
      this.write(note.render(listSubjects(note.subjects)));
    }
  }
}

/**
 * The process's end, for {@link NoteBoardOptions.onShutdown}: its exit, and SIGINT, which the engine sends its
 * plugins when it is done with them (then waits 5 s before killing them). Lines written to a pipe are written
 * synchronously on Linux, so they reach the engine before the process is gone.
 */
export function flushOnShutdown(flush: () => void): () => void {
  const interrupted = () => {
    flush();
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("exit", flush);
  return () => {
    process.off("SIGINT", interrupted);
    process.off("exit", flush);
  };
}
