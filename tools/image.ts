/**
 * `npm run image [-- --force] [-- --push REGISTRY/NAME:TAG [--no-tls-verify]]`: builds the operator image without
 * a daemon (buildah, from the repository's Dockerfile on a base assembled offline) into
 * ~/.cache/myapp-platform/images/, or finds it there. Installs buildah (and skopeo, to push) with apt-get when
 * missing. Prints the OCI layout reference (for umoci, skopeo, runc) and the sizes.
 *
 * --push copies it to a registry your cluster pulls from (skopeo, daemonless; credentials from `skopeo login` or
 * ~/.docker/config.json) and prints the reference to pass as MyAppOperator's `image`, pinned to the digest the
 * registry stored. --no-tls-verify is for a local registry on plain HTTP (127.0.0.1:5000), never a real one.
 */
import { parseArgs } from "node:util";
import { buildOperatorImage } from "./lib/image-build.ts";
import { pushDestinationProblem, pushOperatorImage } from "./lib/image-push.ts";
import { progress } from "./lib/progress.ts";

const usage =
  "usage: npm run image [-- --force] [-- --push REGISTRY/NAME:TAG [--no-tls-verify]]   " +
  "(--force rebuilds a cached image; --no-tls-verify for a local plain-HTTP registry)";
const step = progress("image");
let values: { force?: boolean; push?: string; "no-tls-verify"?: boolean };
try {
  ({ values } = parseArgs({
    options: { force: { type: "boolean" }, push: { type: "string" }, "no-tls-verify": { type: "boolean" } },
  }));
  if (values["no-tls-verify"] && !values.push) throw new Error("--no-tls-verify applies to --push only");
  // A bad destination is said before a build, not after it.
  const problem = values.push === undefined ? undefined : pushDestinationProblem(values.push);
  if (problem) throw new Error(`--push: ${problem}`);
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}; ${usage}`);
  process.exit(2);
}
try {
  const image = await buildOperatorImage(step, { force: values.force ?? false });
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  step(
    `${image.cached ? "cached" : "built"}: ${mib(image.compressedBytes)} compressed, ${mib(image.unpackedBytes)} unpacked` +
      ` (node ${image.nodeVersion}; built in ${image.buildSeconds}s); ${image.digest}`,
  );
  if (values.push) {
    const pushed = await pushOperatorImage(image, values.push, { tlsVerify: !values["no-tls-verify"], step });
    step(`pushed ${pushed.reference} (${pushed.digest}); pass it as MyAppOperator's image:`);
    console.log(pushed.pinned);
  } else {
    console.log(`oci:${image.ref}`);
  }
} catch (error) {
  console.error(`image: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
