/**
 * The CRD's schema revision (api/crd-revision.ts): it stands for exactly one generated spec, so it can never fall
 * behind the schema, and it travels on the CRD as an annotation.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { parse } from "yaml";
import { buildCrd, crdRevision, crdRevisionAnnotation, crdRevisionDigest, crdSpecDigest } from "../../../api/index.ts";
import { crdPath } from "../../../api/crd-path.ts";

type Crd = { metadata: { annotations?: Record<string, string> }; spec: Record<string, unknown> };

describe("the CRD's schema revision", () => {
  test("stands for the generated spec (bump the revision when the schema changes)", () => {
    const digest = crdSpecDigest();
    assert.ok(
      digest === crdRevisionDigest,
      `The generated CRD's spec changed (digest ${digest}), but api/crd-revision.ts still records revision ` +
        `${crdRevision} for ${crdRevisionDigest}. Set crdRevision to ${crdRevision + 1} and crdRevisionDigest to ` +
        `"${digest}" there, then run 'npm run manifests': platforms sharing a cluster compare this revision, and ` +
        `one on an older build must not put an older schema back under the same number.`,
    );
  });

  test("is a whole number of at least 1, and the digest is a sha256", () => {
    assert.ok(Number.isSafeInteger(crdRevision) && crdRevision >= 1, String(crdRevision));
    assert.match(crdRevisionDigest, /^sha256:[0-9a-f]{64}$/);
  });

  test("is the generated and the committed CRD's annotation", () => {
    const generated = buildCrd() as unknown as Crd;
    assert.equal(generated.metadata.annotations?.[crdRevisionAnnotation], String(crdRevision));
    const committed = parse(readFileSync(crdPath, "utf8")) as Crd;
    assert.equal(committed.metadata.annotations?.[crdRevisionAnnotation], String(crdRevision));
    assert.equal(crdRevisionAnnotation, "myapp.example.com/schema-revision");
  });

  test("the digest follows what the spec says, not its key order, and leaves the annotation out", () => {
    const { spec } = buildCrd() as unknown as Crd;
    const reordered = Object.fromEntries(Object.entries(spec).reverse());
    assert.equal(crdSpecDigest(reordered), crdSpecDigest(spec));
    // A field dropped from the schema (as an older build's CRD lacks one) is another digest.
    const versions = structuredClone(spec["versions"]) as {
      schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } };
    }[];
    const status = versions[0]!.schema.openAPIV3Schema.properties.status.properties;
    assert.ok("chartUsage" in status, "status.chartUsage is in the schema");
    delete status["chartUsage"];
    assert.notEqual(crdSpecDigest({ ...spec, versions }), crdSpecDigest(spec));
  });
});
