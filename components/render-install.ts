/**
 * Writes dist/install.yaml: the default installation (cluster-wide, in-cluster operator) as plain YAML.
 *
 *   node components/render-install.ts [--out PATH] [--check]
 *
 * --check writes nothing and exits 1 when the file on disk differs from a fresh render (for CI).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadCrdManifest } from "./crd.ts";
import { installManifests, renderInstallYaml } from "./install-manifests.ts";
import { describeIssues, resolveSettings } from "./settings.ts";

/** The component name the YAML install uses; Pulumi users choose their own. */
export const installName = "myapp-operator";
export const defaultInstallPath = fileURLToPath(new URL("../dist/install.yaml", import.meta.url));

/** The text of dist/install.yaml, from the component's defaults. */
export function renderDefaultInstall(): string {
  const resolved = resolveSettings(installName);
  if (!resolved.ok) throw new Error(describeIssues(`install "${installName}"`, resolved.issues));
  return renderInstallYaml(installManifests(resolved.settings, loadCrdManifest()));
}

function main(): void {
  const { values } = parseArgs({ options: { out: { type: "string" }, check: { type: "boolean" } } });
  const out = path.resolve(values.out ?? defaultInstallPath);
  const text = renderDefaultInstall();
  if (values.check) {
    let current = "";
    try {
      current = readFileSync(out, "utf8");
    } catch {
      // A missing file is simply out of date.
    }
    if (current !== text) {
      process.stderr.write(`${out} is out of date: run 'node components/render-install.ts'\n`);
      process.exitCode = 1;
    }
    return;
  }
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, text);
  process.stderr.write(`wrote ${path.relative(process.cwd(), out) || out}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
