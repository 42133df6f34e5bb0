/**
 * What the cluster serves, as Helm's `.Capabilities.APIVersions` holds it: every `group/version` and every
 * `group/version/Kind` (subresources' kinds too), exactly the set `helm install` builds from discovery
 * (helm.sh/helm/v4 pkg/action GetVersionSet). Read with aggregated discovery (two GETs: /api and /apis), or with
 * the older per-group discovery where the server does not offer it. Discovery is open to every authenticated
 * user (the `system:discovery` ClusterRole), so it needs no RBAC rule of ours.
 */
import type { KubeClient } from "./client.ts";

/** Aggregated discovery first (Kubernetes ≥ 1.30 serves it), the classic lists otherwise. */
const aggregatedAccept =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/** `apidiscovery.k8s.io/v2` APIGroupDiscoveryList, as far as the version set needs it. */
export interface AggregatedDiscovery {
  readonly kind: "APIGroupDiscoveryList";
  readonly items?: readonly {
    readonly metadata?: { readonly name?: string };
    readonly versions?: readonly {
      readonly version?: string;
      readonly freshness?: string;
      readonly resources?: readonly {
        readonly responseKind?: { readonly kind?: string } | null;
        readonly subresources?: readonly { readonly responseKind?: { readonly kind?: string } | null }[] | null;
      }[];
    }[];
  }[];
}

/** A classic `/api/v1` or `/apis/GROUP/VERSION` APIResourceList. */
export interface ResourceList {
  readonly groupVersion?: string;
  readonly resources?: readonly { readonly kind?: string }[];
}

/** The version set of one or more aggregated discovery documents (/api and /apis), sorted. Pure. */
export function apiVersionsFromAggregated(documents: readonly AggregatedDiscovery[]): string[] {
  const versions = new Set<string>();
  for (const document of documents) {
    for (const group of document.items ?? []) {
      const name = group.metadata?.name ?? "";
      for (const version of group.versions ?? []) {
        if (!version.version) continue;
        const groupVersion = name === "" ? version.version : `${name}/${version.version}`;
        versions.add(groupVersion);
        // A stale group version (its aggregated server is down) has no trustworthy resources: client-go skips them.
        if (version.freshness === "Stale") continue;
        for (const resource of version.resources ?? []) {
          addKind(versions, groupVersion, resource.responseKind?.kind);
          for (const sub of resource.subresources ?? []) addKind(versions, groupVersion, sub.responseKind?.kind);
        }
      }
    }
  }
  return [...versions].sort();
}

/** The version set of classic discovery: the served group versions and their resource lists, sorted. Pure. */
export function apiVersionsFromResourceLists(
  groupVersions: readonly string[],
  lists: readonly ResourceList[],
): string[] {
  const versions = new Set<string>(groupVersions);
  for (const list of lists) {
    if (!list.groupVersion) continue;
    for (const resource of list.resources ?? []) addKind(versions, list.groupVersion, resource.kind);
  }
  return [...versions].sort();
}

/** Every `group/version` and `group/version/Kind` the cluster serves, sorted (see the file's comment). */
export async function discoverApiVersions(client: KubeClient): Promise<string[]> {
  const [core, groups] = await Promise.all([
    client.raw("/api", { accept: aggregatedAccept }),
    client.raw("/apis", { accept: aggregatedAccept }),
  ]);
  const coreDocument = JSON.parse(core) as { kind?: string; versions?: string[] };
  const groupsDocument = JSON.parse(groups) as {
    kind?: string;
    groups?: { versions?: { groupVersion?: string }[] }[];
  };
  if (coreDocument.kind === "APIGroupDiscoveryList" && groupsDocument.kind === "APIGroupDiscoveryList") {
    return apiVersionsFromAggregated([
      coreDocument as unknown as AggregatedDiscovery,
      groupsDocument as unknown as AggregatedDiscovery,
    ]);
  }
  const groupVersions = [
    ...(coreDocument.versions ?? []),
    ...(groupsDocument.groups ?? []).flatMap((group) =>
      (group.versions ?? []).map((version) => version.groupVersion ?? "").filter(Boolean),
    ),
  ];
  const lists = await Promise.all(
    groupVersions.map(async (groupVersion) => {
      const path = groupVersion.includes("/") ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
      // A group whose server does not answer is left out, as Helm does (it tolerates partial discovery).
      return client.raw(path).then(
        (text) => JSON.parse(text) as ResourceList,
        () => ({}) as ResourceList,
      );
    }),
  );
  return apiVersionsFromResourceLists(groupVersions, lists);
}

function addKind(versions: Set<string>, groupVersion: string, kind: string | undefined): void {
  if (kind) versions.add(`${groupVersion}/${kind}`);
}

/**
 * What `helm install` tells a chart about the cluster: the server's version (`.Capabilities.KubeVersion`) and its
 * version set (`.Capabilities.APIVersions`). Three GETs: /version, /api, /apis.
 */
export async function readClusterCapabilities(
  client: KubeClient,
): Promise<{ readonly kubeVersion: string; readonly apiVersions: readonly string[] }> {
  const [version, apiVersions] = await Promise.all([client.raw("/version"), discoverApiVersions(client)]);
  return { kubeVersion: (JSON.parse(version) as { gitVersion?: string }).gitVersion ?? "", apiVersions };
}
