/**
 * The registry allow-list as one regular expression over the image reference itself, for the apiserver's policy
 * (instance-policy.ts): it admits exactly the references whose Docker-normalised name the operator's webhook
 * admits (operator/admission/policy.ts `registryAllowing`), without computing that name. Normalising in CEL took
 * eight variables, each a program the apiserver evaluates with its own cost tracker on every write; one `matches()`
 * against a pattern compiled with the policy costs a fraction of that (bench/RESULTS.md, admission).
 *
 * It relies on what the CRD's schema has already checked before any validating admission runs: the reference
 * follows the distribution grammar (api/image-reference.ts), so a path has no `:` or `@`, and what follows the
 * name is `:tag`, `@digest`, or nothing. Written by hand: no library turns a prefix list into such a pattern. The
 * syntax is what RE2 and ECMAScript read alike (no lookarounds, no inline flags), so the unit tests run the very
 * pattern against the webhook's function.
 */

import { dockerHub, legacyDockerHub, looksLikeRegistry, officialImages } from "../api/index.ts";

/** The end of the name: a tag, a digest, or the end of the reference. */
const nameEnd = "(?:[:@]|$)";
/** The end of a path segment: another segment follows, or the name ends. */
const segmentEnd = "(?:[/:@]|$)";
/** A first segment that is no registry host (no `.`, `:` or `[`): the name is Docker Hub's. `localhost` aside. */
const hubFirstSegment = "[^/.:\\[]+/";

/**
 * The pattern, and whether `localhost/…` must be refused separately: a first segment `localhost` is a registry,
 * which RE2 cannot exclude from `hubFirstSegment` without a lookahead. Set only when an entry allows all of Docker
 * Hub (`docker.io`), whose pattern is then given apart as `hub`.
 */
export interface AllowedImagesPattern {
  /** Anchored; matches the references some entry allows (undefined when no entry can match any reference). */
  readonly pattern: string | undefined;
  /** Anchored; the references under a bare `docker.io` entry with a first path segment, except `localhost/…`. */
  readonly hub: string | undefined;
}

/**
 * The pattern for normalised entries (`host[:port][/path]`, host in lower case, `docker.io` for the legacy host, no
 * trailing slash: what api/image-registry.ts `parseRegistryEntry` makes of an entry).
 */
export function allowedImagesPattern(entries: readonly string[]): AllowedImagesPattern {
  const alternatives = new Set<string>();
  let hub = false;
  for (const entry of entries) {
    const slash = entry.indexOf("/");
    const host = slash === -1 ? entry : entry.slice(0, slash);
    const path = slash === -1 ? "" : entry.slice(slash + 1);
    if (host === dockerHub) {
      for (const alternative of dockerHubAlternatives(path)) alternatives.add(alternative);
      hub ||= path === "";
    } else if (looksLikeRegistry(host)) {
      // `localhost` is a registry only as written; a host with `.`, `:` or `[` is one in any case.
      const hostPattern = host === "localhost" ? host : anyCase(host);
      alternatives.add(path === "" ? `${hostPattern}/` : `${hostPattern}/${literal(path)}${segmentEnd}`);
    }
    // Any other host: no reference normalises to it (a first segment that is no registry means Docker Hub).
  }
  return {
    pattern: alternatives.size > 0 ? `^(?:${[...alternatives].join("|")})` : undefined,
    hub: hub ? `^${hubFirstSegment}` : undefined,
  };
}

/**
 * Docker Hub's names under `docker.io/<path>`, written with the host (`docker.io/…`, `index.docker.io/…`, any
 * case) or without (no slash at all: an official image; or a first segment that is no registry). A name of one
 * segment after the host, or without any slash, is an official image: `library/<name>`.
 */
function dockerHubAlternatives(path: string): string[] {
  const withHost = `(?:${anyCase(dockerHub)}|${anyCase(legacyDockerHub)})/`;
  if (path === "") return [withHost, "[^/]*$"]; // and `hub`: a first segment that is no registry
  const segments = path.split("/");
  const first = segments[0] ?? "";
  const alternatives: string[] = [];
  // The name keeps a slash after the host: it must start with the path, on a segment boundary. A path of one
  // segment needs the slash after it (`docker.io/acme` is `docker.io/library/acme`, not under `docker.io/acme`).
  const underPath = segments.length === 1 ? `${literal(path)}/` : `${literal(path)}${segmentEnd}`;
  alternatives.push(`${withHost}${underPath}`);
  if (!looksLikeRegistry(first) && first !== "localhost") alternatives.push(underPath);
  // One segment after the host, or none at all: `library/<segment>`.
  if (first === officialImages) {
    const official =
      segments.length === 1 ? "[^/]*$" : segments.length === 2 ? `${literal(segments[1] ?? "")}${nameEnd}` : undefined;
    if (official !== undefined) alternatives.push(`${withHost}${official}`, official);
  }
  return alternatives;
}

/** The text as a literal (every character that means something in a pattern escaped). */
function literal(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, (c) => `\\${c}`);
}

/** The text in any letter case, each letter a class: `[dD][oO]…` (RE2 and ECMAScript differ on inline flags). */
function anyCase(text: string): string {
  return [...literal(text)].map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c)).join("");
}
