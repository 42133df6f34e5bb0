/**
 * Which chart sources the platform lets instances use, and which network addresses a fetch may reach. Pure.
 *
 * - The allow-list (operator `--chart-sources`, MyAppOperator `chartSources`) holds URL prefixes:
 *   `oci://ghcr.io/org/`, `https://charts.example.com/`. Empty (the default): ConfigMap charts only, since a
 *   remote source is the operator making requests on a tenant's behalf.
 * - Private, loopback, link-local and shared-address ranges are never reached (a tenant could otherwise probe
 *   in-cluster services or a cloud's metadata endpoint), except on a host an allow-list entry names itself: the
 *   platform listed that host on purpose (an in-cluster registry; the tests' loopback servers).
 */
import { BlockList, isIP } from "node:net";

/** The platform's chart source policy. */
export interface SourcePolicy {
  /** URL prefixes, each ending in `/`. */
  readonly allowed: readonly string[];
  /** Hostnames (lower case, IPv6 without brackets) that may resolve to any address: those the entries name. */
  readonly privateHosts: ReadonlySet<string>;
  /**
   * `hostname:port` of each entry (the scheme's port when it names none): a listed host is reached on a port an
   * entry names, never on another (a repository index or a redirect could otherwise point the operator at any
   * service of an in-cluster host).
   */
  readonly listedOrigins: ReadonlySet<string>;
}

/**
 * What the chart engine allows: the platform's list, and the location of its own default chart (which every
 * namespace may use, whatever the list says).
 */
export function chartSourcesWithDefault(
  sources: readonly string[],
  defaultChart: { readonly oci?: string | undefined; readonly repo?: string | undefined } | undefined,
): string[] {
  const location = defaultChart?.oci ?? defaultChart?.repo;
  return location === undefined ? [...sources] : [...sources, location];
}

/** The policy for a list of prefixes (already checked with {@link chartSourceProblems}). */
export function sourcePolicy(allowed: readonly string[]): SourcePolicy {
  const normalized = allowed.map(normalizePrefix);
  return {
    allowed: normalized,
    privateHosts: new Set(normalized.map((prefix) => hostnameOf(prefix))),
    listedOrigins: new Set(normalized.map((prefix) => originKey(new URL(prefix.replace(/^oci:\/\//, "https://"))))),
  };
}

/** `hostname:port` of `url`, the port filled in from the scheme. */
export function originKey(url: URL): string {
  const port = url.port || (url.protocol === "http:" ? "80" : "443");
  return `${hostKey(url.hostname)}:${port}`;
}

/** True when `url` is on a host the platform listed but on a port no entry names. */
export function unlistedPortOfListedHost(policy: SourcePolicy, url: URL): boolean {
  return mayBePrivate(policy, url.hostname) && !policy.listedOrigins.has(originKey(url));
}

/** The flag that names the allow-list, for messages. */
export const chartSourcesFlag = "--chart-sources";

/**
 * Checks allow-list entries: `oci://host[:port]/path/`, `https://host[:port]/path/` or `http://…` (plain HTTP is
 * for in-cluster and test repositories). Returns the problems, one per bad entry.
 */
export function chartSourceProblems(entries: readonly string[]): string[] {
  const problems: string[] = [];
  for (const entry of entries) {
    let url: URL;
    try {
      url = new URL(entry.replace(/^oci:\/\//, "https://"));
    } catch {
      problems.push(`"${entry}" is not a URL; use oci://host/path/ or https://host/path/`);
      continue;
    }
    if (!/^(oci|https?):\/\//.test(entry)) {
      problems.push(`"${entry}" must start with oci://, https:// or http://`);
    } else if (url.username || url.password || url.search || url.hash) {
      problems.push(`"${entry}" must not carry credentials, a query or a fragment`);
    } else if (!url.hostname) {
      problems.push(`"${entry}" names no host`);
    }
  }
  return problems;
}

/** `oci://Host/x` → `oci://host/x/`: lower-case scheme and host, a trailing slash so a prefix ends at a segment. */
export function normalizePrefix(entry: string): string {
  const match = /^([a-z]+):\/\/([^/]*)(.*)$/i.exec(entry.trim());
  if (!match) return entry;
  const [, scheme = "", host = "", path = ""] = match;
  const joined = `${scheme.toLowerCase()}://${host.toLowerCase()}${path}`;
  return joined.endsWith("/") ? joined : `${joined}/`;
}

function hostnameOf(prefix: string): string {
  const url = new URL(prefix.replace(/^oci:\/\//, "https://"));
  return hostKey(url.hostname);
}

/**
 * The allow-list entry that covers `source` (an `oci://…` chart or a repository URL), if any. Only a path that
 * fetching would not change is compared: a `.` or `..` segment (also escaped, `%2e%2e`), any other escape or a
 * backslash would compare one path and fetch another (`oci://host/org/team-a/../team-b/app` is fetched as
 * `/org/team-b/app`), so such a source is covered by no entry. The instance's schema refuses these first; this is
 * for every other caller (a token realm, the operator's own default chart).
 */
export function allowedBy(policy: SourcePolicy, source: string): string | undefined {
  if (!fetchedAsWritten(source)) return undefined;
  const candidate = normalizePrefix(source);
  return policy.allowed.find((prefix) => candidate.startsWith(prefix));
}

/** True when `source`'s path (before any query) is what a URL parser would fetch: no dot segment nor escape. */
function fetchedAsWritten(source: string): boolean {
  const path = /^[a-z]+:\/\/[^/?#]*([^?#]*)/i.exec(source)?.[1];
  if (path === undefined || /[%\\]/.test(path)) return false;
  try {
    return new URL(source.replace(/^oci:\/\//i, "https://")).pathname === (path || "/");
  } catch {
    return false;
  }
}

/**
 * Whether a request of a repository's fetch may go to `url` (the chart's URL its index.yaml lists, a redirect):
 * within the sources the namespace may use (`narrowed`), or on a host no entry of the platform's `policy` names
 * (the download host or CDN a repository serves its charts from). A listed host outside those prefixes is another
 * source: another team's path, or one the platform keeps to itself, which an index or a redirect would otherwise
 * reach past the namespace's narrowing and the platform's prefixes.
 */
export function repositoryRequestAllowed(policy: SourcePolicy, narrowed: SourcePolicy, url: URL): boolean {
  return allowedBy(narrowed, url.href) !== undefined || !mayBePrivate(policy, url.hostname);
}

/** True when `hostname` may resolve to a private address under `policy`. */
export function mayBePrivate(policy: SourcePolicy, hostname: string): boolean {
  return policy.privateHosts.has(hostKey(hostname));
}

/**
 * A host name as DNS, TLS and HTTP servers tell hosts apart: lower case, IPv6 without brackets, and without the
 * root's trailing dot (`charts.example.com.` is `charts.example.com`, which a URL parser keeps apart).
 */
export function hostKey(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();
}

/** Ranges a fetch never reaches unless the host is listed: RFC 1918, loopback, link-local, CGNAT, "this network". */
const privateRanges = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  privateRanges.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 96], // the unspecified and loopback addresses, and IPv4-compatible ones (deprecated)
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10], // site-local (deprecated, still routed on some networks)
  ["ff00::", 8],
  ["64:ff9b:1::", 48], // NAT64 for local use (RFC 8215)
] as const) {
  privateRanges.addSubnet(network, prefix, "ipv6");
}

/** True for an address in a private, loopback, link-local or otherwise non-public range. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 4) return privateRanges.check(bare, "ipv4");
  if (family !== 6) return true;
  // IPv6 that carries an IPv4 address reaches that address: mapped (::ffff:a.b.c.d, which BlockList reads as the
  // IPv4 address itself), NAT64 (64:ff9b::a.b.c.d reaches 169.254.169.254 on a NAT64 cluster) and 6to4 (2002:AABB:CCDD::).
  const embedded = embeddedIpv4(bare);
  if (embedded !== undefined && privateRanges.check(embedded, "ipv4")) return true;
  return privateRanges.check(bare, "ipv6");
}

/** The IPv4 address a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address carries; undefined for others. */
function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0);
  if (nat64) return ipv4(words[6] ?? 0, words[7] ?? 0);
  if (words[0] === 0x2002) return ipv4(words[1] ?? 0, words[2] ?? 0);
  return undefined;
}

/** The eight 16-bit words of a valid IPv6 address (as isIP accepts it), a trailing dotted IPv4 included. */
function ipv6Words(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  return [...left, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...right].map((word) =>
    Number.parseInt(word, 16),
  );
}
