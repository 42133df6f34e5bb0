/**
 * Builds the operator image without a daemon: the operator bundle (esbuild), a base assembled offline
 * (image-base.ts), then the repository's own Dockerfile built by `buildah bud` FROM that base, and the result
 * written as an OCI image layout (gzip layers) to ~/.cache/myapp-platform/images/myapp-operator-<key>/.
 *
 * The key hashes everything that goes in: the bundle, the Dockerfile and .dockerignore, the Node binary, the
 * versions of the Debian packages apt would take now, and this recipe (these sources); an image with that key already in the cache is reused, so a warm machine does not rebuild
 * it and a new machine (or a changed operator) does. buildah's storage is a throwaway directory per build (the vfs
 * driver: plain directories, no mounts left behind), so nothing outside the cache keeps state. The cache keeps the
 * three newest images.
 */
import { createHash } from "node:crypto";
import {
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { createGunzip } from "node:zlib";
import { assembleBaseRootfs, libraryPackageVersions, nodeBinarySha256, nodePath, nonrootId } from "./image-base.ts";
import { ensureImageTools } from "./image-tools.ts";
import { bundleOperator } from "./operator-bundle.ts";
import { repoRoot } from "./paths.ts";
import { run } from "./run.ts";

export const imageName = "myapp-operator";
/** The cache of built images (and of the Debian packages the base is made of), outside the repository. */
export const imageCacheDir = path.join(
  process.env.MYAPP_CACHE_DIR ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "myapp-platform"),
  "images",
);

export interface OperatorImage {
  /** The OCI image layout directory. */
  readonly layout: string;
  /** The tag inside the layout (the package version). */
  readonly tag: string;
  /** `<layout>:<tag>`, as umoci and skopeo's `oci:` transport take it. */
  readonly ref: string;
  readonly key: string;
  /** The manifest's digest: the same inputs give the same digest (every timestamp is 0). */
  readonly digest: string;
  /** Sum of the gzip layer blobs: what a registry stores and a node pulls. */
  readonly compressedBytes: number;
  /** Sum of the uncompressed layers: what the image takes once unpacked (`docker images` SIZE). */
  readonly unpackedBytes: number;
  readonly nodeVersion: string;
  readonly debianPackages: readonly string[];
  /** Seconds the build took (of the build that made it, when reused from the cache). */
  readonly buildSeconds: number;
  /** True when it came from the cache. */
  readonly cached: boolean;
}

/** Builds the image, or returns the cached one with the same key. */
export async function buildOperatorImage(
  step: (message: string) => void,
  { force = false } = {},
): Promise<OperatorImage> {
  const started = performance.now();
  step("bundling the operator (esbuild)");
  const bundle = await bundleOperator();
  const tag = (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
  const versions = await libraryPackageVersions();
  const key = imageKey(bundle.sha256, versions);
  const layout = path.join(imageCacheDir, `${imageName}-${key}`);
  const metadataFile = path.join(layout, "myapp-image.json");
  if (!force && existsSync(metadataFile)) {
    const cached = JSON.parse(readFileSync(metadataFile, "utf8")) as Omit<OperatorImage, "cached">;
    step(`image ${imageName}:${tag} (key ${key}) is in the cache: ${layout}`);
    utimesSync(layout, new Date(), new Date()); // recently used: pruning keeps it
    return { ...cached, cached: true };
  }

  const tools = await ensureImageTools(["buildah"], step);
  mkdirSync(imageCacheDir, { recursive: true });
  const work = mkdtempSync(path.join(imageCacheDir, ".build-"));
  try {
    const storage = [
      `--root=${path.join(work, "storage")}`,
      `--runroot=${path.join(work, "run")}`,
      "--storage-driver=vfs",
    ];
    const buildah = (...args: string[]) => run(tools.buildah, [...storage, ...args], { cwd: repoRoot });

    step("assembling the base: Node from node_modules, its libraries from Debian's packages");
    const rootfs = path.join(work, "base-rootfs");
    mkdirSync(rootfs);
    const base = await assembleBaseRootfs(rootfs, {
      versions,
      debCache: path.join(imageCacheDir, "debs"),
      staging: mkdtempSync(path.join(work, "debs-")),
      step,
    });
    // Named by content, not by the build key: the same inputs then give the same image digest (timestamps are 0).
    const baseRef = `localhost/myapp-node-base:${base.nodeVersion.replace(/^v/, "")}`;
    step(`base ${baseRef}: node ${base.nodeVersion}, ${base.debianPackages.join(", ")}`);
    const container = (await buildah("from", "scratch")).stdout.trim();
    const mountpoint = (await buildah("mount", container)).stdout.trim();
    // cp -a keeps owners and modes (home/nonroot belongs to 65532; /tmp is 1777).
    await run("cp", ["-a", `${rootfs}/.`, mountpoint]);
    // prettier-ignore
    await buildah(
      "config",
      "--user", `${nonrootId}:${nonrootId}`,
      "--workingdir", "/home/nonroot",
      "--env", `PATH=${path.dirname(nodePath)}:/usr/local/bin:/usr/bin:/bin`,
      "--entrypoint", JSON.stringify([nodePath]),
      "--label", `org.myapp.base.node=${base.nodeVersion}`,
      "--label", `org.myapp.base.debian-packages=${base.debianPackages.join(" ")}`,
      container,
    );
    await buildah("commit", "--quiet", "--timestamp", "0", "--rm", container, baseRef);

    step("buildah bud: the repository's Dockerfile, FROM that base");
    const imageRef = `localhost/${imageName}:${tag}`;
    // prettier-ignore
    await buildah(
      "bud",
      "--pull=never",
      "--timestamp", "0",
      "--layers=false",
      "--format", "oci",
      "--build-arg", `BASE=${baseRef}`,
      "--build-arg", `VERSION=${tag}`,
      "--label", `org.myapp.base.node=${base.nodeVersion}`,
      "--label", `org.myapp.base.debian-packages=${base.debianPackages.join(" ")}`,
      "--file", path.join(repoRoot, "Dockerfile"),
      "--tag", imageRef,
      repoRoot,
    );

    step("writing the OCI image layout (gzip layers)");
    const staged = path.join(work, "layout");
    await buildah("push", "--quiet", "--compression-format", "gzip", imageRef, `oci:${staged}:${tag}`);
    const sizes = await layoutSizes(staged, tag);
    const image: Omit<OperatorImage, "cached"> = {
      layout,
      tag,
      ref: `${layout}:${tag}`,
      key,
      ...sizes,
      nodeVersion: base.nodeVersion,
      debianPackages: base.debianPackages,
      buildSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
    writeFileSync(path.join(staged, "myapp-image.json"), `${JSON.stringify(image, null, 2)}\n`);
    rmSync(layout, { recursive: true, force: true });
    renameSync(staged, layout);
    pruneImages(layout);
    return { ...image, cached: false };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** How many built images the cache keeps (the newest; ~50 MB each), so switching branches does not rebuild. */
const keptImages = 3;

/**
 * Removes all but the newest `keptImages` images from the cache (`current` always stays), and work directories of
 * builds that were killed (older than an hour: a build takes a minute).
 */
function pruneImages(current: string): void {
  for (const name of readdirSync(imageCacheDir).filter((entry) => entry.startsWith(".build-"))) {
    const dir = path.join(imageCacheDir, name);
    if (Date.now() - statSync(dir).mtimeMs > 3_600_000) rmSync(dir, { recursive: true, force: true });
  }
  const images = readdirSync(imageCacheDir)
    .filter((name) => name.startsWith(`${imageName}-`))
    .map((name) => path.join(imageCacheDir, name))
    .filter((dir) => dir !== current)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  for (const old of images.slice(keptImages - 1)) rmSync(old, { recursive: true, force: true });
}

/** sha256 over everything the image is made of; 16 hex digits name its cache directory. */
function imageKey(bundleSha256: string, debianPackages: readonly string[]): string {
  const hash = createHash("sha256").update(bundleSha256).update(nodeBinarySha256()).update(debianPackages.join(" "));
  for (const file of ["Dockerfile", ".dockerignore"]) hash.update(readFileSync(path.join(repoRoot, file)));
  for (const recipe of ["image-build.ts", "image-base.ts"]) hash.update(readFileSync(new URL(recipe, import.meta.url)));
  return hash.digest("hex").slice(0, 16);
}

interface OciDescriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
}

/** The manifest digest, the compressed size (layer blobs) and the unpacked size (layers gunzipped) of the image `tag` in a layout. */
async function layoutSizes(
  layout: string,
  tag: string,
): Promise<{ digest: string; compressedBytes: number; unpackedBytes: number }> {
  const blob = (digest: string) => path.join(layout, "blobs", ...digest.split(":"));
  const index = JSON.parse(readFileSync(path.join(layout, "index.json"), "utf8")) as { manifests: OciDescriptor[] };
  const entry = index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === tag);
  if (!entry) throw new Error(`the image layout ${layout} has no tag ${tag}`);
  const manifest = JSON.parse(readFileSync(blob(entry.digest), "utf8")) as { layers: OciDescriptor[] };
  let compressedBytes = 0;
  let unpackedBytes = 0;
  for (const layer of manifest.layers) {
    if (!layer.mediaType.endsWith("+gzip")) throw new Error(`layer ${layer.digest} is ${layer.mediaType}, not gzip`);
    compressedBytes += layer.size;
    for await (const chunk of createReadStream(blob(layer.digest)).pipe(createGunzip())) {
      unpackedBytes += (chunk as Buffer).byteLength;
    }
  }
  return { digest: entry.digest, compressedBytes, unpackedBytes };
}
