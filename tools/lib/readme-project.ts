/**
 * The files the README shows (its "Your own project" program, the chart walkthrough's instance): each fenced block
 * whose info string names a file (```` ```json package.json ````) is that file, exactly as a user copies it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./paths.ts";

export const readmeProjectSection = "## Your own project";

/** The files of the README's project, by name: package.json, Pulumi.yaml, index.ts. */
export function readmeProjectFiles(): Map<string, string> {
  return readmeSectionFiles(readmeProjectSection, ["package.json", "Pulumi.yaml", "index.ts"]);
}

/** The named blocks of one README section (its heading line, e.g. "## Charts: ..."), by file name; `required` must be there. */
export function readmeSectionFiles(heading: string, required: readonly string[]): Map<string, string> {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.split(heading)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error(`README.md has no section '${heading}'`);
  const files = new Map<string, string>();
  for (const block of section.matchAll(/^```\w+ (\S+)\n([\s\S]*?)^```$/gm)) files.set(block[1]!, block[2]!);
  for (const name of required) {
    if (!files.has(name)) throw new Error(`README.md's '${heading}' has no block for ${name}`);
  }
  return files;
}

/**
 * The flags of the README's local recipe for its own project, `KUBECONFIG=... npx --no-install myapp-operator FLAGS`
 * (a `\` continues the line), as a user copies them.
 */
export function readmeOperatorFlags(): string[] {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.split(readmeProjectSection)[1]?.split(/^## /m)[0] ?? "";
  const command = /^KUBECONFIG=\S+ npx --no-install myapp-operator((?:.*\\\n)*.*)$/m.exec(section)?.[1];
  if (command === undefined) throw new Error(`README.md's '${readmeProjectSection}' has no myapp-operator command`);
  return command.replaceAll("\\\n", " ").split(/\s+/).filter(Boolean);
}
