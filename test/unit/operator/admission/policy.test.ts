/**
 * Image names as Docker normalises them, the registry allow-list's segment-boundary match, and the parsers of
 * the policy's and the webhook's values.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCertificateAuthority, createServingCertificate } from "../../../../operator/admission/certificates.ts";
import {
  normalizedImageName,
  parseAllowedRegistries,
  maxCertValidityHours,
  parseCertValidity,
  parseCountLimit,
  parseDuration,
  parseStorageLimit,
  registryAllowing,
} from "../../../../operator/admission/policy.ts";

describe("normalizedImageName", () => {
  it("reads references as Docker does: Docker Hub's host and library/ prefix, tags and digests dropped", () => {
    const digest = `sha256:${"a".repeat(64)}`;
    const cases: [string, string][] = [
      ["nginx", "docker.io/library/nginx"],
      ["nginx:1.27", "docker.io/library/nginx"],
      [`nginx@${digest}`, "docker.io/library/nginx"],
      [`nginx:1.27@${digest}`, "docker.io/library/nginx"],
      ["acme/app:2", "docker.io/acme/app"],
      ["docker.io/nginx", "docker.io/library/nginx"],
      ["index.docker.io/acme/app", "docker.io/acme/app"],
      ["ghcr.io/acme/app:1.0", "ghcr.io/acme/app"],
      ["Registry.Example.com:5000/team/app:1", "registry.example.com:5000/team/app"],
      ["localhost:5000/app", "localhost:5000/app"],
      ["localhost/app", "localhost/app"],
      ["[::1]:5000/app:v1", "[::1]:5000/app"],
      // "team" has no '.' or ':' and is not localhost: a Docker Hub user, not a registry.
      ["team/group/app", "docker.io/team/group/app"],
    ];
    for (const [reference, name] of cases) assert.equal(normalizedImageName(reference), name, reference);
  });
});

describe("registryAllowing", () => {
  const allowed = ["docker.io/library", "ghcr.io/acme", "localhost:5000"];

  it("allows a name equal to an entry or below it", () => {
    assert.equal(registryAllowing(allowed, "nginx:1.27"), "docker.io/library");
    assert.equal(registryAllowing(allowed, "ghcr.io/acme/app:1"), "ghcr.io/acme");
    assert.equal(registryAllowing(allowed, "ghcr.io/acme/team/app"), "ghcr.io/acme");
    assert.equal(registryAllowing(["ghcr.io/acme/app"], "ghcr.io/acme/app:1"), "ghcr.io/acme/app");
    assert.equal(registryAllowing(allowed, "localhost:5000/x"), "localhost:5000");
  });

  it("matches on path-segment boundaries only", () => {
    assert.equal(registryAllowing(allowed, "ghcr.io/acme-evil/app"), undefined);
    assert.equal(registryAllowing(allowed, "ghcr.io/acmeapp"), undefined);
    assert.equal(registryAllowing(allowed, "localhost:50001/x"), undefined);
    // docker.io/library does not cover other Docker Hub users, nor the same path on another host.
    assert.equal(registryAllowing(allowed, "acme/app"), undefined);
    assert.equal(registryAllowing(allowed, "evil.io/library/nginx"), undefined);
  });

  it("an image that spells Docker Hub differently is still Docker Hub", () => {
    assert.equal(registryAllowing(["docker.io/acme"], "index.docker.io/acme/app"), "docker.io/acme");
    assert.equal(registryAllowing(["docker.io/acme"], "acme/app"), "docker.io/acme");
  });
});

describe("policy value parsers", () => {
  it("registries: entries normalised, blanks dropped, unset is any", () => {
    assert.deepEqual(parseAllowedRegistries(undefined), []);
    assert.deepEqual(parseAllowedRegistries(" , "), []);
    assert.deepEqual(parseAllowedRegistries("Index.Docker.io/acme/,[::1]:5000"), ["docker.io/acme", "[::1]:5000"]);
  });

  it("registries: every bad entry is named in one error", () => {
    assert.throws(
      () => parseAllowedRegistries("acme,ghcr.io/x@sha256:ab"),
      (error: Error) =>
        error.message.startsWith("--allowed-registries: ") &&
        error.message.includes('"acme" does not start with a registry host') &&
        error.message.includes('"ghcr.io/x@sha256:ab" must be a registry and path prefix, without tag or digest'),
    );
  });

  it("registries: one listed twice is refused, compared as normalised, as --namespaces refuses a repeat", () => {
    // GIVEN one registry twice, as written and written differently
    // THEN each is refused naming it (and what it reads as), not kept silently
    assert.throws(
      () => parseAllowedRegistries("ghcr.io/acme,docker.io/library,ghcr.io/acme"),
      /^Error: --allowed-registries: "ghcr.io\/acme" is listed twice; list it once$/,
    );
    assert.throws(
      () => parseAllowedRegistries("docker.io/acme, Index.Docker.io/acme/", "MYAPP_ALLOWED_REGISTRIES"),
      /^Error: MYAPP_ALLOWED_REGISTRIES: "Index.Docker.io\/acme\/" is listed twice \(as docker.io\/acme\); list it once$/,
    );
  });

  it("storage limits: quantities, with or without 0 allowed", () => {
    assert.equal(parseStorageLimit("100Gi", 1)?.nanos, 100n * 2n ** 30n * 10n ** 9n);
    assert.equal(parseStorageLimit("0", 1), undefined);
    assert.equal(parseStorageLimit("0", 0)?.nanos, 0n);
    assert.equal(parseStorageLimit("-1Gi", 0), undefined);
    assert.equal(parseStorageLimit("lots", 0), undefined);
  });

  it("count limits: whole numbers, 0 included", () => {
    assert.equal(parseCountLimit("0"), 0);
    assert.equal(parseCountLimit(" 12 "), 12);
    for (const bad of ["", "-1", "1.5", "ten", "1e3", "99999999999999999999"]) {
      assert.equal(parseCountLimit(bad), undefined, bad);
    }
  });

  it("durations: Go's units, combined", () => {
    assert.equal(parseDuration("f", "2160h"), 2160 * 3_600_000);
    assert.equal(parseDuration("f", "1h30m"), 5_400_000);
    assert.equal(parseDuration("f", "1.5s"), 1500);
    assert.equal(parseDuration("f", "1500ms"), 1500);
    assert.throws(() => parseDuration("--x", "999ms"), /--x must be a duration of at least 1s/);
  });

  it("the certificate's validity: at most 10 years, so that the CA's ten times that is a date X.509 can hold", async () => {
    // GIVEN the longest validity the flag takes
    const longest = parseCertValidity("--webhook-cert-validity", `${maxCertValidityHours}h`);
    assert.equal(longest, 87_600 * 3_600_000);
    // THEN the operator can make its CA (10 times as long) and the serving certificate with it
    const nowMs = Date.now();
    const ca = await createCertificateAuthority({ validityMs: 10 * longest, nowMs });
    await assert.doesNotReject(createServingCertificate({ ca, hosts: ["localhost"], validityMs: longest, nowMs }));
    // AND a longer one, which would fail at start when the certificates are made, is refused naming the cap
    for (const validity of ["87601h", "100000000h", "87600h1s"]) {
      assert.throws(
        () => parseCertValidity("--webhook-cert-validity", validity),
        new RegExp(
          `^Error: --webhook-cert-validity must be a duration of at least 1s such as 2160h, 90m or 60s, and at most ` +
            `87600h \\(10 years: the CA lives 10 times as long\\), got "${validity}"$`,
        ),
        validity,
      );
    }
  });
});
