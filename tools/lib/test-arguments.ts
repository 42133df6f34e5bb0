/**
 * `npm test`'s arguments: test files (or globs) and the test runner's own options. Options go before the files
 * on node's command line wherever they were given, and an option's value may be the next argument.
 */

/** The test runner's options that take a value, which may come as the next argument. */
const optionsWithValue = new Set([
  "--test-name-pattern",
  "--test-skip-pattern",
  "--test-concurrency",
  "--test-timeout",
  "--test-reporter",
  "--test-reporter-destination",
  "--test-shard",
  "--test-isolation",
  "--test-coverage-include",
  "--test-coverage-exclude",
]);

/** Splits `args` into runner options (each as `--name=value` where it takes one) and paths; a bare `--` is dropped. */
export function splitTestArguments(args: readonly string[]): { runnerOptions: string[]; paths: string[] } {
  const runnerOptions: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--") continue;
    if (!arg.startsWith("--")) paths.push(arg);
    else if (!arg.includes("=") && optionsWithValue.has(arg) && args[i + 1] !== undefined) {
      runnerOptions.push(`${arg}=${args[++i] ?? ""}`);
    } else runnerOptions.push(arg);
  }
  return { runnerOptions, paths };
}
