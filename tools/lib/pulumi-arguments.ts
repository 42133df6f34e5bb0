/** What a `npm run pulumi -- ARGS` command line does, as far as the local dev stack's operator cares. Pure. */

/** pulumi's commands that apply a stack's program (`update` is `up`'s other name). */
const applying = new Set(["up", "update"]);

/**
 * When `args` apply a stack, the stack they name (`--stack X`, `--stack=X`, `-s X`), or "" for the selected one;
 * undefined for any other command.
 */
export function appliedStack(args: readonly string[]): string | undefined {
  return stackOf(args, applying);
}

/**
 * When `args` destroy a stack, the stack they name, or "" for the selected one; undefined for any other command,
 * for a destroy that only previews (`--preview-only`), and for one of some resources only (`--target`, `-t`,
 * `--exclude`, `--exclude-protected`), which leaves the platform in place.
 */
export function destroyedStack(args: readonly string[]): string | undefined {
  const partly = args.some((arg) => /^(--preview-only|--target|-t|--exclude|--exclude-protected)(=|$)/.test(arg));
  return partly ? undefined : stackOf(args, new Set(["destroy", "down", "dn"]));
}

/** pulumi's commands that reach the stack's cluster (by any of their names). */
const reaching = new Set(["up", "update", "preview", "pre", "refresh", "destroy", "down", "dn", "import", "watch"]);

/**
 * When `args` reach a stack's cluster (up, preview, refresh, destroy and the like), the stack they name, or "" for
 * the selected one; undefined for any other command (config, stack, plugin...), which needs no cluster.
 */
export function reachedStack(args: readonly string[]): string | undefined {
  return stackOf(args, reaching);
}

function stackOf(args: readonly string[], commands: ReadonlySet<string>): string | undefined {
  // The command is the first word that is not a flag nor a flag's value (`-s dev up`, `--cwd dir up`).
  const command = args.find((arg, index) => !arg.startsWith("-") && !takesValue(args[index - 1]));
  if (command === undefined || !commands.has(command)) return undefined;
  for (const [index, arg] of args.entries()) {
    if (arg === "--stack" || arg === "-s") return args[index + 1] ?? "";
    const inline = /^(?:--stack|-s)=(.*)$/.exec(arg);
    if (inline) return inline[1] ?? "";
  }
  return "";
}

/** pulumi's global flags that take the next word as their value. */
const valueFlags = new Set(["--stack", "-s", "--cwd", "-C", "--color", "--config-file", "--tracing", "--profiling"]);

function takesValue(previous: string | undefined): boolean {
  return previous !== undefined && valueFlags.has(previous);
}
