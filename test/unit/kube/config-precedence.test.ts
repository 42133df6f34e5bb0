/**
 * Our kubeconfig loader against client-node's (the reference implementation in JavaScript) on a corpus of
 * kubeconfigs: for every case both must pick the same server, user credentials, CA, TLS settings and proxy.
 * Where client-node itself departs from kubectl (client-go's clientcmd), the case says so, asserts client-node's
 * departure (so the note cannot go stale), and the reference is built from client-node's parts by kubectl's rule.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect as connectTcp, type AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { KubeConfig as ClientNodeConfig } from "@kubernetes/client-node";
import {
  Credentials,
  KubeClient,
  loadKubeConfig,
  type KubeConfig,
  type KubeConfigSource,
} from "../../../kube/index.ts";

/** What a loader picked, in a form both loaders can be reduced to. */
interface Picked {
  readonly server: string | undefined;
  readonly ca: string | undefined;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName: string | undefined;
  readonly proxyUrl: string | undefined;
  readonly authorization: string | undefined;
  readonly clientCert: string | undefined;
  readonly clientKey: string | undefined;
}

const root = mkdtempSync(join(tmpdir(), "kubeconfig-corpus-"));
after(() => rmSync(root, { recursive: true, force: true }));
const b64 = (text: string) => Buffer.from(text).toString("base64");
const caPem = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";

/** Writes `files` (relative to a fresh directory) and returns the directory. */
function tree(files: Record<string, string>, mode?: number): string {
  const dir = mkdtempSync(join(root, "case-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text, mode === undefined ? {} : { mode });
  }
  return dir;
}

function kubeconfig(parts: {
  clusters?: Record<string, Record<string, unknown>>;
  users?: Record<string, Record<string, unknown>>;
  contexts?: Record<string, { cluster: string; user: string; namespace?: string }>;
  current?: string;
}): string {
  const list = (entries: Record<string, unknown> | undefined, inner: string) =>
    Object.entries(entries ?? {}).map(([name, body]) => ({ name, [inner]: body }));
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: list(parts.clusters, "cluster"),
    users: list(parts.users, "user"),
    contexts: list(parts.contexts, "context"),
    ...(parts.current ? { "current-context": parts.current } : {}),
  });
}

/** One cluster, one user, one context, current: the shape of most real kubeconfigs. */
const simple = (cluster: Record<string, unknown>, user: Record<string, unknown>, name = "c") =>
  kubeconfig({
    clusters: { [name]: cluster },
    users: { [name]: user },
    contexts: { [name]: { cluster: name, user: name } },
    current: name,
  });

async function ours(kc: KubeConfig): Promise<Picked> {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const pem = (data: string | undefined, file: string | undefined) =>
    data ? Buffer.from(data, "base64").toString() : file ? readFileSync(file, "utf8") : undefined;
  return {
    server: cluster?.server,
    ca: pem(cluster?.caData, cluster?.caFile),
    skipTLSVerify: cluster?.skipTLSVerify ?? false,
    tlsServerName: cluster?.tlsServerName,
    proxyUrl: cluster?.proxyUrl,
    authorization: await new Credentials(user).authorization(),
    clientCert: pem(user?.certData, user?.certFile),
    clientKey: pem(user?.keyData, user?.keyFile),
  };
}

async function theirs(kc: ClientNodeConfig): Promise<Picked> {
  const cluster = kc.getCurrentCluster();
  const options: {
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
    auth?: string;
    rejectUnauthorized?: boolean;
    servername?: string;
    headers?: Record<string, string>;
  } = {};
  await kc.applyToHTTPSOptions(options);
  const basic = options.auth ? `Basic ${b64(options.auth)}` : undefined;
  return {
    server: cluster?.server,
    ca: options.ca?.toString(),
    skipTLSVerify: options.rejectUnauthorized === false,
    tlsServerName: options.servername,
    proxyUrl: cluster?.proxyUrl,
    authorization: options.headers?.["Authorization"] ?? basic,
    clientCert: options.cert?.toString(),
    clientKey: options.key?.toString(),
  };
}

/** Sets process.env for client-node (it reads KUBECONFIG, HOME and KUBERNETES_SERVICE_* from there). */
function withEnv<T>(env: NodeJS.ProcessEnv, run: () => T): T {
  const keys = ["KUBECONFIG", "HOME", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"];
  const saved = Object.fromEntries(keys.map((key) => [key, process.env[key]]));
  for (const key of keys) {
    if (env[key] === undefined) delete process.env[key];
    else process.env[key] = env[key];
  }
  try {
    return run();
  } finally {
    for (const key of keys) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  }
}

/** client-node's loader, as a program calls it: an explicit file, or the default search. */
function clientNode(env: NodeJS.ProcessEnv, source: KubeConfigSource, options: { keepFirstContext?: boolean } = {}) {
  const kc = new ClientNodeConfig();
  withEnv(env, () => {
    if (source.path) kc.loadFromFile(source.path);
    else kc.loadFromDefault(undefined, options.keepFirstContext ?? false);
  });
  if (source.context) kc.setCurrentContext(source.context);
  return kc;
}

/** kubectl's KUBECONFIG merge, from client-node's per-file parse: the first file to define a name wins. */
function mergedAsKubectl(files: readonly string[]): ClientNodeConfig {
  const configs = files.map((file) => {
    const kc = new ClientNodeConfig();
    kc.loadFromFile(file);
    return kc;
  });
  const first = <T extends { name: string }>(lists: T[][]) => {
    const byName = new Map<string, T>();
    for (const item of lists.flat()) if (!byName.has(item.name)) byName.set(item.name, item);
    return [...byName.values()];
  };
  const merged = new ClientNodeConfig();
  merged.loadFromOptions({
    clusters: first(configs.map((c) => c.getClusters())),
    users: first(configs.map((c) => c.getUsers())),
    contexts: first(configs.map((c) => c.getContexts())),
    currentContext: configs.map((c) => c.getCurrentContext()).find(Boolean) ?? "",
  });
  return merged;
}

/** A pod's ServiceAccount mount under `dir`, at the path client-node's loadFromCluster(prefix) reads. */
function serviceAccount(dir: string): { prefix: string; mount: string; env: NodeJS.ProcessEnv } {
  const mount = join(dir, "var/run/secrets/kubernetes.io/serviceaccount");
  mkdirSync(mount, { recursive: true });
  writeFileSync(join(mount, "token"), "sa-token");
  writeFileSync(join(mount, "ca.crt"), "-----BEGIN CERTIFICATE-----\nSA CA\n-----END CERTIFICATE-----\n");
  writeFileSync(join(mount, "namespace"), "myapp-system");
  return { prefix: dir, mount, env: { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" } };
}

function inClusterReference(env: NodeJS.ProcessEnv, prefix: string): ClientNodeConfig {
  const kc = new ClientNodeConfig();
  withEnv(env, () => kc.loadFromCluster(prefix));
  return kc;
}

interface Case {
  readonly name: string;
  /** Builds the files; returns where our loader and client-node look. */
  readonly given: () => {
    env: NodeJS.ProcessEnv;
    source?: KubeConfigSource;
    serviceAccountDir?: string;
    /** The reference, when client-node's own loader is not kubectl's on this case. */
    reference?: () => ClientNodeConfig;
    /** How client-node's own loader departs from kubectl here (asserted). */
    deviation?: (env: NodeJS.ProcessEnv, source: KubeConfigSource) => void;
  };
  readonly expect: Partial<Picked>;
}

const none = join(root, "no-service-account");

const cases: Case[] = [
  {
    name: "~/.kube/config alone: its current context, token and CA data",
    given: () => {
      const home = tree({
        ".kube/config": simple(
          { server: "https://home:6443", "certificate-authority-data": b64(caPem) },
          { token: "t" },
        ),
      });
      return { env: { HOME: home } };
    },
    expect: { server: "https://home:6443", authorization: "Bearer t", ca: caPem },
  },
  {
    name: "an explicit path wins over KUBECONFIG and ~/.kube/config",
    given: () => {
      const dir = tree({
        explicit: simple({ server: "https://explicit:6443" }, { token: "e" }),
        env: simple({ server: "https://env:6443" }, { token: "v" }),
        ".kube/config": simple({ server: "https://home:6443" }, { token: "h" }),
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "env") }, source: { path: join(dir, "explicit") } };
    },
    expect: { server: "https://explicit:6443", authorization: "Bearer e" },
  },
  {
    name: "KUBECONFIG wins over ~/.kube/config",
    given: () => {
      const dir = tree({
        env: simple({ server: "https://env:6443" }, { token: "v" }),
        ".kube/config": simple({ server: "https://home:6443" }, { token: "h" }),
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "env") } };
    },
    expect: { server: "https://env:6443", authorization: "Bearer v" },
  },
  {
    name: "KUBECONFIG list with overlapping clusters, users and contexts: the first file to define a name wins",
    given: () => {
      const dir = tree({
        a: kubeconfig({
          clusters: { shared: { server: "https://a:6443" } },
          users: { shared: { token: "a" } },
          contexts: { dev: { cluster: "shared", user: "shared" } },
        }),
        b: kubeconfig({
          clusters: { shared: { server: "https://b:6443" } },
          users: { shared: { token: "b" } },
          contexts: { dev: { cluster: "shared", user: "shared" } },
          current: "dev",
        }),
      });
      const files = [join(dir, "a"), join(dir, "b")];
      return {
        env: { HOME: dir, KUBECONFIG: files.join(delimiter) },
        reference: () => mergedAsKubectl(files),
        // client-node refuses a name defined twice; kubectl merges, the first file winning.
        deviation: (env, source) => assert.throws(() => clientNode(env, source), /Duplicate cluster: shared/),
      };
    },
    expect: { server: "https://a:6443", authorization: "Bearer a" },
  },
  {
    name: "KUBECONFIG list: current-context comes from the first file that sets it",
    given: () => {
      const dir = tree({
        a: kubeconfig({ current: "one" }),
        b: kubeconfig({
          clusters: { one: { server: "https://one:6443" } },
          users: { one: { token: "1" } },
          contexts: { one: { cluster: "one", user: "one" } },
        }),
        c: kubeconfig({
          clusters: { two: { server: "https://two:6443" } },
          users: { two: { token: "2" } },
          contexts: { two: { cluster: "two", user: "two" } },
          current: "two",
        }),
      });
      const files = [join(dir, "a"), join(dir, "b"), join(dir, "c")];
      return {
        env: { HOME: dir, KUBECONFIG: files.join(delimiter) },
        // client-node with contextFromStartingConfig keeps the first file's current-context, as kubectl does.
        reference: () => clientNode({ HOME: dir, KUBECONFIG: files.join(delimiter) }, {}, { keepFirstContext: true }),
        // By default client-node takes the last file's current-context; kubectl takes the first.
        deviation: (env, source) => assert.equal(clientNode(env, source).getCurrentContext(), "two"),
      };
    },
    expect: { server: "https://one:6443", authorization: "Bearer 1" },
  },
  {
    name: "an explicit context wins over current-context",
    given: () => {
      const dir = tree({
        config: kubeconfig({
          clusters: { one: { server: "https://one:6443" }, two: { server: "https://two:6443" } },
          users: { one: { token: "1" }, two: { token: "2" } },
          contexts: { one: { cluster: "one", user: "one" }, two: { cluster: "two", user: "two" } },
          current: "one",
        }),
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "config") }, source: { context: "two" } };
    },
    expect: { server: "https://two:6443", authorization: "Bearer 2" },
  },
  {
    name: "missing files in the KUBECONFIG list are skipped",
    given: () => {
      const dir = tree({ real: simple({ server: "https://real:6443" }, { token: "r" }) });
      const list = [join(dir, "gone-1"), join(dir, "real"), join(dir, "gone-2")].join(delimiter);
      return {
        env: { HOME: dir, KUBECONFIG: list },
        reference: () => clientNode({ HOME: dir, KUBECONFIG: join(dir, "real") }, {}),
        // client-node fails on the first missing file; kubectl skips missing files.
        deviation: (env, source) => assert.throws(() => clientNode(env, source), /ENOENT/),
      };
    },
    expect: { server: "https://real:6443", authorization: "Bearer r" },
  },
  {
    name: "in a pod with ~/.kube/config present: the file, not the ServiceAccount",
    given: () => {
      const dir = tree({ ".kube/config": simple({ server: "https://home:6443" }, { token: "h" }) });
      const sa = serviceAccount(dir);
      return { env: { HOME: dir, ...sa.env }, serviceAccountDir: sa.mount };
    },
    expect: { server: "https://home:6443", authorization: "Bearer h" },
  },
  {
    name: "in a pod with KUBECONFIG set: the file, not the ServiceAccount",
    given: () => {
      const dir = tree({ env: simple({ server: "https://env:6443" }, { token: "v" }) });
      const sa = serviceAccount(dir);
      return { env: { HOME: dir, KUBECONFIG: join(dir, "env"), ...sa.env }, serviceAccountDir: sa.mount };
    },
    expect: { server: "https://env:6443", authorization: "Bearer v" },
  },
  {
    name: "in a pod with no kubeconfig: the ServiceAccount's token and CA, the service's address",
    given: () => {
      const dir = tree({});
      const sa = serviceAccount(dir);
      return {
        env: { HOME: dir, ...sa.env },
        serviceAccountDir: sa.mount,
        // client-node looks for the ServiceAccount at a fixed path only; the test points it at its own mount.
        reference: () => inClusterReference(sa.env, sa.prefix),
      };
    },
    expect: { server: "https://10.96.0.1:443", authorization: "Bearer sa-token" },
  },
  {
    name: "in a pod whose KUBECONFIG files are all missing: the ServiceAccount",
    given: () => {
      const dir = tree({});
      const sa = serviceAccount(dir);
      const env = { HOME: dir, KUBECONFIG: join(dir, "gone"), ...sa.env };
      return {
        env,
        serviceAccountDir: sa.mount,
        reference: () => inClusterReference(sa.env, sa.prefix),
        // client-node fails on the missing file; kubectl finds no config and falls back to in-cluster.
        deviation: (e, source) => assert.throws(() => clientNode(e, source), /ENOENT/),
      };
    },
    expect: { server: "https://10.96.0.1:443", authorization: "Bearer sa-token" },
  },
  {
    name: "tokenFile is read (relative to the kubeconfig)",
    given: () => {
      const dir = tree({ config: simple({ server: "https://k:6443" }, { tokenFile: "token" }), token: "from-file" });
      return {
        env: { HOME: dir, KUBECONFIG: join(dir, "config") },
        reference: () => {
          // kubectl's field is tokenFile; client-node reads a "token-file" field instead and ignores tokenFile.
          const kc = new ClientNodeConfig();
          kc.loadFromString(simple({ server: "https://k:6443" }, { "token-file": join(dir, "token") }));
          return kc;
        },
        deviation: async (env, source) =>
          assert.equal((await theirs(clientNode(env, source))).authorization, undefined),
      };
    },
    expect: { authorization: "Bearer from-file" },
  },
  {
    name: "an exec plugin's token",
    given: () => {
      const dir = tree(
        {
          "plugin.sh": `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-'"$MYAPP_SUFFIX"'"}}'\n`,
        },
        0o755,
      );
      const exec = {
        apiVersion: "client.authentication.k8s.io/v1",
        command: join(dir, "plugin.sh"),
        env: [{ name: "MYAPP_SUFFIX", value: "ok" }],
      };
      writeFileSync(join(dir, "config"), simple({ server: "https://k:6443" }, { exec }));
      return { env: { HOME: dir, KUBECONFIG: join(dir, "config") } };
    },
    expect: { authorization: "Bearer exec-ok" },
  },
  {
    name: "basic auth",
    given: () => {
      const dir = tree({ config: simple({ server: "https://k:6443" }, { username: "ann", password: "s3cret" }) });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "config") } };
    },
    expect: { authorization: `Basic ${b64("ann:s3cret")}` },
  },
  {
    name: "client certificate and key, from data and from a file",
    given: () => {
      const dir = tree({
        config: simple({ server: "https://k:6443" }, { "client-certificate-data": b64("CERT"), "client-key": "u.key" }),
        "u.key": "KEY",
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "config") } };
    },
    expect: { clientCert: "CERT", clientKey: "KEY", authorization: undefined },
  },
  {
    name: "insecure-skip-tls-verify",
    given: () => {
      const dir = tree({
        config: simple({ server: "https://k:6443", "insecure-skip-tls-verify": true }, { token: "t" }),
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "config") } };
    },
    expect: { skipTLSVerify: true, ca: undefined },
  },
  {
    name: "tls-server-name and a CA file relative to the kubeconfig",
    given: () => {
      const dir = tree({
        "sub/config": simple(
          { server: "https://10.0.0.1:6443", "tls-server-name": "kubernetes", "certificate-authority": "ca.crt" },
          { token: "t" },
        ),
        "sub/ca.crt": caPem,
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "sub/config") } };
    },
    expect: { tlsServerName: "kubernetes", ca: caPem, skipTLSVerify: false },
  },
  {
    name: "proxy-url (http, with credentials)",
    given: () => {
      const dir = tree({
        config: simple({ server: "https://k:6443", "proxy-url": "http://me:pw@proxy.corp:3128" }, { token: "t" }),
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "config") } };
    },
    expect: { proxyUrl: "http://me:pw@proxy.corp:3128", server: "https://k:6443" },
  },
  {
    name: "proxy-url (socks5)",
    given: () => {
      const dir = tree({
        config: simple({ server: "https://k:6443", "proxy-url": "socks5://bastion:1080" }, { token: "t" }),
      });
      return { env: { HOME: dir, KUBECONFIG: join(dir, "config") } };
    },
    expect: { proxyUrl: "socks5://bastion:1080" },
  },
];

describe("kubeconfig loading as kubectl: our loader picks what client-node picks", () => {
  for (const c of cases) {
    test(c.name, async () => {
      // GIVEN the case's files and environment
      const given = c.given();
      const source = given.source ?? {};
      // WHEN both loaders load it
      const picked = await ours(
        loadKubeConfig(source, {
          env: given.env,
          home: given.env.HOME ?? none,
          serviceAccountDir: given.serviceAccountDir ?? none,
        }),
      );
      const reference = given.reference ? given.reference() : clientNode(given.env, source);
      // THEN they agree, and on what the case is about
      assert.deepEqual(picked, await theirs(reference));
      assert.deepEqual(
        Object.fromEntries(Object.keys(c.expect).map((key) => [key, picked[key as keyof Picked]])),
        c.expect,
      );
      await given.deviation?.(given.env, source);
    });
  }
});

describe("kubeconfig loading: what kubectl refuses", () => {
  test("an explicit path that does not exist is an error, not a fallback", () => {
    const dir = tree({ ".kube/config": simple({ server: "https://home:6443" }, { token: "h" }) });
    assert.throws(
      () => loadKubeConfig({ path: join(dir, "gone") }, { env: { HOME: dir }, home: dir, serviceAccountDir: none }),
      /cannot read kubeconfig .*gone: ENOENT/,
    );
  });

  test("no kubeconfig and not in a pod: says where it looked, and what to set", () => {
    const dir = tree({});
    assert.throws(
      () => loadKubeConfig({}, { env: {}, home: dir, serviceAccountDir: none }),
      new Error(
        `no kubeconfig found: KUBECONFIG is not set and ${join(dir, ".kube", "config")} does not exist; set ` +
          "KUBECONFIG to your cluster's kubeconfig file (or pass --kubeconfig)",
      ),
    );
  });

  test("no kubeconfig, as `npx myapp-operator` meets it: KUBECONFIG unset, no ~/.kube/config in HOME", (t) => {
    // GIVEN the process's own environment (no surroundings passed): a HOME without .kube, no KUBECONFIG, no pod
    const dir = tree({});
    const saved = {
      HOME: process.env.HOME,
      KUBECONFIG: process.env.KUBECONFIG,
      HOST: process.env.KUBERNETES_SERVICE_HOST,
    };
    t.after(() => {
      for (const [name, value] of [
        ["HOME", saved.HOME],
        ["KUBECONFIG", saved.KUBECONFIG],
        ["KUBERNETES_SERVICE_HOST", saved.HOST],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    process.env.HOME = dir;
    delete process.env.KUBECONFIG;
    delete process.env.KUBERNETES_SERVICE_HOST;
    // THEN it names both places, not a current context of a file that is not there
    assert.throws(
      () => loadKubeConfig(),
      (error: Error) =>
        error.message.startsWith(`no kubeconfig found: KUBECONFIG is not set and ${join(dir, ".kube", "config")}`) &&
        !/current-context|ServiceAccount/.test(error.message),
    );
  });

  test("no kubeconfig in a pod without a mounted ServiceAccount token: names the token's place too", () => {
    const dir = tree({});
    const env = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };
    assert.throws(
      () => loadKubeConfig({}, { env, home: dir, serviceAccountDir: join(dir, "sa") }),
      new RegExp(`does not exist, and no ServiceAccount token is mounted at ${join(dir, "sa", "token")};`),
    );
  });

  test("a ~/.kube/config without a current context still says so", () => {
    const dir = tree({ ".kube/config": kubeconfig({ clusters: { c: { server: "https://k:6443" } } }) });
    assert.throws(
      () => loadKubeConfig({}, { env: {}, home: dir, serviceAccountDir: none }),
      /names no current cluster: set current-context .*KUBECONFIG/,
    );
  });

  test("a current-context naming no context is an error, even in a pod", () => {
    const dir = tree({ config: kubeconfig({ current: "ghost" }) });
    const sa = serviceAccount(dir);
    assert.throws(
      () =>
        loadKubeConfig(
          {},
          { env: { KUBECONFIG: join(dir, "config"), ...sa.env }, home: dir, serviceAccountDir: sa.mount },
        ),
      /current-context "ghost" names no context/,
    );
  });

  test("in a pod whose user cannot read a ~/.kube/config (the operator image's nonroot): the ServiceAccount", () => {
    // ".kube" a file stands in for a home the user may not enter (as root, permissions would not stop the read).
    const dir = tree({ ".kube": "not a directory" });
    const sa = serviceAccount(dir);
    const config = loadKubeConfig({}, { env: { ...sa.env }, home: dir, serviceAccountDir: sa.mount });
    assert.match(config.getCurrentCluster()?.server ?? "", /^https:\/\//);
    assert.equal(config.getCurrentUser()?.tokenFile, join(sa.mount, "token"));
  });

  test("a proxy-url scheme kubectl does not know is refused, naming the cluster", () => {
    assert.throws(
      () => loadKubeConfig({ kubeconfig: simple({ server: "https://k", "proxy-url": "ftp://p:21" }, { token: "t" }) }),
      /cluster "c": proxy-url scheme ftp: is not one of http, https, socks5/,
    );
  });
});

describe("proxy-url on the wire", () => {
  test("requests to the apiserver are tunnelled through the proxy, with the apiserver's TLS settings", async (t) => {
    // GIVEN an HTTPS "apiserver" whose certificate is for the name "kubernetes" only
    const dir = tree({});
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=kubernetes"],
        ...["-addext", "subjectAltName=DNS:kubernetes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
      ],
      { stdio: "ignore" },
    );
    const cert = readFileSync(join(dir, "cert.pem"));
    const seen: IncomingHttpHeaders[] = [];
    const apiserver = createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert }, (request, response) => {
      seen.push(request.headers);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ metadata: { resourceVersion: "1" }, items: [] }));
    });
    await new Promise<void>((resolve) => apiserver.listen(0, "127.0.0.1", resolve));
    t.after(() => new Promise<void>((resolve) => (apiserver.closeAllConnections(), apiserver.close(() => resolve()))));
    // AND a CONNECT proxy that wants credentials
    const tunnels: { target: string; auth: string | undefined }[] = [];
    const proxy = createHttpServer((_request, response) => response.writeHead(405).end());
    proxy.on("connect", (request, client, head) => {
      tunnels.push({ target: request.url ?? "", auth: request.headers["proxy-authorization"] });
      const [host, port] = (request.url ?? "").split(":");
      const upstream = connectTcp(Number(port), host!, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    t.after(() => new Promise<void>((resolve) => (proxy.closeAllConnections(), proxy.close(() => resolve()))));
    const apiPort = (apiserver.address() as AddressInfo).port;
    const proxyPort = (proxy.address() as AddressInfo).port;
    // WHEN a client whose kubeconfig names the proxy lists Pods
    const client = new KubeClient(
      loadKubeConfig({
        kubeconfig: simple(
          {
            server: `https://127.0.0.1:${apiPort}`,
            "certificate-authority-data": cert.toString("base64"),
            "tls-server-name": "kubernetes",
            "proxy-url": `http://me:pw@127.0.0.1:${proxyPort}`,
          },
          { token: "t" },
        ),
      }),
    );
    t.after(() => client.close());
    await client.list("v1", "Pod");
    await client.list("v1", "Pod");
    // THEN both went through the proxy's tunnel to the apiserver (undici may open a second connection when a
    // request starts before the previous one's socket is released), which saw the bearer token, not the proxy's
    assert.ok(tunnels.length >= 1 && tunnels.length <= 2, `${tunnels.length} tunnels for 2 requests`);
    for (const tunnel of tunnels)
      assert.deepEqual(tunnel, { target: `127.0.0.1:${apiPort}`, auth: `Basic ${b64("me:pw")}` });
    assert.deepEqual(
      seen.map((h) => [h.authorization, h["proxy-authorization"]]),
      [
        ["Bearer t", undefined],
        ["Bearer t", undefined],
      ],
    );
  });
});
