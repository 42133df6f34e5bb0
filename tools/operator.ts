/**
 * `npm run operator -- [flags]`: the operator as a local process against the local cluster. It uses the
 * operator ServiceAccount's token kubeconfig when `npm start` has made one (.local/operator.kubeconfig), so a
 * local run proves the RBAC is sufficient; otherwise the admin kubeconfig. KUBECONFIG or --kubeconfig override.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { main } from "../operator/main.ts";
import { kubeconfigPath, localDir } from "./lib/paths.ts";

const serviceAccountKubeconfig = path.join(localDir, "operator.kubeconfig");
const env = { ...process.env };
env.KUBECONFIG ??= existsSync(serviceAccountKubeconfig) ? serviceAccountKubeconfig : kubeconfigPath;
await main(process.argv.slice(2), env);
