/**
 * The CRD is shared: every platform on a cluster installs the one `myappinstances.example.com` and none deletes it.
 * A platform on an older myapp-platform build would put its older CRD back over a newer one, dropping fields a
 * newer operator writes (its status writes then fail and its instances never become Ready). So before the
 * component applies its CRD, it reads the live one's schema revision (api/crd-revision.ts, an annotation) and
 * refuses to go back. Pure but for the read, which goes through cluster-read.ts and is loaded only when it runs.
 */
import { crdName, crdRevisionAnnotation } from "../api/index.ts";
import type { ClusterConnection } from "./cluster-connection.ts";
import type { CustomResourceDefinitionManifest } from "./manifest-types.ts";

/** Slower than this and the check gives up: a preview must not stall on a slow or absent cluster. */
export const crdReadTimeoutMs = 5_000;

/**
 * The live CRD's revision annotation as found (undefined: no CRD yet, or one without it, as older builds apply),
 * or why the CRD could not be read.
 */
export type LiveCrdRevision = { readonly revision: string | undefined } | { readonly unavailable: string };

/** Reads the live CRD's revision through a connection. */
export type CrdRevisionReader = (connection: ClusterConnection) => Promise<LiveCrdRevision>;

/** What to do with this package's CRD, given the live one. */
export type CrdRevisionVerdict =
  | { readonly verdict: "apply" }
  | { readonly verdict: "warn"; readonly message: string }
  | { readonly verdict: "refuse"; readonly message: string };

/** A revision as the annotation writes it (a whole number from 1, decimal), or undefined for anything else. */
export function parseCrdRevision(text: string | undefined): number | undefined {
  return text !== undefined && /^[1-9][0-9]{0,8}$/.test(text) ? Number(text) : undefined;
}

/** The revision a CRD manifest carries, or undefined when it carries none (a manifest from elsewhere). */
export function crdRevisionOf(crd: CustomResourceDefinitionManifest): number | undefined {
  return parseCrdRevision(crd.metadata?.annotations?.[crdRevisionAnnotation]);
}

/**
 * Whether to apply a CRD of revision `own` over the live one whose annotation reads `live`: a live revision
 * higher than `own` is refused; none (no CRD, or an older build's without the annotation), a lower or the same
 * is applied, as is a value that is no revision (with a warning).
 */
export function crdRevisionVerdict(subject: string, own: number, live: string | undefined): CrdRevisionVerdict {
  if (live === undefined) return { verdict: "apply" };
  const liveRevision = parseCrdRevision(live);
  if (liveRevision === undefined) {
    return {
      verdict: "warn",
      message:
        `${subject}: the cluster's CRD ${crdName} has the annotation ${crdRevisionAnnotation}: ${JSON.stringify(live)}, ` +
        `which is no schema revision; applying this package's revision ${own} over it`,
    };
  }
  if (liveRevision <= own) return { verdict: "apply" };
  return {
    verdict: "refuse",
    message:
      `${subject}: the cluster's CRD ${crdName} is at schema revision ${liveRevision} (annotation ` +
      `${crdRevisionAnnotation}), newer than this myapp-platform package's revision ${own}: a platform on this ` +
      "cluster runs a newer build, and putting this package's older CRD back would drop fields its operator " +
      "writes (its instances' status writes would fail). Upgrade this project's myapp-platform to that build: " +
      "copy its tarball here, `npm install ./myapp-platform-VERSION.tgz`, then `pulumi up` (README, " +
      '"Upgrading"). A shared CRD is never downgraded; only when no platform on the cluster runs the newer build ' +
      `any more, remove the annotation (\`kubectl annotate crd ${crdName} ${crdRevisionAnnotation}-\`) and run again.`,
  };
}

/** The live CRD's revision annotation, read with a short timeout through `connection`. */
export async function readLiveCrdRevision(connection: ClusterConnection): Promise<LiveCrdRevision> {
  const { readCluster } = await import("./cluster-read.ts");
  const read = await readCluster(connection, crdReadTimeoutMs, async (client) => {
    const live = await client.find("apiextensions.k8s.io/v1", "CustomResourceDefinition", crdName);
    return live?.metadata.annotations?.[crdRevisionAnnotation];
  });
  return "unavailable" in read ? read : { revision: read.value };
}
