/**
 * Writes dist/install.yaml: the default installation (cluster-wide, in-cluster operator) as plain YAML.
 *
 *   node components/render-install.ts [--image REGISTRY/NAME:TAG] [--out PATH] [--check]
 *
 * --image names the operator image you built and pushed (`npm run image -- --push REGISTRY/NAME:TAG`); without it
 * the Deployment names {@link installImagePlaceholder}, which no registry serves, so the file says plainly that its
 * image must be replaced. --check writes nothing and exits 1 when the file on disk differs from a fresh render.
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
/**
 * The image of the checked-in dist/install.yaml: no image is published, and a made-up public name could be
 * registered by anyone. `.invalid` never resolves (RFC 2606), so a pod that names it fails with ErrImagePull
 * ("no such host") and pulls nothing. Render your own with `--image`, or replace this line.
 */
export const installImagePlaceholder = "registry.invalid/replace-with-your-image/myapp-operator:latest";
export const defaultInstallPath = fileURLToPath(new URL("../dist/install.yaml", import.meta.url));

/** The text of dist/install.yaml, from the component's defaults and `image`. */
export function renderDefaultInstall(image: string = installImagePlaceholder): string {
  const resolved = resolveSettings(installName, { image });
  if (!resolved.ok) throw new Error(describeIssues(`install "${installName}"`, resolved.issues));
  return renderInstallYaml(installManifests(resolved.settings, loadCrdManifest()));
}

const usage = "usage: node components/render-install.ts [--image REGISTRY/NAME:TAG] [--out PATH] [--check]";

function main(): void {
  let values: { image?: string | undefined; out?: string | undefined; check?: boolean | undefined; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        image: { type: "string" },
        out: { type: "string" },
        check: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    // An unknown or incomplete flag: said in one line with the usage, not as a stack trace.
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const out = path.resolve(values.out ?? defaultInstallPath);
  let text: string;
  try {
    text = renderDefaultInstall(values.image);
  } catch (error) {
    // The settings' own message names each bad argument (an --image that is no image reference).
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
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
