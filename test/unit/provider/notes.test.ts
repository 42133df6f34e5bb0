import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { listSubjects, NoteBoard, settleMs } from "../../../provider/notes.ts";
import { FakeClock } from "../runtime/fake-clock.ts";

const skipped = (all: string) => `server-side dry-run skipped for ${all}: namespace shop does not exist yet`;

describe("NoteBoard: a note names every instance it covers", () => {
  test("listSubjects reads as a list", () => {
    assert.equal(listSubjects(["web"]), "web");
    assert.equal(listSubjects(["web", "db"]), "web and db");
    assert.equal(listSubjects(["web", "db", "cache"]), "web, db and cache");
  });

  test("the first instance prints the note at once; those that join it are named together once they stop coming", async () => {
    // GIVEN three instances checked one after another, all skipped for the same reason
    const clock = new FakeClock();
    const lines: string[] = [];
    const board = new NoteBoard({ write: (line) => lines.push(line), clock });
    board.add("ns shop", "shop/web", skipped);
    assert.deepEqual(lines, ["server-side dry-run skipped for shop/web: namespace shop does not exist yet"]);
    await clock.advance(100);
    board.add("ns shop", "shop/db", skipped);
    await clock.advance(100);
    board.add("ns shop", "shop/cache", skipped);
    board.add("ns shop", "shop/db", skipped); // a second check of the same instance changes nothing
    // WHEN no more come for the settle period
    await clock.advance(settleMs);
    // THEN the note is printed again, naming all three, and only once
    assert.deepEqual(lines.slice(1), [
      "server-side dry-run skipped for shop/web, shop/db and shop/cache: namespace shop does not exist yet",
    ]);
    await clock.advance(settleMs * 10);
    assert.equal(lines.length, 2);
  });

  test("different reasons are different notes", () => {
    const lines: string[] = [];
    const board = new NoteBoard({ write: (line) => lines.push(line), clock: new FakeClock() });
    board.add("a", "shop/web", (all) => `A for ${all}`);
    board.add("b", "shop/web", (all) => `B for ${all}`);
    assert.deepEqual(lines, ["A for shop/web", "B for shop/web"]);
  });

  test("the process's end prints what is pending: the run may end before the settle period", () => {
    // GIVEN a note joined by a second instance, and a shutdown hook
    const lines: string[] = [];
    const hook: { flush?: () => void } = {};
    let released = 0;
    const board = new NoteBoard({
      write: (line) => lines.push(line),
      clock: new FakeClock(),
      onShutdown: (flush) => {
        hook.flush = flush;
        return () => released++;
      },
    });
    board.add("ns", "shop/web", skipped);
    assert.equal(typeof hook.flush, "undefined", "nothing pending: no hook");
    board.add("ns", "shop/db", skipped);
    // WHEN the process is told to end
    const flush = hook.flush as (() => void) | undefined;
    assert.ok(flush, "a pending line asks for the hook");
    flush();
    // THEN the full note is printed, and the hook is released
    assert.deepEqual(
      lines.at(-1),
      "server-side dry-run skipped for shop/web and shop/db: namespace shop does not exist yet",
    );
    assert.equal(released, 1);
  });
});
