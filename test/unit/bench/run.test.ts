/** `npm run bench`'s command line: a mistake is one line and the usage (exit 2), a flag nothing reads is refused. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { benchCommandLine, flagsOf } from "../../../bench/run.ts";

/** The names of the benchmarks a command line would run, or its answer. */
const chosen = (argv: string[]) => {
  const command = benchCommandLine(argv);
  return "run" in command ? command.run.selected.map((b) => b.name) : command;
};
const refusal = (argv: string[]) => {
  const command = benchCommandLine(argv);
  assert.ok("exit" in command, argv.join(" "));
  assert.equal(command.exit, 2, argv.join(" "));
  assert.equal(command.stdout, undefined);
  const [line = "", ...rest] = (command.stderr ?? "").split("\n");
  // One line, then the usage: no stack trace.
  assert.match(rest.join("\n"), /^Usage: npm run bench -- /);
  assert.doesNotMatch(command.stderr ?? "", /\n\s+at /);
  return line;
};

describe("npm run bench's command line", () => {
  it("runs what it ran before: the documented command lines", () => {
    assert.deepEqual(chosen(["informer-latency"]), ["informer-latency"]);
    assert.deepEqual(chosen(["side-by-side", "--n", "500", "--storage", "1Gi", "--rounds", "2"]), ["side-by-side"]);
    assert.deepEqual(chosen(["chart-fleet", "--n", "100", "--rounds", "2"]), ["chart-fleet"]);
    assert.deepEqual(chosen(["side-by-side-1000", "--subjects", "go,ts", "--no-rollout", "--window", "10"]), [
      "side-by-side-1000",
    ]);
    const all = chosen(["--no-record"]);
    assert.ok(Array.isArray(all) && all.includes("operator-throughput") && !all.includes("chart-fleet"));
    // A flag read by one of several chosen benchmarks is used, not ignored.
    assert.ok(Array.isArray(chosen(["side-by-side", "chart-fleet", "--storage", "1Gi"])));
    const command = benchCommandLine(["--no-record", "admission"]);
    assert.ok("run" in command && !command.run.record);
  });

  it("--help prints the usage and exit 0", () => {
    const command = benchCommandLine(["--help"]);
    assert.ok("exit" in command && command.exit === 0);
    assert.match(command.stdout ?? "", /^Usage: npm run bench -- \[--no-record\]/);
  });

  it("a bad value or an unknown flag is one line, not an unhandled rejection", () => {
    assert.equal(refusal(["side-by-side", "--n", "x"]), 'bench: --n must be a positive integer, got "x"');
    assert.equal(refusal(["chart-fleet", "--n", "1e3"]), 'bench: --n must be a positive integer, got "1e3"');
    assert.equal(refusal(["--nn", "3"]), "bench: unknown flag --nn");
    assert.match(refusal(["side-by-side", "--subjects", "rust"]), /^bench: --subjects takes a comma-separated list/);
    assert.match(refusal(["no-such-bench"]), /^bench: unknown benchmark\(s\) no-such-bench; there are: /);
    assert.match(refusal(["side-by-side", "--n"]), /^bench: Option '--n <value>' argument missing/);
  });

  it("--storage is checked as spec.storage before anything starts; empty is refused, not run as no storage", () => {
    // GIVEN a quantity no instance would take, and an empty one (which would run without volumes, recorded as with)
    // THEN each is one line naming the flag and what it takes
    for (const storage of ["banana", "", "1.5Gi", "0"]) {
      assert.equal(
        refusal(["side-by-side", "--storage", storage]),
        `bench: --storage must be a whole number of bytes from 1 to 1Ei: digits without a fraction or leading zero, ` +
          `then optionally a suffix Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or an exponent such as e9, e.g. 10Gi, ` +
          `500M or 1536Mi (not 1.5Gi), at most 64 characters, got "${storage}" (leave --storage out for no volumes)`,
        storage,
      );
    }
    // AND a quantity spec.storage takes runs, as before
    assert.deepEqual(chosen(["side-by-side", "--storage", "500M"]), ["side-by-side"]);
  });

  it("a flag the chosen benchmarks do not read is refused, naming them and the flags they take", () => {
    assert.equal(
      refusal(["chart-fleet", "--storage", "1Gi"]),
      "bench: --storage does not apply to chart-fleet (--n, --rounds, --window)",
    );
    assert.equal(
      refusal(["informer-latency", "--n", "5", "--no-rollout"]),
      "bench: --n, --no-rollout do not apply to informer-latency (no flags of its own)",
    );
    // The fixed scenarios have their own size: --n is the custom side-by-side's.
    assert.match(
      refusal(["side-by-side-1000", "--n", "500"]),
      /^bench: --n does not apply to side-by-side-1000 \(--rounds,/,
    );
    // Without names, the default set: none of it reads --n.
    assert.match(
      refusal(["--n", "500"]),
      /^bench: --n does not apply to operator-throughput \(no flags of its own\), /,
    );
  });

  it("each benchmark's flags are the ones its description names", () => {
    assert.deepEqual(flagsOf("chart-fleet"), ["n", "rounds", "window"]);
    assert.deepEqual(flagsOf("side-by-side"), [
      "n",
      "storage",
      "rounds",
      "changes",
      "window",
      "no-rollout",
      "subjects",
    ]);
    assert.deepEqual(flagsOf("admission"), []);
  });
});
