/**
 * The CRD's schema revision: a whole number that grows with every change of the generated CRD's spec, written on
 * the CRD as {@link crdRevisionAnnotation}. Platforms on one cluster share its one CRD; before applying theirs,
 * they read the live revision and refuse to put an older CRD back over a newer one
 * (components/crd-revision-guard.ts), which would drop fields a newer operator writes.
 *
 * {@link crdRevisionDigest} is the digest of the spec this revision stands for (`crdSpecDigest()` in crd.ts). A
 * unit test fails when the generated spec no longer matches it, so a schema change cannot ship under an old
 * revision: bump {@link crdRevision} and record the new digest, in the same change.
 */

/** The revision of the CRD this package generates and installs. */
export const crdRevision = 4;

/** `crdSpecDigest()` of the spec {@link crdRevision} stands for. */
export const crdRevisionDigest = "sha256:4d5632bcd0208fd85345614a6ce34887e2f5fa230051da816a9294a0afc2a93b";

/** The CRD annotation that carries the revision, as a decimal string. */
export const crdRevisionAnnotation = "myapp.example.com/schema-revision";
