/**
 * The project of the README's "Your own project" section: each fenced block whose info string names a file
 * (```` ```json package.json ````) is that file, exactly as a user copies it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./paths.ts";

export const readmeProjectSection = "## Your own project";

/** The files of the README's project, by name: package.json, Pulumi.yaml, index.ts. */
export function readmeProjectFiles(): Map<string, string> {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.split(readmeProjectSection)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error(`README.md has no section '${readmeProjectSection}'`);
  const files = new Map<string, string>();
  for (const block of section.matchAll(/^```\w+ (\S+)\n([\s\S]*?)^```$/gm)) files.set(block[1]!, block[2]!);
  for (const name of ["package.json", "Pulumi.yaml", "index.ts"]) {
    if (!files.has(name)) throw new Error(`README.md's '${readmeProjectSection}' has no block for ${name}`);
  }
  return files;
}
