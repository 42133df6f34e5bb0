/**
 * The command lines of `npm start` and `npm run down`, read strictly: an argument they do not take is an error
 * naming it, never ignored (a misspelt `--keep-clusters` must not destroy everything as if nothing was given).
 */
import { parseArgs } from "node:util";

/** A command that takes boolean flags only; `-h`/`--help` come with every one. */
export interface Command {
  readonly name: string;
  readonly usage: string;
  /** Its flags, without `--`. */
  readonly flags: readonly string[];
}

export const startCommand: Command = {
  name: "npm start",
  usage: `Usage: npm start
  The whole platform on the local cluster: builds (or finds) the toolchain, starts the cluster, runs pulumi up on
  the dev stack, starts the operator with its ServiceAccount's token, and prints the instances. Safe to run again.
  It takes no arguments: the platform is stacks/index.ts; an operator with flags of your own is
  'npm run operator -- [flags]'.
  -h, --help       print this usage and exit`,
  flags: [],
};

export const downCommand: Command = {
  name: "npm run down",
  usage: `Usage: npm run down [-- --keep-cluster]
  Destroys the dev stack (its operator started first if it stopped, so the instances' finalizers are released),
  stops the operator, then deletes the local cluster and any other of this checkout ('npm run cluster -- up
  --name NAME').
  --keep-cluster   leave the clusters up
  -h, --help       print this usage and exit`,
  flags: ["keep-cluster"],
};

/** What the command line asks for: run with these flags, or print this and exit with this code. */
export type CommandLine =
  { readonly run: ReadonlySet<string> } | { readonly exit: number; readonly stdout?: string; readonly stderr?: string };

/** `argv` read for `command`: `--help` → the usage (exit 0); anything it does not take → what and the usage (exit 2). */
export function readCommandLine(argv: readonly string[], command: Command): CommandLine {
  const boolean = { type: "boolean" } as const;
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        ...Object.fromEntries(command.flags.map((flag) => [flag, boolean])),
        help: { ...boolean, short: "h" },
      },
    }));
  } catch (error) {
    const takes = [...command.flags, "help"].map((flag) => `--${flag}`).join(", ");
    return { exit: 2, stderr: `${command.name}: ${problem(error)}; it takes ${takes}\n${command.usage}` };
  }
  if (values.help) return { exit: 0, stdout: command.usage };
  return { run: new Set(command.flags.filter((flag) => values[flag] === true)) };
}

/** Prints what the command line answered instead of running, and exits with its code. */
export function exitWith(answer: { readonly exit: number; readonly stdout?: string; readonly stderr?: string }): never {
  if (answer.stdout !== undefined) console.log(answer.stdout);
  if (answer.stderr !== undefined) console.error(answer.stderr);
  process.exit(answer.exit);
}

/** parseArgs's error in one clause: its "To specify a positional argument ..." advice does not apply here. */
function problem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const unknown = /^Unknown option '([^']+)'/.exec(message)?.[1];
  if (unknown) return `unknown flag ${unknown}`;
  const positional = /^Unexpected argument '([^']*)'/.exec(message)?.[1];
  if (positional !== undefined) return `unexpected argument "${positional}"`;
  return message.replace(/^Option/, "option").replace(/\.$/, "");
}
