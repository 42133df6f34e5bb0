/**
 * A temporary directory of one command's own (TMPDIR for what it spawns), removed when the command ends, however it
 * ends. pulumi-kubernetes copies the kubeconfig it is given into a new file in the temporary directory each time a
 * pulumi command starts it and never removes it (`writeKubeconfigToFile` in its provider): without this, every
 * `npm run pulumi` would leave one more copy of the cluster's credentials in /tmp. The test runner gives the suite one
 * too, so what any test or tool leaves behind goes with the run, and is named. For pulumi, Node's code cache stays
 * where it was (NODE_COMPILE_CACHE, else `node-compile-cache` in the shared temporary directory): the provider's host
 * enables it (provider/impl-loader.js), and a cache removed with each command would make every next one start cold.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface PrivateTmp {
  readonly dir: string;
  /** The variables that send a child's temporary files here (TMPDIR) and keep Node's code cache where it was. */
  readonly env: { readonly TMPDIR: string; readonly NODE_COMPILE_CACHE: string };
  /** Removes the directory and all it holds; returns the names of what was left in it (once; later calls: []). */
  remove(): string[];
}

export function privateTmp(prefix: string): PrivateTmp {
  const shared = os.tmpdir();
  const dir = mkdtempSync(path.join(shared, `${prefix}-`));
  const compileCache = process.env["NODE_COMPILE_CACHE"] || path.join(shared, "node-compile-cache");
  let removed = false;
  const remove = () => {
    if (removed) return [];
    removed = true;
    let left: string[] = [];
    try {
      left = readdirSync(dir);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
    return left;
  };
  process.once("exit", remove);
  return { dir, env: { TMPDIR: dir, NODE_COMPILE_CACHE: compileCache }, remove };
}

/**
 * `names` grouped by their stem, largest group first: `kubeconfig* ×48, automation-* ×3`. The stem drops what
 * mkdtemp and Go's CreateTemp append: a random `-XXXXXX`, or trailing digits.
 */
export function summarizeLeftovers(names: readonly string[]): string {
  const groups = new Map<string, number>();
  for (const name of names) {
    const stem = name.replace(/-[A-Za-z0-9]{6}$/, "-").replace(/\d+$/, "");
    groups.set(stem, (groups.get(stem) ?? 0) + 1);
  }
  return [...groups]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([stem, count]) => `${stem}* ×${count}`)
    .join(", ");
}
