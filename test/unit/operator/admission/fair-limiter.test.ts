import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fairLimiter } from "../../../../operator/admission/fair-limiter.ts";
import { settle } from "../../runtime/fake-clock.ts";

/** A read that answers when told to. */
function gate(label: string, started: string[]) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    open: () => open(),
    read: async () => {
      started.push(label);
      await opened;
      return label;
    },
  };
}

describe("fairLimiter", () => {
  it("runs at most maxInFlight reads, by turns across keys: one namespace's hundred reads do not go before another's one", async () => {
    const limited = fairLimiter({ maxInFlight: 2 });
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const ask = (key: string, label: string) => {
      const read = gate(label, started);
      gates.set(label, read);
      return limited(key, read.read);
    };
    const answers = [
      ...Array.from({ length: 5 }, (_, i) => ask("team-a", `a${i}`)),
      ask("team-b", "b0"),
      ask("team-c", "c0"),
    ];
    await settle();
    assert.deepEqual(started, ["a0", "a1"], "two at once");
    gates.get("a0")!.open();
    await settle();
    gates.get("a1")!.open();
    await settle();
    assert.deepEqual(started, ["a0", "a1", "a2", "b0"], "team-b's one goes before team-a's third waiting");
    gates.get("b0")!.open();
    await settle();
    assert.deepEqual(started.slice(4), ["c0"]);
    for (const label of ["a2", "c0", "a3", "a4"]) {
      gates.get(label)!.open();
      await settle();
    }
    assert.deepEqual(await Promise.all(answers), ["a0", "a1", "a2", "a3", "a4", "b0", "c0"]);
  });

  it("refuses at once beyond maxWaiting, and a failed read frees its slot", async () => {
    const limited = fairLimiter({ maxInFlight: 1, maxWaiting: 1 });
    const started: string[] = [];
    const first = gate("first", started);
    const running = limited("a", first.read);
    const waiting = limited("b", () => Promise.reject(new Error("boom")));
    await assert.rejects(
      limited("c", () => Promise.resolve("late")),
      /more than 1 admission reads are waiting/,
    );
    first.open();
    assert.equal(await running, "first");
    await assert.rejects(waiting, /boom/);
    assert.equal(await limited("c", () => Promise.resolve("after")), "after");
  });
});
