/**
 * Where a chart comes from: a ConfigMap in the instance's namespace (offline), an HTTP chart repository
 * (index.yaml → .tgz), or an OCI registry (the distribution API Helm uses: manifest by tag → chart layer blob).
 * Every source yields the packed chart's bytes, checked against `spec.chart.digest` when given.
 *
 * Remote sources are fetched only when the platform's allow-list covers them (chart/source-policy.ts), and every
 * request a fetch makes (a chart URL an index lists, a redirect, a token service) only within the sources the
 * instance's namespace may use or on a host no source names (a download host, a registry's blob store), with
 * timeouts, byte caps and address checks (chart/http-get.ts), an index read without blocking the event loop
 * (chart/repository-index.ts), and every OCI manifest and blob checked against its digest.
 */
import { createHash } from "node:crypto";
import { chartConfigMapKey, namespaceChartSourcesAnnotation, type ChartSpec } from "../api/index.ts";
import {
  boundedHttpGet,
  HttpGetError,
  statusError,
  withDeadline,
  type HttpGet,
  type HttpGetOptions,
} from "./http-get.ts";
import { ByteBoundedLru, namespaceShareBytes } from "./lru-cache.ts";
import { findIndexEntry, IndexFormatError } from "./repository-index.ts";
import { namespacePolicy, sameChartSource, sourceRefusal } from "./namespace-sources.ts";
import { allowedBy, chartSourcesFlag, repositoryRequestAllowed, sourcePolicy } from "./source-policy.ts";

/**
 * A chart that cannot be fetched, or not the pinned one, or not allowed. `transient` says whether a retry may
 * succeed (network errors, timeouts, 429, 5xx): the operator retries those and reports Stalled, never Degraded;
 * the rest (404, digest mismatch, over a cap, not allowed) are the instance's problem: Degraded.
 */
export class ChartFetchError extends Error {
  override readonly name = "ChartFetchError";
  /** `ChartFetchFailed`, `ChartDigestMismatch` or `ChartSourceNotAllowed`. */
  readonly reason: string;
  readonly transient: boolean;
  /**
   * A permanent verdict whose cause is not the spec but something its owner may change without the instance
   * changing: a namespace's chart-sources annotation. The operator looks at such an instance again, slowly.
   */
  readonly outsideSpec: boolean;
  constructor(
    message: string,
    reason = "ChartFetchFailed",
    options?: ErrorOptions & { transient?: boolean; outsideSpec?: boolean },
  ) {
    super(message, options);
    this.reason = reason;
    this.transient = options?.transient ?? false;
    this.outsideSpec = options?.outsideSpec ?? false;
  }
}

/** A ConfigMap's identity and version: its uid and resourceVersion. */
export interface ConfigMapVersion {
  readonly metadata?: { readonly uid?: string; readonly resourceVersion?: string };
}

/** Reads a ConfigMap's binaryData (base64 by key); undefined when the ConfigMap does not exist. */
export type ReadConfigMap = (
  name: string,
  namespace: string,
) => Promise<(ConfigMapVersion & { readonly binaryData?: Record<string, string> }) | undefined>;

/** Reads a ConfigMap's metadata alone (cheap); undefined when the ConfigMap does not exist. */
export type ReadConfigMapVersion = (name: string, namespace: string) => Promise<ConfigMapVersion | undefined>;

/** Byte caps of what a fetch reads. */
export interface FetchCaps {
  /** A repository's index.yaml. @default 16 MiB */
  readonly indexBytes: number;
  /** A packed chart (.tgz, or an OCI chart layer). @default 10 MiB */
  readonly chartBytes: number;
  /**
   * An OCI manifest. @default 64 KiB: a chart's is ~1 KiB (a config and a layer or two), and it is parsed on the
   * event loop (4 MiB of nested arrays, the distribution spec's limit for images, took 0.7 s and 116 MiB)
   */
  readonly manifestBytes: number;
}

export const defaultFetchCaps: FetchCaps = {
  indexBytes: 16 * 1024 * 1024,
  chartBytes: 10 * 1024 * 1024,
  manifestBytes: 64 * 1024,
};

export interface ChartSourceOptions {
  readonly readConfigMap: ReadConfigMap;
  /**
   * Given, a ConfigMap's chart is kept (with the fetched ones) and read whole again only when the ConfigMap's uid or
   * resourceVersion differ from the copy's: each fetch asks for its version alone. Unset: read whole every time.
   */
  readonly readConfigMapVersion?: ReadConfigMapVersion;
  /**
   * URL prefixes remote charts may come from (`oci://ghcr.io/org/`, `https://charts.example.com/`); hosts they
   * name may be private addresses. @default [] (ConfigMap charts only)
   */
  readonly allowedSources?: readonly string[];
  /** @default defaultFetchCaps */
  readonly caps?: Partial<FetchCaps>;
  /** Timeouts and redirects. */
  readonly http?: HttpGetOptions;
  /** How the allow-list is named in refusals. @default "--chart-sources" */
  readonly allowListName?: string;
  /**
   * The value of a namespace's chart-sources annotation (api/namespace-chart-sources.ts), undefined when it has
   * none; read before each remote fetch, so a namespace can narrow `allowedSources` for its instances. Unset: no
   * namespace narrows anything.
   */
  readonly namespaceSources?: (namespace: string) => Promise<string | undefined>;
  /** The platform's own default chart: allowed in every namespace, whatever its annotation says. */
  readonly platformChart?: ChartSpec;
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

/** Fetched charts kept in memory at most (a published chart version does not change; the digest pin catches one that did). */
const chartCacheBytes = 64 * 1024 * 1024;

/**
 * A fetcher. Charts from a registry or repository are cached in memory by source and version, within a byte
 * budget of which one namespace's fetches take at most a quarter; so are ConfigMap charts, by the ConfigMap's uid
 * and resourceVersion, when `readConfigMapVersion` is given (the operator watches no tenant's ConfigMap, so it
 * asks on every fetch: a chart's ConfigMap holds up to 1 MiB, and a tenant who wakes its instance in a loop made
 * the operator read it whole on every reconcile, megabytes a second for the same bytes).
 */
export function chartSource(options: ChartSourceOptions): (chart: ChartSpec, namespace: string) => Promise<Uint8Array> {
  const policy = sourcePolicy(options.allowedSources ?? []);
  const caps: FetchCaps = { ...defaultFetchCaps, ...options.caps };
  const get = boundedHttpGet(policy, options.http);
  const allowList = options.allowListName;
  const namespaceShare = namespaceShareBytes(chartCacheBytes, caps.chartBytes);
  const cache = new ByteBoundedLru<KeptChart>(chartCacheBytes, (kept) => kept.bytes.length, namespaceShare);
  return async (chart, namespace) => {
    const source = describeSource(chart, namespace);
    let bytes: Uint8Array;
    if (chart.configMap !== undefined) {
      bytes = await fromConfigMap(options, cache, chart.configMap, namespace, source);
    } else {
      const location = chart.oci ?? chart.repo ?? "";
      if (!allowedBy(policy, location)) {
        throw new ChartFetchError(sourceRefusal(source, policy, undefined, allowList), "ChartSourceNotAllowed");
      }
      const annotation =
        options.namespaceSources && !sameChartSource(chart, options.platformChart)
          ? await options.namespaceSources(namespace)
          : undefined;
      const narrowed = namespacePolicy(policy, annotation);
      if (!allowedBy(narrowed, location)) {
        throw new ChartFetchError(sourceRefusal(source, narrowed, { namespace }, allowList), "ChartSourceNotAllowed", {
          outsideSpec: true,
        });
      }
      // A namespace that narrows its sources keeps its own copies: its fetch may be refused where another's was not
      // (a repository's index or redirect leading outside its sources).
      const key = narrowed === policy ? source : `${source} within ${narrowed.allowed.join(" ")}`;
      const cached = cache.get(key)?.bytes;
      // Every request of one fetch (token, manifest, index, chart, their redirects) shares one deadline.
      const bounded = withDeadline(get, options.http?.fetchTimeoutMs ?? 60_000);
      // Kept in the share of the namespace that fetched it (a chart many namespaces use is still kept once); the
      // platform's own chart, which every namespace may use, in no namespace's share.
      const share = sameChartSource(chart, options.platformChart) ? undefined : namespace;
      const whose =
        narrowed === policy
          ? `the platform allows (${allowList ?? chartSourcesFlag})`
          : `namespace ${namespace} may use (its annotation ${namespaceChartSourcesAnnotation})`;
      const within =
        (allowed: (url: URL) => boolean, rule: string): RequestCheck =>
        (url, said) => {
          if (allowed(url)) return;
          throw new ChartFetchError(
            `${said} ${url.href.slice(0, 300)}, outside the chart sources ${whose}: ` +
              `${narrowed.allowed.join(", ")}; ${rule}`,
            "ChartSourceNotAllowed",
            { outsideSpec: true },
          );
        };
      const withinSources = within(
        (url) => repositoryRequestAllowed(policy, narrowed, url),
        "a repository's charts must be within them, or on a host no chart source names (a download host)",
      );
      // A registry's redirect is judged by the repository its path names (`/v2/team-a/app/blobs/…` is
      // `oci://host/team-a/app/…`), as the chart's own source was: otherwise a tenant's registry could send the
      // manifest and blob requests to a path of a listed registry the namespace may not use (the digest comes with
      // the request) and have that chart rendered as its own. A host no source names is a blob store or CDN.
      const registry: RegistryChecks = {
        redirects: within(
          (url) =>
            allowedBy(narrowed, registrySource(url) ?? "") !== undefined ||
            repositoryRequestAllowed(policy, narrowed, url),
          "a registry's manifests and blobs must be within them, or on a host no chart source names (a blob store)",
        ),
        // The token goes back to the registry as its credential: a realm on another host must be one the namespace
        // may use, or a registry could have the operator read any page of a listed host and hand it the answer.
        realm: within(
          (url) => allowedBy(narrowed, url.href) !== undefined,
          "a token service must be on the registry's own host or within them",
        ),
      };
      const remote = () => fetchRemote(bounded, caps, chart, source, withinSources, registry);
      bytes = cached ?? (await remote());
      if (!cached) cache.set(key, { bytes }, share);
      if (cached && chart.digest !== undefined && chart.digest !== chartDigest(bytes)) {
        // The copy kept may be older than the repository's (a version published again): fetched once more. The
        // same bytes stay where they were kept (a wrong pin moves nor drops the copy other namespaces use); changed
        // bytes replace them, in the share of the namespace that fetched them, as any fetch's.
        const fresh = await remote();
        if (chartDigest(fresh) !== chartDigest(bytes)) cache.set(key, { bytes: fresh }, share);
        bytes = fresh;
      }
    }
    const digest = chartDigest(bytes);
    if (chart.digest !== undefined && chart.digest !== digest) {
      throw new ChartFetchError(
        `${source} has digest ${digest}, not the pinned ${chart.digest}`,
        "ChartDigestMismatch",
      );
    }
    return bytes;
  };
}

/** A chart kept in memory: a ConfigMap's with the uid and resourceVersion it was read at. */
interface KeptChart {
  readonly bytes: Uint8Array;
  readonly version?: string;
}

/** `uid/resourceVersion`, or undefined when either is unknown (such a copy is never kept). */
function versionOf(configMap: ConfigMapVersion | undefined): string | undefined {
  const { uid, resourceVersion } = configMap?.metadata ?? {};
  return uid && resourceVersion ? `${uid}/${resourceVersion}` : undefined;
}

async function fromConfigMap(
  options: Pick<ChartSourceOptions, "readConfigMap" | "readConfigMapVersion">,
  cache: ByteBoundedLru<KeptChart>,
  name: string,
  namespace: string,
  source: string,
): Promise<Uint8Array> {
  // The copy is current while the ConfigMap's version says so; a version the cheap read does not find (a
  // ConfigMap created a moment ago, which the watch cache may not show yet) is settled by the whole read.
  const current = options.readConfigMapVersion
    ? versionOf(await options.readConfigMapVersion(name, namespace))
    : undefined;
  const kept = current === undefined ? undefined : cache.get(source);
  if (kept !== undefined && kept.version === current) return kept.bytes;
  const configMap = await options.readConfigMap(name, namespace);
  // Retried (transient): nothing wakes the instance when its chart's ConfigMap appears or is fixed (the operator
  // watches no ConfigMap it did not render), and the same `pulumi up` often creates it just after the instance.
  if (!configMap) {
    cache.delete(source);
    throw new ChartFetchError(`${source} does not exist`, "ChartFetchFailed", { transient: true });
  }
  const data = configMap.binaryData?.[chartConfigMapKey];
  if (data === undefined) {
    throw new ChartFetchError(
      `${source} has no binaryData key ${chartConfigMapKey}; create it with ` +
        `kubectl create configmap ${name} --from-file=${chartConfigMapKey}=./chart.tgz`,
      "ChartFetchFailed",
      { transient: true },
    );
  }
  const bytes = Buffer.from(data, "base64");
  const version = versionOf(configMap);
  // Kept in its namespace's share, in place of the copy of an earlier version.
  if (options.readConfigMapVersion && version !== undefined) cache.set(source, { bytes, version }, namespace);
  return bytes;
}

/**
 * Refuses a request of a repository's fetch (`url`, which `said` introduces: "index.yaml lists the chart at") by
 * throwing; returns when it may be made.
 */
type RequestCheck = (url: URL, said: string) => void;

/** The checks of a registry's requests: its redirects (manifest, blob), and a token service on another host. */
interface RegistryChecks {
  readonly redirects: RequestCheck;
  readonly realm: RequestCheck;
}

/** `oci://host/<repository>/…` for a registry API URL (`/v2/<repository>/…`); undefined for any other path. */
function registrySource(url: URL): string | undefined {
  const repository = /^\/v2\/(.+)$/.exec(url.pathname)?.[1];
  return repository === undefined ? undefined : `oci://${url.host}/${repository}`;
}

async function fetchRemote(
  get: HttpGet,
  caps: FetchCaps,
  chart: ChartSpec,
  source: string,
  withinSources: RequestCheck,
  registry: RegistryChecks,
): Promise<Uint8Array> {
  try {
    return chart.oci !== undefined
      ? await fromRegistry(get, caps, chart.oci, chart.version ?? "", registry)
      : await fromRepository(get, caps, chart.repo ?? "", chart.name ?? "", chart.version ?? "", withinSources);
  } catch (error) {
    if (error instanceof ChartFetchError) {
      throw new ChartFetchError(`${source}: ${error.message}`, error.reason, {
        transient: error.transient,
        outsideSpec: error.outsideSpec,
        cause: error,
      });
    }
    if (error instanceof HttpGetError) {
      throw new ChartFetchError(`${source} cannot be fetched: ${error.message}`, "ChartFetchFailed", {
        transient: error.transient,
        cause: error,
      });
    }
    if (error instanceof IndexFormatError) {
      throw new ChartFetchError(`${source} cannot be fetched: ${error.message}`, "ChartFetchFailed", { cause: error });
    }
    throw error;
  }
}

/** A successful answer's body, or the status as an error (host and code only). */
async function ok(
  get: HttpGet,
  url: URL,
  what: string,
  maxBytes: number,
  headers: Record<string, string> = {},
  beforeRedirect?: (to: URL, from: URL) => void,
) {
  const response = await get(url, { headers, maxBytes, what, ...(beforeRedirect ? { beforeRedirect } : {}) });
  if (response.status < 200 || response.status >= 300) throw statusError(response.url.host, response.status, what);
  return response;
}

/**
 * An HTTP chart repository: the version's first URL in index.yaml (relative to the repository), then the .tgz; the
 * chart's URL and every redirect within the namespace's sources or on a host none names (`withinSources`).
 */
async function fromRepository(
  get: HttpGet,
  caps: FetchCaps,
  repo: string,
  name: string,
  version: string,
  withinSources: RequestCheck,
): Promise<Uint8Array> {
  const base = new URL(repo.endsWith("/") ? repo : `${repo}/`);
  const redirects = (to: URL, from: URL) => withinSources(to, `${from.href.slice(0, 300)} redirects to`);
  const index = await ok(get, new URL("index.yaml", base), "index.yaml", caps.indexBytes, {}, redirects);
  const listing = await findIndexEntry(index.body.toString("utf8"), name, version);
  if (!listing) throw new ChartFetchError(`the repository has no chart ${name}`);
  const url = Array.isArray(listing.entry?.urls) ? listing.entry.urls[0] : undefined;
  if (typeof url !== "string") {
    // The index is the repository's: its first 20 versions, of at most 64 characters each, reach the message.
    const known = listing.first.map((candidate) => String(candidate.version).slice(0, 64)).join(", ");
    throw new ChartFetchError(`the repository has no version ${version} of ${name} (it has ${known})`);
  }
  const chartUrl = new URL(url, base);
  withinSources(chartUrl, "index.yaml lists the chart at");
  return (await ok(get, chartUrl, "the chart", caps.chartBytes, {}, redirects)).body;
}

interface Descriptor {
  readonly mediaType?: unknown;
  readonly digest?: unknown;
  readonly size?: unknown;
}

/**
 * An OCI registry, as `helm pull oci://…` reads it: the manifest tagged with the version, then its chart layer.
 * Loopback registries are spoken to over plain HTTP (as Docker and Helm's --plain-http do for a local registry);
 * others over HTTPS, with an anonymous bearer token when the registry asks for one, from a token service on the
 * registry's own host or within the namespace's sources; every redirect within them or on a host none names
 * (`checks`).
 */
async function fromRegistry(
  get: HttpGet,
  caps: FetchCaps,
  oci: string,
  version: string,
  checks: RegistryChecks,
): Promise<Uint8Array> {
  const rest = oci.slice("oci://".length);
  const slash = rest.indexOf("/");
  const host = rest.slice(0, slash);
  const repository = rest.slice(slash + 1);
  const scheme = /^(127\.|localhost(:|$)|\[::1\])/.test(host) ? "http" : "https";
  const base = `${scheme}://${host}/v2/${repository}`;
  // Helm pushes versions with '+' as '_' (tags may not contain '+').
  const tag = version.replaceAll("+", "_");
  const authorized = tokenFlow(get, new URL(base), checks);
  const manifestResponse = await authorized(new URL(`${base}/manifests/${tag}`), "the manifest", caps.manifestBytes, {
    Accept: "application/vnd.oci.image.manifest.v1+json",
  });
  // A manifest fetched by tag has no descriptor to check against but the registry's own digest header.
  const claimed = manifestResponse.headers["docker-content-digest"];
  if (typeof claimed === "string") verifyDigest(manifestResponse.body, claimed, `${oci}:${tag}'s manifest`);
  const layer = chartLayerOf(manifestResponse.body, `${oci}:${tag}`);
  if (typeof layer?.digest !== "string" || !/^sha256:[a-f0-9]{64}$/.test(layer.digest)) {
    throw new ChartFetchError(
      `${oci}:${tag} is not a Helm chart (no ${chartLayerMediaType} layer with a sha256 digest)`,
    );
  }
  if (typeof layer.size === "number" && layer.size > caps.chartBytes) {
    throw new ChartFetchError(
      `${oci}:${tag}'s chart is ${layer.size} bytes, more than the limit of ${caps.chartBytes}`,
    );
  }
  const maxBytes = typeof layer.size === "number" ? Math.min(layer.size, caps.chartBytes) : caps.chartBytes;
  const blob = await authorized(new URL(`${base}/blobs/${layer.digest}`), "the chart layer", maxBytes);
  verifyDigest(blob.body, layer.digest, `${oci}:${tag}'s chart layer`);
  return blob.body;
}

/** The chart layer's descriptor in a manifest (only it is kept while the layer is fetched). */
function chartLayerOf(body: Buffer, where: string): Descriptor | undefined {
  let manifest: { layers?: Descriptor[] };
  try {
    manifest = JSON.parse(body.toString("utf8")) as { layers?: Descriptor[] };
  } catch {
    throw new ChartFetchError(`${where}'s manifest is not JSON`);
  }
  const layer = Array.isArray(manifest.layers)
    ? manifest.layers.find((candidate) => candidate?.mediaType === chartLayerMediaType)
    : undefined;
  return layer && { mediaType: layer.mediaType, digest: layer.digest, size: layer.size };
}

function verifyDigest(bytes: Buffer, expected: string, what: string): void {
  if (!expected.startsWith("sha256:"))
    throw new ChartFetchError(`${what} has digest ${expected}: only sha256 is supported`);
  const actual = chartDigest(bytes);
  if (actual !== expected) {
    throw new ChartFetchError(
      `${what} has digest ${actual}, not ${expected} as its descriptor says`,
      "ChartDigestMismatch",
    );
  }
}

/**
 * GETs against a registry with its anonymous token flow (`WWW-Authenticate: Bearer realm="…",service,scope`): the
 * token is fetched once and reused for the manifest and the blob, each request's redirects checked by
 * `checks.redirects`. A realm on another host is refused unless the namespace's sources cover it: otherwise a
 * registry could send the operator to any URL.
 */
function tokenFlow(get: HttpGet, registry: URL, checks: RegistryChecks) {
  let token: string | undefined;
  const beforeRedirect = (to: URL, from: URL) => checks.redirects(to, `${from.href.slice(0, 300)} redirects to`);
  return async (url: URL, what: string, maxBytes: number, headers: Record<string, string> = {}) => {
    const withToken = () => (token ? { ...headers, Authorization: `Bearer ${token}` } : headers);
    let response = await get(url, { headers: withToken(), maxBytes, what, beforeRedirect });
    const challenge = response.headers["www-authenticate"];
    if (response.status === 401 && typeof challenge === "string" && challenge.startsWith("Bearer ")) {
      token = await anonymousToken(get, registry, challenge, checks.realm);
      response = await get(url, { headers: withToken(), maxBytes, what, beforeRedirect });
    }
    if (response.status < 200 || response.status >= 300) throw statusError(response.url.host, response.status, what);
    return response;
  };
}

async function anonymousToken(
  get: HttpGet,
  registry: URL,
  challenge: string,
  withinSources: RequestCheck,
): Promise<string> {
  const fields = Object.fromEntries(
    [...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1] ?? "", match[2] ?? ""]),
  );
  let realm: URL;
  try {
    realm = new URL(fields["realm"] ?? "");
  } catch {
    throw new ChartFetchError(`the registry's token realm is not a URL`);
  }
  if (realm.host !== registry.host) {
    withinSources(realm, `the registry sends for a token to ${realm.host}, another host than ${registry.host}, at`);
  }
  for (const key of ["service", "scope"]) if (fields[key]) realm.searchParams.set(key, fields[key]);
  // A token comes from the host asked for it: its answer goes back to the registry as a credential, so a realm
  // redirecting elsewhere (to a listed internal host's page) would have the operator hand that page to the registry.
  // On the same host, a realm the namespace's sources cover stays within them.
  const beforeRedirect = (to: URL, from: URL) => {
    if (to.host !== realm.host) {
      throw new ChartFetchError(
        `the registry's token service at ${from.host} redirects to ${to.host}: a token is taken only from the host ` +
          "asked for it",
        "ChartSourceNotAllowed",
      );
    }
    if (to.host !== registry.host) withinSources(to, `the registry's token service at ${from.host} redirects to`);
  };
  const answer = await get(realm, { maxBytes: 64 * 1024, what: "a token", beforeRedirect });
  if (answer.status < 200 || answer.status >= 300) throw statusError(answer.url.host, answer.status, "a token");
  let token: unknown;
  try {
    const body = JSON.parse(answer.body.toString("utf8")) as { token?: unknown; access_token?: unknown };
    token = body.token ?? body.access_token;
  } catch {
    throw new ChartFetchError(`the registry's token service did not answer JSON`);
  }
  if (typeof token !== "string") return "";
  // It goes into a header: a token with a line break or another character no header may hold would fail there, as
  // a network error that looks transient and is retried for ever.
  if (!/^[\x21-\x7e]*$/.test(token)) {
    throw new ChartFetchError(`the registry's token service answered a token that is not printable ASCII`);
  }
  return token;
}
