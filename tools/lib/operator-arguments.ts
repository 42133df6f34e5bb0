/**
 * `npm run operator`'s command line as the dev stack's ServiceAccount: the user's arguments, then the flags the
 * stack's platform gives its external operator, each unless the user sets it. Pure.
 */
import { flagVariable } from "../../operator/options.ts";
import type { OperatorIdentity } from "./operator-process.ts";

/**
 * Whether `args` set `flag` (`--x` or `--x=value`, compared by name), as `--x=v` or `--x v`, or `env` does through
 * the operator's MYAPP_* variable for it (which the flag would override).
 */
export function setsFlag(args: readonly string[], env: NodeJS.ProcessEnv, flag: string): boolean {
  const name = flag.split("=")[0] ?? flag;
  const variable = flagVariable(name);
  return (
    args.some((arg) => arg === name || arg.startsWith(`${name}=`)) ||
    (variable !== undefined && env[variable] !== undefined)
  );
}

/**
 * `args` with the dev stack's flags the user does not set, each by its name: the operator keeps a flag's last value,
 * so a stack flag after the user's own would replace it. The stack's webhook server is left out while `npm start`'s
 * operator serves it (`npmStartServesWebhooks`: its port is taken), unless the user gives an address of their own.
 */
export function serviceAccountArguments(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  identity: OperatorIdentity,
  npmStartServesWebhooks: boolean,
): string[] {
  const unset = (flags: readonly string[] | undefined) => (flags ?? []).filter((flag) => !setsFlag(args, env, flag));
  // The dev stack grants its ServiceAccount the app namespace alone: watch that, as `npm start`'s operator does.
  const namespaces = identity.watchNamespaces.length > 0 ? [`--namespaces=${identity.watchNamespaces.join(",")}`] : [];
  const serveWebhooks = !npmStartServesWebhooks || setsFlag(args, env, "--webhook-bind-address");
  // The rest of the stack's platform (policy, chart limits, log level).
  const handled = (flag: string) => flag.startsWith("--webhook-") || flag.startsWith("--leader-elect");
  return [
    ...args,
    ...unset(namespaces),
    ...(serveWebhooks ? unset(identity.webhookFlags) : []),
    // One leader among the local operators of the dev stack: a second one waits instead of reconciling beside it.
    ...unset(identity.leaderElectionFlags),
    ...unset(identity.flags?.filter((flag) => !handled(flag))),
  ];
}

/**
 * What to check before a token is minted: `args`, plus a stand-in `--webhook-bind-address` when they set other
 * webhook flags without one and the stack's may yet be added (`asServiceAccount`): their values are checked now,
 * and whether a server will use them once the stack's flags are known.
 */
export function argumentsToCheckFirst(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  asServiceAccount: boolean,
): readonly string[] {
  const webhookFlag = (arg: string) => arg.startsWith("--webhook-");
  const otherWebhookSettings =
    args.some(webhookFlag) || Object.keys(env).some((name) => name.startsWith("MYAPP_WEBHOOK_"));
  return asServiceAccount && otherWebhookSettings && !setsFlag(args, env, "--webhook-bind-address")
    ? [...args, "--webhook-bind-address=127.0.0.1:0"]
    : args;
}
