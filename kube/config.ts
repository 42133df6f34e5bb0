/**
 * Kubernetes credentials, loaded the way kubectl finds them, or from explicit input. We parse the kubeconfig
 * ourselves (with `yaml`) instead of using client-node's KubeConfig: importing it loads client-node's whole
 * generated API (~70 MiB of RSS), and it builds a new TLS agent per request. What is supported: contexts; clusters
 * with server, CA data or file, insecure-skip-tls-verify, tls-server-name and proxy-url (http, https, socks5);
 * users with token, tokenFile, client certificate and key (data or file), basic auth, and exec plugins
 * (client.authentication.k8s.io); in-cluster config from the pod's ServiceAccount. Legacy auth-provider plugins
 * (gcp, azure, oidc) are refused with a clear error: their replacements are exec plugins.
 * test/unit/kube/config-precedence.test.ts compares the result with client-node's loader on a corpus.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { parse } from "yaml";

export interface KubeConfigSource {
  /** Kubeconfig file contents (YAML); takes precedence over everything else. */
  readonly kubeconfig?: string;
  /** Path to a kubeconfig file (or several, separated as in KUBECONFIG); each must exist. */
  readonly path?: string;
  /** A KUBECONFIG value given in place of the environment's: files separated by the path delimiter, missing ones skipped. */
  readonly list?: string;
  /** Context to use instead of the current one. */
  readonly context?: string;
}

export interface Cluster {
  readonly name: string;
  readonly server: string;
  /** Base64 PEM of the CA bundle. */
  readonly caData?: string;
  readonly caFile?: string;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string;
  /** `proxy-url`: every request to this cluster goes through this proxy (http, https or socks5, as kubectl). */
  readonly proxyUrl?: string;
}

export interface ExecConfig {
  readonly apiVersion: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
}

export interface User {
  readonly name: string;
  readonly token?: string;
  /** Re-read while running: projected ServiceAccount tokens rotate. */
  readonly tokenFile?: string;
  /** Base64 PEM. */
  readonly certData?: string;
  readonly certFile?: string;
  /** Base64 PEM. */
  readonly keyData?: string;
  readonly keyFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly exec?: ExecConfig;
}

export interface Context {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
  readonly namespace?: string;
}

/** Where a pod finds its ServiceAccount's token, CA and namespace. */
export const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/** A parsed kubeconfig: clusters, users, contexts and the current context. Paths in it are absolute. */
export class KubeConfig {
  readonly clusters: readonly Cluster[];
  readonly users: readonly User[];
  readonly contexts: readonly Context[];
  currentContext: string;

  constructor(parts: { clusters: Cluster[]; users: User[]; contexts: Context[]; currentContext: string }) {
    this.clusters = parts.clusters;
    this.users = parts.users;
    this.contexts = parts.contexts;
    this.currentContext = parts.currentContext;
  }

  getContexts(): readonly Context[] {
    return this.contexts;
  }

  getContextObject(name: string): Context | undefined {
    return this.contexts.find((c) => c.name === name);
  }

  getCurrentContext(): string {
    return this.currentContext;
  }

  setCurrentContext(name: string): void {
    this.currentContext = name;
  }

  getCurrentCluster(): Cluster | null {
    const context = this.getContextObject(this.currentContext);
    return this.clusters.find((c) => c.name === context?.cluster) ?? null;
  }

  getCurrentUser(): User | null {
    const context = this.getContextObject(this.currentContext);
    return this.users.find((u) => u.name === context?.user) ?? null;
  }
}

/** Where loadKubeConfig looks besides its source; tests point these elsewhere. */
export interface KubeConfigSurroundings {
  /** KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** The directory holding .kube/config. @default os.homedir() */
  readonly home?: string;
  /** The ServiceAccount mount. @default serviceAccountDir */
  readonly serviceAccountDir?: string;
}

/**
 * kubectl's order (client-go's clientcmd): explicit contents or an explicit path (a missing file is an error);
 * else every file of KUBECONFIG, merged (the first file to define a cluster, user or context name wins, the first
 * to set current-context wins, missing files are skipped); else ~/.kube/config. Only when that yields no cluster
 * (no files, or no current context) is the in-cluster config used, when running in a pod: a kubeconfig mounted
 * into a pod wins over its ServiceAccount, as it does for kubectl.
 */
export function loadKubeConfig(source: KubeConfigSource = {}, around: KubeConfigSurroundings = {}): KubeConfig {
  const env = around.env ?? process.env;
  let kc: KubeConfig;
  // ~/.kube/config, when that is where the files came from (nothing explicit, KUBECONFIG unset); null without a home.
  let homeConfig: string | null | undefined;
  if (source.kubeconfig) kc = parseKubeConfig(source.kubeconfig);
  else if (source.path) kc = loadFiles(splitList(source.path), { skipMissing: false });
  else if (splitList(source.list ?? env.KUBECONFIG).length > 0) {
    kc = loadFiles(splitList(source.list ?? env.KUBECONFIG), { skipMissing: true });
  } else {
    // A container's user often has no home, or one it may not read (the operator image's nonroot): then there is
    // no ~/.kube/config to use either, and a pod goes on to its ServiceAccount below.
    const home = around.home ?? homeDirectory();
    homeConfig = home ? join(home, ".kube", "config") : null;
    kc = loadFiles(homeConfig ? [homeConfig] : [], { skipMissing: true, skipUnreadable: true });
  }
  if (source.context) {
    if (!kc.getContextObject(source.context)) {
      const known =
        kc
          .getContexts()
          .map((c) => c.name)
          .join(", ") || "none";
      throw new Error(`kubeconfig has no context "${source.context}" (contexts: ${known})`);
    }
    kc.setCurrentContext(source.context);
  }
  const current = kc.getCurrentContext();
  if (current && !kc.getContextObject(current)) {
    throw new Error(`kubeconfig's current-context "${current}" names no context`);
  }
  if (kc.getCurrentCluster()) return kc;
  // Nothing usable in the files: as kubectl, a pod falls back to its ServiceAccount (explicit YAML never does).
  const dir = around.serviceAccountDir ?? serviceAccountDir;
  if (
    !source.kubeconfig &&
    env.KUBERNETES_SERVICE_HOST &&
    env.KUBERNETES_SERVICE_PORT &&
    existsSync(join(dir, "token"))
  ) {
    return inClusterConfig(env, dir);
  }
  const listed = source.kubeconfig || source.path ? [] : splitList(source.list ?? env.KUBECONFIG);
  if (listed.length > 0 && !listed.some((file) => existsSync(file))) {
    // Missing files are skipped, as kubectl does; when none is left, say so rather than "no cluster".
    throw new Error(`cannot read kubeconfig: no file of KUBECONFIG exists (${listed.join(delimiter)})`);
  }
  if (homeConfig === null || (homeConfig !== undefined && !existsSync(homeConfig))) {
    // No file at all: "names no current cluster" would send the reader to look for a context in a missing file.
    throw new Error(noKubeconfigMessage(homeConfig, env, dir));
  }
  throw new Error(
    "kubeconfig names no current cluster: set current-context (or pass a context), KUBECONFIG, or --kubeconfig",
  );
}

/** Where the loader looked when no kubeconfig exists at all (`homeConfig` null: no home directory), and what to do. */
function noKubeconfigMessage(homeConfig: string | null, env: NodeJS.ProcessEnv, serviceAccount: string): string {
  const home = homeConfig === null ? "there is no home directory for ~/.kube/config" : `${homeConfig} does not exist`;
  // Only a process told it runs in a pod looks for a ServiceAccount: elsewhere that is no place it looked.
  const pod = env.KUBERNETES_SERVICE_HOST
    ? `, and no ServiceAccount token is mounted at ${join(serviceAccount, "token")}`
    : "";
  return (
    `no kubeconfig found: KUBECONFIG is not set and ${home}${pod}; set KUBECONFIG to your cluster's kubeconfig ` +
    "file (or pass --kubeconfig)"
  );
}

/**
 * The config of a pod: the apiserver from KUBERNETES_SERVICE_HOST/PORT, the ServiceAccount's CA, and its token as
 * a token file (re-read as the kubelet rotates it). `dir` is the ServiceAccount mount, for tests.
 */
export function inClusterConfig(env: NodeJS.ProcessEnv, dir = serviceAccountDir): KubeConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error("in-cluster config needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT");
  const tokenFile = join(dir, "token");
  if (!existsSync(tokenFile)) throw new Error(`in-cluster config: no ServiceAccount token at ${tokenFile}`);
  const namespaceFile = join(dir, "namespace");
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, "utf8").trim() : undefined;
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return new KubeConfig({
    clusters: [{ name: "in-cluster", server, caFile: join(dir, "ca.crt"), skipTLSVerify: false }],
    users: [{ name: "in-cluster", tokenFile }],
    contexts: [{ name: "in-cluster", cluster: "in-cluster", user: "in-cluster", ...(namespace ? { namespace } : {}) }],
    currentContext: "in-cluster",
  });
}

/** Parses kubeconfig YAML; relative file paths in it are resolved against `baseDir` (the file's directory). */
function parseKubeConfig(text: string, baseDir = process.cwd()): KubeConfig {
  const doc = (parse(text) ?? {}) as RawConfig;
  if (typeof doc !== "object" || Array.isArray(doc)) throw new Error("kubeconfig is not a YAML mapping");
  const path = (value: unknown) => (typeof value === "string" && value ? resolvePath(baseDir, value) : undefined);
  const clusters = named(doc.clusters, "clusters").map(({ name, body }): Cluster => {
    const server = str(body.server);
    if (!server) throw new Error(`kubeconfig cluster "${name}" has no server`);
    return compact({
      name,
      server,
      caData: str(body["certificate-authority-data"]),
      caFile: path(body["certificate-authority"]),
      skipTLSVerify: body["insecure-skip-tls-verify"] === true,
      tlsServerName: str(body["tls-server-name"]),
      proxyUrl: proxyUrl(name, body["proxy-url"]),
    });
  });
  const users = named(doc.users, "users").map(({ name, body }): User => {
    if (body["auth-provider"]) {
      throw new Error(
        `kubeconfig user "${name}" uses an auth-provider plugin, which is not supported: use an exec plugin ` +
          "(e.g. gke-gcloud-auth-plugin, kubelogin) instead",
      );
    }
    const exec = body.exec as Record<string, unknown> | undefined;
    return compact({
      name,
      token: str(body.token),
      tokenFile: path(body.tokenFile),
      certData: str(body["client-certificate-data"]),
      certFile: path(body["client-certificate"]),
      keyData: str(body["client-key-data"]),
      keyFile: path(body["client-key"]),
      username: str(body.username),
      password: str(body.password),
      exec: exec ? execConfig(name, exec, baseDir) : undefined,
    });
  });
  const contexts = named(doc.contexts, "contexts").map(({ name, body }): Context =>
    compact({ name, cluster: str(body.cluster) ?? "", user: str(body.user) ?? "", namespace: str(body.namespace) }),
  );
  return new KubeConfig({ clusters, users, contexts, currentContext: str(doc["current-context"]) ?? "" });
}

interface RawConfig {
  readonly clusters?: unknown;
  readonly users?: unknown;
  readonly contexts?: unknown;
  readonly "current-context"?: unknown;
}

/** A KUBECONFIG-style list: paths separated by ":" (";" on Windows), empty entries and repeats dropped. */
function splitList(list: string | undefined): string[] {
  return [...new Set((list ?? "").split(delimiter).filter(Boolean))];
}

/** Reads and merges kubeconfig files; missing ones are skipped (KUBECONFIG, the home file) or refused (explicit). */
function loadFiles(
  paths: readonly string[],
  options: { readonly skipMissing: boolean; readonly skipUnreadable?: boolean },
): KubeConfig {
  const configs: KubeConfig[] = [];
  for (const file of paths) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (options.skipMissing && code === "ENOENT") continue;
      if (options.skipUnreadable && (code === "EACCES" || code === "ENOTDIR")) continue;
      throw new Error(`cannot read kubeconfig ${file}: ${code ?? String(error)}`);
    }
    configs.push(parseKubeConfig(text, dirname(resolvePath(process.cwd(), file))));
  }
  if (configs.length === 1) return configs[0]!;
  const first = <T extends { name: string }>(lists: readonly (readonly T[])[]) => {
    const byName = new Map<string, T>();
    for (const item of lists.flat()) if (!byName.has(item.name)) byName.set(item.name, item);
    return [...byName.values()];
  };
  return new KubeConfig({
    clusters: first(configs.map((c) => c.clusters)),
    users: first(configs.map((c) => c.users)),
    contexts: first(configs.map((c) => c.contexts)),
    currentContext: configs.find((c) => c.currentContext)?.currentContext ?? "",
  });
}

/** kubectl accepts http, https and socks5 proxies; anything else is refused here rather than at the first request. */
function proxyUrl(cluster: string, value: unknown): string | undefined {
  const url = str(value);
  if (url === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new Error(`kubeconfig cluster "${cluster}": proxy-url "${url}" is not a URL`);
  }
  if (!["http:", "https:", "socks5:"].includes(protocol)) {
    throw new Error(`kubeconfig cluster "${cluster}": proxy-url scheme ${protocol} is not one of http, https, socks5`);
  }
  return url;
}

function execConfig(user: string, raw: Record<string, unknown>, baseDir: string): ExecConfig {
  const command = str(raw.command);
  if (!command) throw new Error(`kubeconfig user "${user}": exec has no command`);
  const env = Array.isArray(raw.env) ? (raw.env as { name?: unknown; value?: unknown }[]) : [];
  return {
    apiVersion: str(raw.apiVersion) ?? "client.authentication.k8s.io/v1",
    // kubectl resolves a command with a slash relative to the kubeconfig; a bare name is looked up on PATH.
    command: command.includes("/") ? resolvePath(baseDir, command) : command,
    args: Array.isArray(raw.args) ? raw.args.map(String) : [],
    env: env.map((e) => ({ name: String(e.name ?? ""), value: String(e.value ?? "") })),
  };
}

function named(list: unknown, field: string): { name: string; body: Record<string, unknown> }[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new Error(`kubeconfig ${field} must be a list`);
  const inner = field === "clusters" ? "cluster" : field === "users" ? "user" : "context";
  return list.map((entry: Record<string, unknown>, index) => {
    const name = str(entry?.name);
    if (!name) throw new Error(`kubeconfig ${field}[${index}] has no name`);
    return { name, body: (entry[inner] ?? {}) as Record<string, unknown> };
  });
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function resolvePath(baseDir: string, file: string): string {
  if (file.startsWith("~/")) return join(homedir(), file.slice(2));
  return isAbsolute(file) ? file : join(baseDir, file);
}

/** Drops undefined fields, so optional properties stay absent (exactOptionalPropertyTypes). */
function compact<T extends object>(object: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}

/** The user's home directory, or undefined when it has none (os.homedir() throws without HOME and a passwd entry). */
function homeDirectory(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}
