/** What a `npm run pulumi -- ARGS` command line does, as far as the local dev stack's operator cares. Pure. */

/** pulumi's commands that apply a stack's program (`update` is `up`'s other name). */
const applying = new Set(["up", "update"]);

/**
 * When `args` apply a stack, the stack they name (`--stack X`, `--stack=X`, `-s X`), or "" for the selected one;
 * undefined for any other command.
 */
export function appliedStack(args: readonly string[]): string | undefined {
  const command = args.find((arg) => !arg.startsWith("-"));
  if (command === undefined || !applying.has(command)) return undefined;
  for (const [index, arg] of args.entries()) {
    if (arg === "--stack" || arg === "-s") return args[index + 1] ?? "";
    const inline = /^(?:--stack|-s)=(.*)$/.exec(arg);
    if (inline) return inline[1] ?? "";
  }
  return "";
}
