/**
 * Where a chart comes from: a ConfigMap in the instance's namespace (offline), an HTTP chart repository
 * (index.yaml → .tgz), or an OCI registry (the distribution API Helm uses: manifest by tag → chart layer blob).
 * Every source yields the packed chart's bytes, checked against `spec.chart.digest` when given.
 */
import { createHash } from "node:crypto";
import { parse } from "yaml";
import { chartConfigMapKey, type ChartSpec } from "../api/index.ts";

/** A chart that cannot be fetched, or not the pinned one: retried with backoff, reported naming the source. */
export class ChartFetchError extends Error {
  override readonly name = "ChartFetchError";
  /** `ChartFetchFailed`, or `ChartDigestMismatch` when the bytes are not the pinned ones. */
  readonly reason: string;
  constructor(message: string, reason = "ChartFetchFailed", options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

/** Reads a ConfigMap's binaryData (base64 by key); undefined when the ConfigMap does not exist. */
export type ReadConfigMap = (
  name: string,
  namespace: string,
) => Promise<{ readonly binaryData?: Record<string, string> } | undefined>;

export interface ChartSourceOptions {
  readonly readConfigMap: ReadConfigMap;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** The media type of a chart's content layer in an OCI registry. */
export const chartLayerMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

/** How `spec.chart` names its source, for messages: `ConfigMap shop/web-chart`, `oci://… 1.2.3`, … */
export function describeSource(chart: ChartSpec, namespace: string): string {
  if (chart.configMap !== undefined) return `ConfigMap ${namespace}/${chart.configMap}`;
  if (chart.oci !== undefined) return `${chart.oci}:${chart.version ?? ""}`;
  return `chart ${chart.name ?? ""} ${chart.version ?? ""} from ${chart.repo ?? ""}`;
}

/** `sha256:<hex>` of `bytes`. */
export function chartDigest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * A fetcher. Charts from a registry or repository are cached in memory by source and version (a published chart
 * version does not change; the digest pin catches one that did); a ConfigMap is read on every call.
 */
export function chartSource(options: ChartSourceOptions): (chart: ChartSpec, namespace: string) => Promise<Uint8Array> {
  const fetcher = options.fetch ?? globalThis.fetch;
  const cache = new Map<string, Uint8Array>();
  return async (chart, namespace) => {
    const source = describeSource(chart, namespace);
    let bytes: Uint8Array;
    if (chart.configMap !== undefined) {
      bytes = await fromConfigMap(options.readConfigMap, chart.configMap, namespace, source);
    } else {
      const cached = cache.get(source);
      bytes = cached ?? (await fetchRemote(fetcher, chart, source));
      if (!cached) cache.set(source, bytes);
    }
    const digest = chartDigest(bytes);
    if (chart.digest !== undefined && chart.digest !== digest) {
      cache.delete(source);
      throw new ChartFetchError(
        `${source} has digest ${digest}, not the pinned ${chart.digest}`,
        "ChartDigestMismatch",
      );
    }
    return bytes;
  };
}

async function fromConfigMap(
  read: ReadConfigMap,
  name: string,
  namespace: string,
  source: string,
): Promise<Uint8Array> {
  const configMap = await read(name, namespace);
  if (!configMap) throw new ChartFetchError(`${source} does not exist`);
  const data = configMap.binaryData?.[chartConfigMapKey];
  if (data === undefined) {
    throw new ChartFetchError(
      `${source} has no binaryData key ${chartConfigMapKey}; create it with ` +
        `kubectl create configmap ${name} --from-file=${chartConfigMapKey}=./chart.tgz`,
    );
  }
  return Buffer.from(data, "base64");
}

async function fetchRemote(fetcher: typeof fetch, chart: ChartSpec, source: string): Promise<Uint8Array> {
  try {
    return chart.oci !== undefined
      ? await fromRegistry(fetcher, chart.oci, chart.version ?? "")
      : await fromRepository(fetcher, chart.repo ?? "", chart.name ?? "", chart.version ?? "");
  } catch (error) {
    if (error instanceof ChartFetchError) throw new ChartFetchError(`${source}: ${error.message}`, error.reason);
    const detail = error instanceof Error ? error.message : String(error);
    throw new ChartFetchError(`${source} cannot be fetched: ${detail}`, "ChartFetchFailed", { cause: error });
  }
}

/** An HTTP chart repository: the version's first URL in index.yaml (relative to the repository), then the .tgz. */
async function fromRepository(fetcher: typeof fetch, repo: string, name: string, version: string): Promise<Uint8Array> {
  const base = repo.endsWith("/") ? repo : `${repo}/`;
  const index = parse(await text(fetcher, new URL("index.yaml", base))) as {
    entries?: Record<string, { version?: string; urls?: string[] }[]>;
  };
  const versions = index.entries?.[name];
  if (!versions) throw new ChartFetchError(`the repository has no chart ${name}`);
  const entry = versions.find((candidate) => candidate.version === version || candidate.version === `v${version}`);
  const url = entry?.urls?.[0];
  if (!url) {
    const known = versions.map((candidate) => candidate.version).join(", ");
    throw new ChartFetchError(`the repository has no version ${version} of ${name} (it has ${known})`);
  }
  return bytesOf(fetcher, new URL(url, base));
}

/**
 * An OCI registry, as `helm pull oci://…` reads it: the manifest tagged with the version, then its chart layer.
 * Loopback registries are spoken to over plain HTTP (as Docker and Helm's --plain-http do for a local registry);
 * others over HTTPS, with an anonymous bearer token when the registry asks for one.
 */
async function fromRegistry(fetcher: typeof fetch, oci: string, version: string): Promise<Uint8Array> {
  const rest = oci.slice("oci://".length);
  const slash = rest.indexOf("/");
  const host = rest.slice(0, slash);
  const repository = rest.slice(slash + 1);
  const scheme = /^(127\.|localhost(:|$)|\[::1\])/.test(host) ? "http" : "https";
  const base = `${scheme}://${host}/v2/${repository}`;
  // Helm pushes versions with '+' as '_' (tags may not contain '+').
  const tag = version.replaceAll("+", "_");
  const headers = { Accept: "application/vnd.oci.image.manifest.v1+json" };
  const manifest = JSON.parse(await text(fetcher, `${base}/manifests/${tag}`, headers)) as {
    layers?: { mediaType?: string; digest?: string }[];
  };
  const layer = manifest.layers?.find((candidate) => candidate.mediaType === chartLayerMediaType);
  if (!layer?.digest) throw new ChartFetchError(`${oci}:${tag} is not a Helm chart (no ${chartLayerMediaType} layer)`);
  return bytesOf(fetcher, `${base}/blobs/${layer.digest}`);
}

async function text(fetcher: typeof fetch, url: URL | string, headers: Record<string, string> = {}): Promise<string> {
  return Buffer.from(await bytesOf(fetcher, url, headers)).toString("utf8");
}

async function bytesOf(
  fetcher: typeof fetch,
  url: URL | string,
  headers: Record<string, string> = {},
): Promise<Uint8Array> {
  let response = await fetcher(url, { headers, redirect: "follow" });
  const challenge = response.headers.get("www-authenticate");
  if (response.status === 401 && challenge?.startsWith("Bearer ")) {
    const token = await anonymousToken(fetcher, challenge);
    response = await fetcher(url, { headers: { ...headers, Authorization: `Bearer ${token}` }, redirect: "follow" });
  }
  if (!response.ok) throw new ChartFetchError(`GET ${String(url)} answered ${response.status} ${response.statusText}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The registry token flow for anonymous pulls: `Bearer realm="…",service="…",scope="…"`. */
async function anonymousToken(fetcher: typeof fetch, challenge: string): Promise<string> {
  const fields = Object.fromEntries(
    [...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1] ?? "", match[2] ?? ""]),
  );
  const realm = new URL(fields["realm"] ?? "");
  for (const key of ["service", "scope"]) if (fields[key]) realm.searchParams.set(key, fields[key]);
  const answer = await fetcher(realm);
  if (!answer.ok) throw new ChartFetchError(`the registry's token service answered ${answer.status}`);
  const body = (await answer.json()) as { token?: string; access_token?: string };
  return body.token ?? body.access_token ?? "";
}
