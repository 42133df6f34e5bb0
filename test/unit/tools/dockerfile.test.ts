import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

const repo = new URL("../../../", import.meta.url);

describe("Dockerfile", () => {
  it("labels a plain docker build with the package's version", () => {
    // GIVEN the package's version and the Dockerfile's default VERSION
    const { version } = JSON.parse(readFileSync(new URL("package.json", repo), "utf8")) as { version: string };
    const dockerfile = readFileSync(new URL("Dockerfile", repo), "utf8");
    // THEN they are the same (`npm run image` passes it; `docker build .` takes the default)
    assert.match(dockerfile, new RegExp(`^ARG VERSION=${version.replaceAll(".", "\\.")}$`, "m"));
    assert.match(dockerfile, new RegExp(`myapp-operator:${version.replaceAll(".", "\\.")} \\.`));
  });
});
