/**
 * GET as a registry client should do it for a multi-tenant operator: a connect timeout and a total deadline per
 * request, redirects included, within one per fetch (a slow-drip server cannot hold a worker), a byte cap checked while reading (and against Content-Length before),
 * redirects followed by hand so each hop is checked, and every address checked at connect time: a host that
 * resolves to a private, loopback or link-local address is refused unless the platform's allow-list names it
 * (the check runs inside the connection's DNS lookup, so a second resolution cannot swap the address). Errors
 * name the host and status only, never a response body: a tenant must not read internal pages through a
 * status message.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { Agent } from "../kube/undici.ts";
import { isPrivateAddress, mayBePrivate, unlistedPortOfListedHost, type SourcePolicy } from "./source-policy.ts";

/** A failed GET: `transient` when a retry may succeed (network, timeout, 429, 5xx). */
export class HttpGetError extends Error {
  override readonly name = "HttpGetError";
  readonly transient: boolean;
  /** The HTTP status, when the server answered. */
  readonly status: number | undefined;
  constructor(message: string, transient: boolean, status?: number, options?: ErrorOptions) {
    super(message, options);
    this.transient = transient;
    this.status = status;
  }
}

export interface HttpGetOptions {
  /** @default 10000 */
  readonly connectTimeoutMs?: number;
  /** The whole request, headers and body, its redirects included. @default 30000 */
  readonly timeoutMs?: number;
  /**
   * A whole fetch, every request it makes (a token, a manifest, an index, the chart) with their redirects: a
   * source answering each request just in time cannot hold a fetch slot for minutes. @default 60000
   */
  readonly fetchTimeoutMs?: number;
  /** @default 5 */
  readonly maxRedirects?: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  /** The URL that answered (after redirects). */
  readonly url: URL;
}

export type HttpGet = (
  url: URL,
  options: {
    readonly headers?: Record<string, string>;
    readonly maxBytes: number;
    readonly what: string;
    /** The fetch this request belongs to ends then (performance.now() ms), whatever is left of the request's time. */
    readonly deadline?: FetchDeadline;
    /** Looks at each redirect's target before it is followed; throws to refuse it. */
    readonly beforeRedirect?: (to: URL, from: URL) => void;
  },
) => Promise<HttpResponse>;

/** When a fetch of several requests must be over: at `at` (performance.now() ms), `ms` after it began. */
export interface FetchDeadline {
  readonly at: number;
  readonly ms: number;
}

/** `get`, its requests bound by one deadline `ms` from now: a fetch's every request shares it. */
export function withDeadline(get: HttpGet, ms: number): HttpGet {
  const deadline: FetchDeadline = { at: performance.now() + ms, ms };
  return (url, options) => get(url, { ...options, deadline });
}

const privateRefusal = "ERR_MYAPP_PRIVATE_ADDRESS";

/** A GET function under `policy`. Non-2xx answers are returned (the caller decides: 401 starts a token flow). */
export function boundedHttpGet(policy: SourcePolicy, options: HttpGetOptions = {}): HttpGet {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  // undici's Agent without its index (kube/undici.ts, which every cluster connection loads anyway); imported by
  // path, not `import("undici")`, which would bundle all of undici (fetch, WebSocket, mocks, cache stores: 1.3 MiB
  // of source) into the operator and the provider host that parse it on every start.
  let agent: Promise<Agent> | undefined;
  const connection = () =>
    (agent ??= import("../kube/undici.ts").then(
      ({ Agent }) =>
        new Agent({
          connect: { timeout: options.connectTimeoutMs ?? 10_000, lookup: checkedLookup(policy) },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          connections: 16,
        }),
    ));

  return async (start, { headers = {}, maxBytes, what, deadline, beforeRedirect }) => {
    // One clock for the request and its redirects (each hop does not start its own), cut short by the fetch's.
    const fetchLeft = deadline ? deadline.at - performance.now() : Infinity;
    const limit =
      fetchLeft < timeoutMs
        ? {
            ms: Math.max(0, Math.floor(fetchLeft)),
            text: `before the fetch's deadline of ${(deadline?.ms ?? 0) / 1000} s`,
          }
        : { ms: timeoutMs, text: `in ${timeoutMs / 1000} s` };
    if (limit.ms <= 0) throw new HttpGetError(`${start.host} was not asked: the fetch's deadline has passed`, true);
    const signal = AbortSignal.timeout(limit.ms);
    let url = start;
    let sent = { ...headers };
    checkTarget(policy, url, start);
    for (let hop = 0; ; hop++) {
      const response = await getOnce(await connection(), url, sent, maxBytes, what, signal, limit.text);
      const location = response.headers["location"];
      if (response.status < 300 || response.status >= 400 || typeof location !== "string") return response;
      if (hop >= maxRedirects) throw new HttpGetError(`${url.host} redirected more than ${maxRedirects} times`, false);
      const next = new URL(location, url);
      // The hop's own checks (scheme, address, port) before the caller's: they refuse it whatever the caller allows,
      // and say more exactly why.
      checkTarget(policy, next, start);
      beforeRedirect?.(next, url);
      // Credentials stay with the host they were meant for (a registry's blob store is usually a CDN).
      if (next.host !== url.host)
        sent = Object.fromEntries(Object.entries(sent).filter(([k]) => !/^authorization$/i.test(k)));
      url = next;
    }
  };
}

/**
 * The connection's DNS lookup: every address a host resolves to is checked as it connects, so a second
 * resolution cannot swap a public address for a private one.
 */
function checkedLookup(policy: SourcePolicy): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { all: true, family: lookupOptions.family ?? 0 }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      const refused = mayBePrivate(policy, hostname)
        ? undefined
        : addresses.find((address) => isPrivateAddress(address.address));
      if (refused || addresses.length === 0) {
        const refusal = Object.assign(new Error(`${hostname} resolves to a private address`), {
          code: privateRefusal,
        });
        return callback(refusal, "", 0);
      }
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

/** A hop's URL: HTTP(S), no downgrade from HTTPS, and an IP literal (which needs no lookup) checked here. */
function checkTarget(policy: SourcePolicy, url: URL, start: URL): void {
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new HttpGetError(`a redirect to ${url.protocol} is not followed`, false);
  }
  if (url.protocol === "http:" && start.protocol === "https:") {
    throw new HttpGetError(`${start.host} redirected from HTTPS to plain HTTP (${url.host}); not followed`, false);
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0 && isPrivateAddress(host) && !mayBePrivate(policy, host)) {
    throw new HttpGetError(`${url.host} is a private, loopback or link-local address; not reached`, false);
  }
  if (unlistedPortOfListedHost(policy, url)) {
    throw new HttpGetError(
      `${url.host} is not a port the platform's chart sources name for ${host}; not reached`,
      false,
    );
  }
}

async function getOnce(
  agent: Agent,
  url: URL,
  headers: Record<string, string>,
  maxBytes: number,
  what: string,
  signal: AbortSignal,
  limit: string,
): Promise<HttpResponse> {
  try {
    const response = await agent.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: "GET",
      headers,
      signal,
    });
    const length = Number(response.headers["content-length"]);
    if (Number.isFinite(length) && length > maxBytes) {
      response.body.destroy();
      throw new HttpGetError(`${what} from ${url.host} is ${length} bytes, more than the limit of ${maxBytes}`, false);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) {
        response.body.destroy();
        throw new HttpGetError(`${what} from ${url.host} is more than the limit of ${maxBytes} bytes`, false);
      }
      chunks.push(chunk);
    }
    return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks), url };
  } catch (error) {
    if (error instanceof HttpGetError) throw error;
    if (hasCode(error, privateRefusal)) {
      throw new HttpGetError(`${url.host} resolves to a private, loopback or link-local address; not reached`, false);
    }
    if (signal.aborted) {
      throw new HttpGetError(`${url.host} did not answer ${limit}`, true, undefined, { cause: error });
    }
    const code = codeOf(error);
    const certificate = code === undefined ? undefined : certificateProblem(code, url.hostname);
    if (certificate !== undefined) {
      // Retried as a network error (the platform may yet trust the CA, or renew the certificate), said as what it is.
      throw new HttpGetError(`${url.host}'s TLS certificate ${certificate} (${code})`, true, undefined, {
        cause: error,
      });
    }
    throw new HttpGetError(`${url.host} cannot be reached${code ? ` (${code})` : ""}`, true, undefined, {
      cause: error,
    });
  }
}

/** What a certificate error code says of the server's certificate, in words; undefined for any other code. */
function certificateProblem(code: string, hostname: string): string | undefined {
  if (
    /^(UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT)$/.test(
      code,
    )
  ) {
    return "is not signed by a CA the operator trusts: Node's, and those of the file NODE_EXTRA_CA_CERTS names";
  }
  if (code === "CERT_HAS_EXPIRED") return "has expired";
  if (code === "CERT_NOT_YET_VALID") return "is not valid yet";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return `is not valid for ${hostname}`;
  return undefined;
}

function hasCode(error: unknown, code: string): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if ((current as { code?: unknown }).code === code) return true;
    current = current.cause;
  }
  return false;
}

function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = current.cause;
  }
  return undefined;
}

/** The verdict for a non-2xx status: 408, 429 and 5xx may pass; the rest will not change by retrying. */
export function statusError(host: string, status: number, what: string): HttpGetError {
  const transient = status === 408 || status === 429 || status >= 500;
  return new HttpGetError(`${host} answered ${status} for ${what}`, transient, status);
}
