/**
 * What of the local setup a command needs is missing, in the words `npm run kubectl` uses: after `npm run down`
 * (which deletes the local cluster and removes the dev stack), `npm run pulumi` and `npm run operator` failed
 * with pulumi's `no stack named 'dev' found` or a kubeconfig file that does not exist, naming neither cause.
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { stackStateFile } from "./dev-stack-cluster.ts";
import { kubeconfigPath, pulumiEnv, repoRoot } from "./paths.ts";

/** Which parts are there: the local cluster (its kubeconfig), the dev stack (its state in the local backend). */
export interface LocalSetup {
  readonly cluster: boolean;
  readonly devStack: boolean;
}

/** The dev stack's state file in the project's local backend (`npm run down` removes the stack and this with it). */
export function devStackStateFile(): string {
  return stackStateFile(pulumiEnv().PULUMI_BACKEND_URL!, "dev");
}

/** Whether the local backend holds any stack of this project (pulumi then has one it may have selected). */
export function anyStack(): boolean {
  const dir = path.dirname(devStackStateFile());
  return existsSync(dir) && readdirSync(dir).some((file) => file.endsWith(".json"));
}

/** What is there now. */
export function localSetup(): LocalSetup {
  return { cluster: existsSync(kubeconfigPath), devStack: existsSync(devStackStateFile()) };
}

/** What to say when a command needs `needs` and `present` lacks some of it; undefined when nothing is. Pure. */
export function missingLocalSetup(needs: Partial<LocalSetup>, present: LocalSetup): string | undefined {
  const cluster = needs.cluster === true && !present.cluster;
  const devStack = needs.devStack === true && !present.devStack;
  const kubeconfig = path.relative(repoRoot, kubeconfigPath);
  if (cluster && devStack) {
    return (
      "the local cluster is not up and the dev stack does not exist (yet, or since npm run down): npm start " +
      "makes them"
    );
  }
  if (cluster) return `the local cluster is not up (${kubeconfig} does not exist): npm run cluster -- up, or npm start`;
  if (devStack) return "the dev stack does not exist (yet, or since npm run down): npm start creates it";
  return undefined;
}
