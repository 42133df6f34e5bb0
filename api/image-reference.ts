/**
 * OCI image references, by the grammar of github.com/distribution/reference (what `docker pull` and the kubelet
 * accept): `[host[:port]/]path[:tag][@digest]`. One pattern string serves both layers: zod compiles it as an
 * ECMAScript RegExp and the apiserver as a Go RE2 regexp from the CRD's `pattern`, so it sticks to syntax both
 * read the same way (no lookarounds, no backreferences, ASCII classes only). Slashes are escaped so that the
 * string equals `RegExp.source`, which is what zod writes into the JSON Schema.
 */

// A registry host: DNS labels joined by dots, or a bracketed IPv6 address; an optional port.
const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const domainAndPort = `${host}(?::[0-9]+)?`;

// Repository path components are lower case, separated by ".", "_", "__" or runs of "-".
const pathComponent = "[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
const remoteName = `${pathComponent}(?:\\/${pathComponent})*`;

const tag = "[\\w][\\w.-]{0,127}";
// algorithm[+.-_algorithm]:hex, at least 128 bits of hex (sha256 has 64 digits).
const digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

/** The anchored pattern, as it appears in the CRD's `pattern` and in the zod schema. */
export const imageReferencePattern = `^(?:${domainAndPort}\\/)?${remoteName}(?::${tag})?(?:@${digest})?$`;

/**
 * Longest image reference we accept. A name has at most 255 characters, a tag adds up to 129 and a sha512
 * digest 136, so 1024 leaves room and keeps the regexp's worst case small.
 */
export const maxImageReferenceLength = 1024;

/** Longest repository name (registry and path), distribution's `NameTotalLengthMax`. */
export const maxImageNameLength = 255;

/**
 * Finds the name part (registry and path, before `:tag` and `@digest`) of a reference that matches
 * {@link imageReferencePattern}. A regular language cannot count to 255 cheaply, so the length is checked on
 * this part separately: by CEL's `find()` in the CRD and by {@link imageNameLength} in TS.
 */
export const imageNamePattern = "^(?:[^/@]+/)?[^:@]+";

const imageNameRegExp = new RegExp(imageNamePattern);

/** Length of the name part of an image reference, as CEL's `size(self.find(imageNamePattern))` computes it. */
export function imageNameLength(reference: string): number {
  return imageNameRegExp.exec(reference)?.[0].length ?? 0;
}

/** The pattern compiled for TS callers. */
export const imageReferenceRegExp = new RegExp(imageReferencePattern);

/** True when `text` is a valid image reference of acceptable length. */
export function isImageReference(text: string): boolean {
  return (
    text.length <= maxImageReferenceLength &&
    imageReferenceRegExp.test(text) &&
    imageNameLength(text) <= maxImageNameLength
  );
}
