/**
 * Pushes the built operator image (an OCI layout in the cache, image-build.ts) to a registry the user names,
 * without a daemon: `skopeo copy oci:<layout>:<tag> docker://<destination>`. skopeo takes credentials where
 * docker and podman keep them (`skopeo login REGISTRY`, or ~/.docker/config.json). TLS is verified unless the
 * caller asks otherwise, for a local registry that speaks plain HTTP.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isImageReference } from "../../api/index.ts";
import type { OperatorImage } from "./image-build.ts";
import { ensureImageTools } from "./image-tools.ts";
import { run } from "./run.ts";

export interface PushOptions {
  /** false: `--dest-tls-verify=false`, for a registry on plain HTTP (a local one). @default true */
  readonly tlsVerify?: boolean;
  readonly step: (message: string) => void;
}

export interface PushedImage {
  /** `REGISTRY/NAME:TAG` as given. */
  readonly reference: string;
  /** The manifest digest the registry stored (`sha256:...`). */
  readonly digest: string;
  /** The reference pinned to that digest, for `image`: `REGISTRY/NAME@sha256:...`. */
  readonly pinned: string;
}

/**
 * Why `destination` cannot be pushed to, or undefined when it can: a registry host and a repository, an optional
 * tag; no transport prefix (skopeo's `docker://` is added here) and no digest (the registry computes it).
 */
export function pushDestinationProblem(destination: string): string | undefined {
  const usage = "give REGISTRY/NAME:TAG, for example registry.example.com/platform/myapp-operator:0.2.0";
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(destination)) return `"${destination}" has a scheme: ${usage}`;
  if (destination.includes("@")) return `"${destination}" has a digest; the registry computes it: ${usage}`;
  if (!isImageReference(destination)) return `"${destination}" is not an image reference: ${usage}`;
  // Without a registry host, docker:// would push to Docker Hub: make that an explicit choice (docker.io/...).
  const first = destination.split("/")[0] ?? "";
  if (!destination.includes("/") || !(first.includes(".") || first.includes(":") || first === "localhost")) {
    return `"${destination}" names no registry host (a first part with a '.' or ':', or localhost): ${usage}`;
  }
  return undefined;
}

/** skopeo's arguments for the push (exported for the unit test of what `--no-tls-verify` changes). */
export function skopeoCopyArgs(imageRef: string, destination: string, digestFile: string, tlsVerify: boolean) {
  return [
    "copy",
    "--quiet",
    ...(tlsVerify ? [] : ["--dest-tls-verify=false"]),
    "--digestfile",
    digestFile,
    `oci:${imageRef}`,
    `docker://${destination}`,
  ];
}

/** Pushes `image` to `destination` and returns the digest the registry answered. */
export async function pushOperatorImage(
  image: OperatorImage,
  destination: string,
  { tlsVerify = true, step }: PushOptions,
): Promise<PushedImage> {
  const problem = pushDestinationProblem(destination);
  if (problem) throw new Error(`--push: ${problem}`);
  const tools = await ensureImageTools(["skopeo"], step);
  const work = mkdtempSync(path.join(os.tmpdir(), "myapp-push-"));
  try {
    const digestFile = path.join(work, "digest");
    step(`pushing to ${destination}${tlsVerify ? "" : " (TLS not verified)"}`);
    await run(tools.skopeo, skopeoCopyArgs(image.ref, destination, digestFile, tlsVerify));
    const digest = readFileSync(digestFile, "utf8").trim();
    const name = destination.replace(/:[^/:]+$/, "");
    return { reference: destination, digest, pinned: `${name}@${digest}` };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
