/**
 * The oldest Node the package runs on: package.json's `engines` (a unit test holds the two equal). On an older one
 * the bin would not fail, it would do nothing: `import.meta.main` is undefined before Node 22.18, so the operator
 * never starts and exits 0 without a word. `npx` runs the first `node` on PATH, which on many machines is older.
 */
export const oldestNode = "22.19.0";

/** Why this Node cannot run the operator, or undefined when it can. `version` as `process.version` gives it. */
export function nodeVersionProblem(version: string, execPath: string): string | undefined {
  const running = version.replace(/^v/, "").split(".").map(Number);
  const oldest = oldestNode.split(".").map(Number);
  const index = oldest.findIndex((part, i) => running[i] !== part);
  if (index === -1 || (running[index] ?? 0) > oldest[index]!) return undefined;
  return `needs Node.js ${oldestNode} or later; this is ${version} (${execPath}): put a newer node first on PATH`;
}
