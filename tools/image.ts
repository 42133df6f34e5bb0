/**
 * `npm run image [-- --force]`: builds the operator image without a daemon (buildah, from the repository's
 * Dockerfile on a base assembled offline) into ~/.cache/myapp-platform/images/, or finds it there. Installs
 * buildah with apt-get when it is missing. Prints the OCI layout reference (for umoci, skopeo, runc) and the sizes.
 *
 * Push it with skopeo: `skopeo copy oci:<layout>:<tag> docker://<registry>/myapp-operator:<tag>`.
 */
import { buildOperatorImage } from "./lib/image-build.ts";
import { progress } from "./lib/progress.ts";

const step = progress("image");
const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== "--force");
if (unknown.length > 0) {
  console.error(
    `unknown argument ${unknown[0]}; usage: npm run image [-- --force]   (--force rebuilds a cached image)`,
  );
  process.exit(2);
}
try {
  const image = await buildOperatorImage(step, { force: args.includes("--force") });
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  step(
    `${image.cached ? "cached" : "built"}: ${mib(image.compressedBytes)} compressed, ${mib(image.unpackedBytes)} unpacked` +
      ` (node ${image.nodeVersion}; built in ${image.buildSeconds}s); ${image.digest}`,
  );
  console.log(`oci:${image.ref}`);
} catch (error) {
  console.error(`image: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
