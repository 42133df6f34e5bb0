/**
 * `npm run operator -- [flags]`: the operator as a local process against the local cluster.
 *
 * Credentials: KUBECONFIG or --kubeconfig if given. Otherwise, when the dev stack's ServiceAccount exists, a token
 * for it is minted now, for the cluster that is running now (.local/operator.kubeconfig, token in
 * .local/operator.token), so a local run proves the RBAC; without it, the admin kubeconfig. The token is renewed
 * while this process runs. The launcher of `npm start` sets MYAPP_LOCAL_OPERATOR_RENEW after writing the files.
 * As that ServiceAccount it runs with the flags the dev stack's platform gives its external operator (its
 * `operatorFlags` output: the app namespace, the policy, chart limits, the Lease), each unless the command line
 * sets it, and serves the dev stack's admission webhooks (127.0.0.1, the checkout's port) unless `npm start`'s operator does; with
 * --webhook-bind-address it serves them on that address, with the stack's certificate. Beside `npm start`'s
 * operator it waits as a standby on the stack's Lease instead of reconciling the same instances.
 *
 * Charts: the toolchain's helm renders them (the pinned version the tests use), unless --helm or MYAPP_HELM names
 * another; without a built toolchain, helm on PATH.
 */
import { parseObjectKey } from "../kube/object-key.ts";
import { answerAndExit, commandLine, main } from "../operator/main.ts";
import path from "node:path";
import {
  devStackFlags,
  devStackOperator,
  operatorRecord,
  operatorKubeconfig,
  renewOperatorToken,
  writeOperatorCredentials,
  type OperatorIdentity,
} from "./lib/operator-process.ts";
import { argumentsToCheckFirst, serviceAccountArguments, setsFlag } from "./lib/operator-arguments.ts";
import { localSetup, missingLocalSetup } from "./lib/local-setup.ts";
import { kubeconfigPath, toolchainBinDir } from "./lib/paths.ts";
import { ensurePulumiHome } from "./lib/pulumi.ts";
import { builtHelm } from "./lib/toolchain.ts";

const args = process.argv.slice(2);
let argv = args;
const env = { ...process.env };
const say = (message: string) => process.stderr.write(`[operator] ${message}\n`);
const renewFailed = (error: unknown) =>
  say(`renewing the ServiceAccount token failed (the current one stays valid for now): ${String(error)}`);

const launched = env.MYAPP_LOCAL_OPERATOR_RENEW;
const asServiceAccount = !launched && !env.KUBECONFIG && !setsFlag(args, env, "--kubeconfig");
// --help, --version and a bad flag answer before any token is minted, in the operator's own words.
const parsed = commandLine(argumentsToCheckFirst(args, env, asServiceAccount), env);
if ("exit" in parsed) answerAndExit(parsed);
// Without credentials of the user's own it runs against the local cluster: one that is not up is said as such,
// rather than as a kubeconfig file that does not exist.
const missing = asServiceAccount ? missingLocalSetup({ cluster: true }, localSetup()) : undefined;
if (missing) {
  say(missing);
  process.exit(1);
}

if (launched) {
  const { namespace, name: serviceAccount } = parseObjectKey(launched, { what: "MYAPP_LOCAL_OPERATOR_RENEW" });
  renewOperatorToken({ namespace, serviceAccount, watchNamespaces: [] }, renewFailed);
} else if (asServiceAccount) {
  const identity: OperatorIdentity = devStackOperator(await stackFlags());
  try {
    await writeOperatorCredentials(identity);
    env.KUBECONFIG = operatorKubeconfig;
    renewOperatorToken(identity, renewFailed);
    say(
      `as ServiceAccount ${identity.namespace}/${identity.serviceAccount} (token just minted, renewed while running)`,
    );
    // The dev stack's webhook configurations call this machine's operator: served, as `npm start`'s would, unless
    // `npm start`'s operator still runs and serves them already (its port is taken: this one would exit). On an
    // address of its own, with the stack's certificate and configuration (a standby's server, called by nobody
    // until the configurations point there).
    const started = operatorRecord();
    if (started && !setsFlag(args, env, "--webhook-bind-address")) {
      say(
        `npm start's operator (pid ${started.pid}) serves the dev stack's admission webhooks; this one does not ` +
          "(if it leads after that one stops, writes through the webhooks fail until npm start runs again)",
      );
    }
    const lease = identity.leaderElectionFlags ?? [];
    if (started && lease.length > 0 && !lease.some((flag) => setsFlag(args, env, flag))) {
      say(`it holds the dev stack's Lease: this one waits as a standby and leads once it stops`);
    }
    argv = serviceAccountArguments(args, env, identity, started !== undefined);
  } catch (error) {
    env.KUBECONFIG = kubeconfigPath;
    say(`as the cluster admin (.local/kubeconfig): no ServiceAccount token (${String(error)})`);
  }
}

/** The dev stack's `operatorFlags`, when a toolchain's pulumi and the stack have them. */
async function stackFlags(): Promise<readonly string[] | undefined> {
  try {
    const binDir = toolchainBinDir();
    return await devStackFlags(path.join(binDir, "pulumi"), await ensurePulumiHome(binDir));
  } catch {
    return undefined;
  }
}

if (!setsFlag(args, env, "--helm")) {
  const helm = builtHelm();
  if (helm) env.MYAPP_HELM = helm;
  else say("no built toolchain helm: charts render with helm on PATH (run 'npm run toolchain' for the pinned one)");
}

// The operator's own command line: a failure to start (or a flag of the stack's refused beside the user's) is one
// line on stderr, never the usage.
await main(argv, env);
