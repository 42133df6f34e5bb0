/**
 * Image names as Docker reads them, and the platform's registry allow-list over them: the admission webhook
 * judges `spec.image` with it and the chart engine every image a chart renders. Pure.
 *
 * Compared after Docker's normalisation (`nginx` is `docker.io/library/nginx`, `index.docker.io` is `docker.io`),
 * on path-segment boundaries: `ghcr.io/acme` allows `ghcr.io/acme/app`, never `ghcr.io/acme-evil/app`.
 */

/** Docker Hub's names: its canonical host, the legacy one, and the path prefix of its official images. */
export const dockerHub = "docker.io";
export const legacyDockerHub = "index.docker.io";
export const officialImages = "library";

/**
 * The repository name of an image reference as Docker reads it: registry host (lower case) and path, without tag
 * and digest. `nginx:1.27` → `docker.io/library/nginx`, `acme/app` → `docker.io/acme/app`,
 * `Registry.Example.com:5000/team/app@sha256:…` → `registry.example.com:5000/team/app`. The first path segment is
 * a registry when it has a `.` or a `:`, or is `localhost` (distribution's rule).
 */
export function normalizedImageName(reference: string): string {
  // The name ends at the digest, then at a tag's colon after the last slash (a port's colon comes before it).
  const withoutDigest = reference.split("@")[0] ?? "";
  const lastSlash = withoutDigest.lastIndexOf("/");
  const tagColon = withoutDigest.indexOf(":", lastSlash + 1);
  const name = tagColon === -1 ? withoutDigest : withoutDigest.slice(0, tagColon);
  return normalizedRepository(name);
}

function normalizedRepository(name: string): string {
  const slash = name.indexOf("/");
  const first = slash === -1 ? "" : name.slice(0, slash);
  if (slash !== -1 && looksLikeRegistry(first)) {
    const host = canonicalRegistryHost(first);
    const path = name.slice(slash + 1);
    return host === dockerHub && !path.includes("/") ? `${host}/${officialImages}/${path}` : `${host}/${path}`;
  }
  return name.includes("/") ? `${dockerHub}/${name}` : `${dockerHub}/${officialImages}/${name}`;
}

/** A registry host as Docker names it: lower case, Docker Hub's legacy name as its canonical one. */
export function canonicalRegistryHost(host: string): string {
  const lower = host.toLowerCase();
  return lower === legacyDockerHub ? dockerHub : lower;
}

/** True when an image name's first segment is a registry host (a `.` or `:`, `localhost`, an IPv6 literal). */
export function looksLikeRegistry(segment: string): boolean {
  return segment.includes(".") || segment.includes(":") || segment === "localhost" || segment.startsWith("[");
}

/** The allow-list entry that covers `image` (after normalisation), or undefined; an empty list allows any. */
export function registryAllowing(allowed: readonly string[], image: string): string | undefined {
  const name = normalizedImageName(image);
  return allowed.find((prefix) => name === prefix || name.startsWith(`${prefix}/`));
}

const registryEntryPattern =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[a-f0-9:]+\])(?::[0-9]+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

/**
 * One entry of the registry allow-list (operator `--allowed-registries`, MyAppOperator `policy.allowedRegistries`):
 * a prefix `host[:port][/path]` that starts with a registry host, so `acme` is refused (it would mean
 * `docker.io/acme`, and the platform owner should say so). Normalised as image names are: `index.docker.io` →
 * `docker.io`, host in lower case, no trailing slash. The operator and the component both read entries here, so
 * what one accepts the other does.
 */
export function parseRegistryEntry(entry: string): { readonly prefix: string } | { readonly problem: string } {
  const bare = entry.trim().replace(/\/+$/, "");
  const slash = bare.indexOf("/");
  const host = (slash === -1 ? bare : bare.slice(0, slash)).toLowerCase();
  const path = slash === -1 ? "" : bare.slice(slash);
  const prefix = `${canonicalRegistryHost(host)}${path}`;
  if (!looksLikeRegistry(host)) {
    return {
      problem: `"${entry}" does not start with a registry host (one with a '.' or ':', or localhost); write docker.io/${bare} for Docker Hub`,
    };
  }
  if (bare.includes("@") || /:[^/]*$/.test(path)) {
    return { problem: `"${entry}" must be a registry and path prefix, without tag or digest` };
  }
  if (!registryEntryPattern.test(prefix)) {
    return { problem: `"${entry}" is not host[:port][/path] with a lower-case path, such as ghcr.io/acme` };
  }
  return { prefix };
}
