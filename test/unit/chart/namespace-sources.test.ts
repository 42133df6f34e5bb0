/**
 * A namespace's chart-sources annotation narrows the platform's allow-list and never widens it; the refusal names
 * the namespace and what it allows.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { allowedBy, namespacePolicy, sameChartSource, sourcePolicy, sourceRefusal } from "../../../chart/index.ts";

const platform = sourcePolicy(["oci://ghcr.io/org/", "https://charts.example.com/stable", "http://10.0.0.5:8080/"]);

describe("namespacePolicy", () => {
  it("is the platform's list when the namespace has no annotation", () => {
    assert.equal(namespacePolicy(platform, undefined), platform);
  });

  it("keeps what both allow: an entry inside a platform prefix as written, the platform prefix inside an entry", () => {
    const narrowed = namespacePolicy(platform, "oci://GHCR.io/org/team-a, https://charts.example.com/\n");
    assert.deepEqual(narrowed.allowed, ["oci://ghcr.io/org/team-a/", "https://charts.example.com/stable/"]);
    assert.ok(allowedBy(narrowed, "oci://ghcr.io/org/team-a/web"));
    assert.ok(!allowedBy(narrowed, "oci://ghcr.io/org/team-b/web"));
    assert.ok(allowedBy(narrowed, "https://charts.example.com/stable/"));
    assert.ok(!allowedBy(narrowed, "https://charts.example.com/incubator/"));
    // Which hosts may be private addresses stays the platform's to say.
    assert.equal(narrowed.privateHosts, platform.privateHosts);
  });

  it("covers no source whose fetched path differs from its written one: dot segments, escapes, backslashes", () => {
    // GIVEN a namespace narrowed to team-a's path
    const narrowed = namespacePolicy(platform, "oci://ghcr.io/org/team-a/");
    // THEN a way out of that path through the URL parser is covered by no entry, the namespace's or the platform's
    for (const source of [
      "oci://ghcr.io/org/team-a/../team-b/app",
      "oci://ghcr.io/org/team-a/%2e%2e/team-b/app",
      "oci://ghcr.io/org/team-a/.%2E/team-b/app",
      "oci://ghcr.io/org/team-a/./app",
      "oci://ghcr.io/org/team-a/x%2F..%2Fteam-b",
      "oci://ghcr.io/org/team-a\\..\\team-b/app",
    ]) {
      assert.equal(allowedBy(narrowed, source), undefined, source);
      assert.equal(allowedBy(platform, source), undefined, source);
    }
    assert.ok(allowedBy(narrowed, "oci://ghcr.io/org/team-a/a..b/.app"));
  });

  it("grants nothing the platform does not: other hosts, a broader path elsewhere, entries that are not URLs", () => {
    for (const annotation of [
      "oci://evil.example/",
      "https://charts.example.com/incubator/",
      "oci://ghcr.io/other/",
      "http://169.254.169.254/",
      "not a url, ftp://ghcr.io/org/, oci://user:pw@ghcr.io/org/",
      "",
      " , ",
    ]) {
      assert.deepEqual(namespacePolicy(platform, annotation).allowed, [], annotation);
    }
  });

  it("with an empty platform list allows nothing, whatever the namespace says", () => {
    assert.deepEqual(namespacePolicy(sourcePolicy([]), "oci://ghcr.io/").allowed, []);
  });
});

describe("sourceRefusal", () => {
  it("names the platform's flag, or the namespace, its annotation and what it allows", () => {
    assert.equal(
      sourceRefusal("oci://x/c:1", sourcePolicy([]), undefined),
      "oci://x/c:1 is not an allowed chart source: the platform allows ConfigMap charts only (--chart-sources); " +
        "use a chart in a ConfigMap, or ask the platform to add the source",
    );
    assert.equal(
      sourceRefusal("oci://x/c:1", namespacePolicy(platform, "oci://ghcr.io/org/a/"), { namespace: "team-a" }),
      "oci://x/c:1 is not an allowed chart source in namespace team-a: its annotation " +
        "myapp.example.com/chart-sources allows oci://ghcr.io/org/a/, within the platform's --chart-sources; " +
        "use a chart in a ConfigMap, or ask the platform to add the source to the namespace",
    );
  });
});

describe("sameChartSource", () => {
  it("matches the platform's chart at any version, and nothing else", () => {
    const chart = { repo: "https://charts.example.com/stable", name: "web", version: "1.0.0" };
    assert.ok(sameChartSource({ ...chart, version: "2.0.0" }, chart));
    assert.ok(!sameChartSource({ ...chart, name: "db" }, chart));
    assert.ok(!sameChartSource(chart, undefined));
    assert.ok(!sameChartSource({ oci: "oci://ghcr.io/org/web", version: "1.0.0" }, chart));
  });
});
