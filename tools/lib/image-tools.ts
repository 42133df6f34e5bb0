/**
 * The daemonless OCI tools the image needs, from Debian: buildah builds it (the repository's Dockerfile, no
 * daemon), umoci unpacks it into a runtime bundle, runc runs that bundle as a pod's container would, skopeo pushes
 * it to a registry. Missing ones
 * are installed with apt-get (CI runs as root on a clean machine); otherwise the error says what to install.
 */
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { run } from "./run.ts";

/**
 * Command → the Debian package that provides it. skopeo pushes the image to a registry; docker-registry (the CNCF
 * distribution registry) is the local registry the push test pushes to.
 */
const debianPackages = {
  buildah: "buildah",
  umoci: "umoci",
  runc: "runc",
  skopeo: "skopeo",
  "docker-registry": "docker-registry",
} as const;
export type ImageTool = keyof typeof debianPackages;

/** Absolute path of `command` on PATH, or undefined. */
export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return path.join(dir, command);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** Makes sure `tools` are on PATH, installing the missing ones with `apt-get install` (after `apt-get update`). */
export async function ensureImageTools(
  tools: readonly ImageTool[],
  step: (message: string) => void,
): Promise<Record<ImageTool, string>> {
  const missing = tools.filter((tool) => !which(tool));
  if (missing.length > 0) {
    const packages = missing.map((tool) => debianPackages[tool]);
    const install = `apt-get install -y --no-install-recommends ${packages.join(" ")}`;
    if (!which("apt-get")) {
      throw new Error(
        `the image needs ${missing.join(", ")}, and this machine has no apt-get: install ${packages.join(", ")}`,
      );
    }
    if (process.getuid?.() !== 0) {
      throw new Error(`the image needs ${missing.join(", ")}: run \`sudo apt-get update && sudo ${install}\` once`);
    }
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    step(`installing ${packages.join(", ")} from Debian (apt-get update, then install; a minute or two)`);
    await run("apt-get", ["update", "-q"], { env });
    await run("apt-get", install.split(" ").slice(1), { env });
  }
  const found = {} as Record<ImageTool, string>;
  for (const tool of tools) {
    const location = which(tool);
    if (!location) throw new Error(`${tool} is still not on PATH after installing ${debianPackages[tool]}`);
    found[tool] = location;
  }
  return found;
}
