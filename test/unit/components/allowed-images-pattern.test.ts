import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isImageReference } from "../../../api/image-reference.ts";
import { allowedImagesPattern } from "../../../components/allowed-images-pattern.ts";
import { parseAllowedRegistries, registryAllowing } from "../../../operator/admission/policy.ts";

/** What the apiserver's rule decides with the pattern (instance-policy.ts writes the same in CEL). */
function patternAllows(entries: readonly string[], image: string): boolean {
  const { pattern, hub } = allowedImagesPattern(entries);
  return (
    (pattern !== undefined && new RegExp(pattern).test(image)) ||
    (hub !== undefined && new RegExp(hub).test(image) && !image.startsWith("localhost/"))
  );
}

const hosts = [
  "",
  "docker.io/",
  "DOCKER.io/",
  "index.docker.io/",
  "Index.Docker.IO/",
  "docker.io:443/",
  "ghcr.io/",
  "GHCR.io/",
  "ghcr.io.evil/",
  "localhost/",
  "LOCALHOST/",
  "localhost:5000/",
  "registry.example:5000/",
  "registry.example/",
  "[::1]:5000/",
  "evil.io/",
];
const paths = [
  "nginx",
  "library",
  "library/nginx",
  "library/nginxx",
  "library/nginx/sub",
  "acme",
  "acme/app",
  "acme-evil/app",
  "acmeapp",
  "apps/web",
  "apps/team/web",
  "appsweb",
  "library/docker.io",
  "localhost/app",
  "docker.io/library/nginx",
];
const suffixes = ["", ":1.27", "@sha256:" + "a".repeat(64), ":v2@sha256:" + "b".repeat(64)];
const images = hosts.flatMap((host) =>
  paths.flatMap((path) => suffixes.map((suffix) => `${host}${path}${suffix}`)).filter(isImageReference),
);

const allowLists = [
  ["docker.io"],
  ["docker.io/library"],
  ["index.docker.io/library/"],
  ["docker.io/library/nginx"],
  ["docker.io/library/nginx/sub"],
  ["docker.io/acme"],
  ["docker.io/acme/app"],
  ["docker.io/localhost"],
  ["ghcr.io"],
  ["ghcr.io/acme"],
  ["GHCR.io/acme/app"],
  ["localhost"],
  ["localhost/app"],
  ["localhost:5000"],
  ["registry.example:5000/apps/team"],
  ["registry.example/apps"],
  ["[::1]:5000"],
  ["docker.io/library", "registry.example/apps"],
  ["docker.io", "localhost"],
  ["evil.io/docker.io"],
];

describe("allowedImagesPattern", () => {
  it("admits exactly the image references the webhook's normalisation admits", () => {
    assert.ok(images.length > 600, `a corpus of ${images.length} references`);
    let allowedSomewhere = 0;
    for (const flag of allowLists) {
      const entries = parseAllowedRegistries(flag.join(","));
      for (const image of images) {
        const expected = registryAllowing(entries, image) !== undefined;
        allowedSomewhere += expected ? 1 : 0;
        assert.equal(patternAllows(entries, image), expected, `${image} under ${entries.join(",")}`);
      }
    }
    // Both verdicts occur often: the corpus is not one-sided.
    assert.ok(allowedSomewhere > 500 && allowedSomewhere < images.length * allowLists.length - 500);
  });

  it("is one anchored pattern of syntax RE2 reads alike (no lookarounds, no inline flags)", () => {
    const { pattern, hub } = allowedImagesPattern(["docker.io", "ghcr.io/acme", "localhost:5000/a.b"]);
    for (const text of [pattern, hub]) {
      assert.ok(text?.startsWith("^"));
      assert.doesNotMatch(text ?? "", /\(\?[=!<i]/);
    }
    assert.equal(allowedImagesPattern(["docker.io/library"]).hub, undefined, "no Docker Hub-wide entry, no hub part");
  });
});
