/** The operator's command line: options, --help, --version, and the one line a bad flag or a failed start prints. */
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { renderableChartKinds } from "../../../api/index.ts";
import { parseOptions, usage, UsageRequested, VersionRequested } from "../../../operator/options.ts";
import type { KubeObject, OwnerReference } from "../../../kube/index.ts";
import { cachedKinds, claimAsRead, watchedOwnedKinds } from "../../../operator/watched-kinds.ts";
import { RenderedChildren } from "../../../operator/chart/index.ts";
import { reachCluster } from "../../../operator/main.ts";

const mainPath = fileURLToPath(new URL("../../../operator/main.ts", import.meta.url));
const packageJson = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
};
/** `run`, without blocking the test process (so two can run at once). */
const runAsync = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [mainPath, ...args],
      { encoding: "utf8", env: { PATH: process.env.PATH, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? -1) : 0, stdout, stderr }),
    );
  });
/** A kubeconfig whose server refuses every connection. */
const refusingKubeconfig = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;
const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [mainPath, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, ...env },
    timeout: 30_000,
  });

describe("operator options", () => {
  it("resyncs every 10 hours by default, as controller-runtime; --resync-period is in seconds", () => {
    assert.equal(parseOptions([], {}).resyncPeriodMs, 36_000_000);
    assert.equal(parseOptions(["--resync-period=2"], {}).resyncPeriodMs, 2000);
  });

  it("--metrics-secure needs a port of its own: HTTPS /metrics cannot share the probes' plain HTTP server", () => {
    const same = ["--metrics-secure", "--metrics-bind-address=:8443", "--health-probe-bind-address=0.0.0.0:8443"];
    assert.throws(
      () => parseOptions(same, {}),
      /^Error: --metrics-secure serves \/metrics over HTTPS on a port of its own: --metrics-bind-address must differ from --health-probe-bind-address, got 0\.0\.0\.0:8443 for both$/,
    );
    // The same address without --metrics-secure is one plain server for both, as before; two free ports are two.
    assert.doesNotThrow(() => parseOptions(same.slice(1), {}));
    const free = ["--metrics-secure", "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0"];
    assert.equal(parseOptions(free, {}).metricsSecure, true);
  });

  it("periods end in a timer: at most 2147483 s (24.8 days), the slow lane's with its 10 % jitter on top", () => {
    // GIVEN Node's setTimeout, which fires a delay over 2^31-1 ms after 1 ms (a hot loop)
    // THEN the longest period that fits is accepted, one second more is refused naming the flag and the maximum
    assert.equal(parseOptions(["--resync-period=2147483"], {}).resyncPeriodMs, 2_147_483_000);
    assert.throws(
      () => parseOptions(["--resync-period=2147484"], {}),
      /^Error: --resync-period must be an integer from 1 to 2147483, got "2147484"$/,
    );
    assert.equal(parseOptions(["--slow-retry-interval=1952257"], {}).slowRetryIntervalMs * 1.1 < 2 ** 31, true);
    assert.throws(
      () => parseOptions(["--slow-retry-interval=2147483"], {}),
      /^Error: --slow-retry-interval must be an integer from 1 to 1952257, got "2147483"$/,
    );
    assert.throws(
      () => parseOptions(["--render-timeout=2147484"], {}),
      /^Error: --render-timeout must be an integer from 1 to 2147483, got "2147484"$/,
    );
  });

  it("numbers are decimal digits only, within the MyAppOperator component's ranges", () => {
    for (const text of ["0x10", "1e3", "1e30", " 3 ", "3.0", "+3", "-1", "0", "", "101"]) {
      assert.throws(
        () => parseOptions([`--concurrency=${text}`], {}),
        new RegExp(`^Error: --concurrency must be an integer from 1 to 100, got "${text.replace("+", "\\+")}"$`),
        text,
      );
    }
    assert.equal(parseOptions(["--concurrency=100"], {}).concurrency, 100);
    assert.equal(parseOptions(["--max-concurrent-renders=32"], {}).maxConcurrentRenders, 32);
    assert.throws(
      () => parseOptions(["--max-concurrent-renders=33"], {}),
      /--max-concurrent-renders must be an integer from 1 to 32, got "33"/,
    );
    // Unbounded counts still stop where a number stops being exact.
    assert.throws(
      () => parseOptions(["--max-consecutive-failures=99999999999999999999"], {}),
      /--max-consecutive-failures must be an integer from 1 to 9007199254740991/,
    );
    assert.throws(() => parseOptions(["--render-objects=1e3"], {}), /--render-objects must be a positive integer/);
  });

  it("a value from a MYAPP_* variable is refused naming the variable and its flag", () => {
    assert.throws(
      () => parseOptions([], { MYAPP_CONCURRENCY: "0x10" }),
      /^Error: MYAPP_CONCURRENCY \(--concurrency\) must be an integer from 1 to 100, got "0x10"$/,
    );
    assert.throws(
      () => parseOptions([], { MYAPP_LOG_LEVEL: "verbose" }),
      /^Error: MYAPP_LOG_LEVEL \(--log-level\) must be one of trace, /,
    );
    assert.throws(
      () => parseOptions([], { MYAPP_METRICS_BIND_ADDRESS: "8080" }),
      /^Error: MYAPP_METRICS_BIND_ADDRESS \(--metrics-bind-address\) must be \[host\]:port/,
    );
    assert.throws(
      () => parseOptions([], { MYAPP_HELM: "" }),
      /^Error: MYAPP_HELM \(--helm\) must name the helm binary/,
    );
    // The flag wins over its variable, as before.
    assert.equal(parseOptions(["--concurrency=3"], { MYAPP_CONCURRENCY: "4" }).concurrency, 3);
  });

  it("boolean variables take true or false in any case, or 1 or 0; anything else names the variable", () => {
    const variables = {
      MYAPP_LEADER_ELECT: (o: ReturnType<typeof parseOptions>) => o.leaderElect,
      MYAPP_METRICS_SECURE: (o: ReturnType<typeof parseOptions>) => o.metricsSecure,
      MYAPP_REQUIRE_EXPANDABLE_STORAGE: (o: ReturnType<typeof parseOptions>) => o.policy.requireExpandableStorage,
    };
    for (const [variable, read] of Object.entries(variables)) {
      for (const text of ["true", "TRUE", "True", "1"])
        assert.equal(read(parseOptions([], { [variable]: text })), true);
      for (const text of ["false", "FALSE", "0"]) assert.equal(read(parseOptions([], { [variable]: text })), false);
      assert.equal(read(parseOptions([], {})), false);
      for (const text of ["yes", "on", "ture", "", " true"]) {
        assert.throws(
          () => parseOptions([], { [variable]: text }),
          new RegExp(`^Error: ${variable} \\(--[a-z-]+\\) must be true or false \\(or 1 or 0\\), got "${text}"$`),
          `${variable}=${text}`,
        );
      }
    }
  });

  it("names are what Kubernetes accepts for a Lease and a namespace, refused at start otherwise", () => {
    assert.throws(
      () => parseOptions(["--leader-election-id="], {}),
      /^Error: --leader-election-id must be a Lease name/,
    );
    assert.throws(
      () => parseOptions(["--leader-election-id=Bad_Name"], {}),
      /^Error: --leader-election-id must be a Lease name: at most 253 lower-case letters, .*got "Bad_Name"$/,
    );
    assert.equal(
      parseOptions(["--leader-election-id=myapp-operator-leader.v2"], {}).leaderElectionId,
      "myapp-operator-leader.v2",
    );
    assert.throws(
      () => parseOptions(["--leader-election-namespace=Bad NS"], {}),
      /^Error: --leader-election-namespace must be a namespace name \(at most 63 .*\), got "Bad NS"$/,
    );
    assert.throws(
      () => parseOptions([], { POD_NAMESPACE: "" }),
      /^Error: POD_NAMESPACE \(the default of --leader-election-namespace\) must be a namespace name/,
    );
    assert.equal(parseOptions([], { POD_NAMESPACE: "myapp-system" }).leaderElectionNamespace, "myapp-system");
    assert.throws(
      () => parseOptions(["--namespaces=Shop,a b"], {}),
      /^Error: --namespaces: "Shop", "a b" are not namespace names \(at most 63 /,
    );
    assert.throws(() => parseOptions(["--namespaces=shop,shop"], {}), /--namespaces: "shop" is listed twice/);
    assert.deepEqual(parseOptions(["--namespaces=shop, team-a"], {}).namespaces, ["shop", "team-a"]);
    // Unset or empty: every namespace, as documented.
    assert.deepEqual(parseOptions(["--namespaces="], {}).namespaces, []);
  });

  it("an empty path is an error, never the default or nothing", () => {
    assert.throws(() => parseOptions(["--helm="], {}), /^Error: --helm must name the helm binary/);
    assert.throws(() => parseOptions(["--helm=  "], {}), /^Error: --helm must name the helm binary/);
    assert.throws(() => parseOptions(["--kubeconfig="], {}), /^Error: --kubeconfig must name a kubeconfig file/);
    assert.throws(() => parseOptions(["--metrics-cert-dir="], {}), /^Error: --metrics-cert-dir must name a directory/);
    const paths = parseOptions(["--helm=/opt/helm", "--kubeconfig=/k", "--metrics-cert-dir=/certs"], {});
    assert.deepEqual([paths.helm, paths.kubeconfig, paths.metricsCertDir], ["/opt/helm", "/k", "/certs"]);
  });

  it("bind addresses are host:port; a bare port is refused with both readings shown", () => {
    assert.throws(
      () => parseOptions(["--metrics-bind-address=8080"], {}),
      /^Error: --metrics-bind-address must be \[host\]:port with a port from 0 to 65535, such as :8080 \(every interface\) or 127\.0\.0\.1:8080 \(this machine only\), got "8080"$/,
    );
    for (const text of ["foo bar:80", ":", "host:", "::1:8080", "[1.2.3.4]:80", "a:65536", "-a:80"]) {
      assert.throws(() => parseOptions([`--metrics-bind-address=${text}`], {}), /must be \[host\]:port/, text);
    }
    const read = (text: string) => parseOptions([`--metrics-bind-address=${text}`], {}).metricsAddress;
    assert.deepEqual(read(":8080"), { host: "0.0.0.0", port: 8080 });
    assert.deepEqual(read("127.0.0.1:0"), { host: "127.0.0.1", port: 0 });
    assert.deepEqual(read("[::1]:8080"), { host: "::1", port: 8080 });
    assert.deepEqual(read("localhost:8080"), { host: "localhost", port: 8080 });
  });

  it("metrics and probes on one port collide when one host is a wildcard, not only when the text is the same", () => {
    // GIVEN 127.0.0.1:8081 beside the probes' default :8081: two listeners, the second fails with EADDRINUSE
    assert.throws(
      () => parseOptions(["--metrics-bind-address=127.0.0.1:8081"], {}),
      /^Error: --metrics-bind-address "127\.0\.0\.1:8081" and --health-probe-bind-address ":8081" would both listen on port 8081: give them one address \(one server serves both\) or two ports$/,
    );
    assert.throws(
      () => parseOptions(["--metrics-bind-address=[::]:9000", "--health-probe-bind-address=127.0.0.1:9000"], {}),
      /would both listen on port 9000/,
    );
    assert.throws(
      () =>
        parseOptions(
          ["--metrics-secure", "--metrics-bind-address=127.0.0.1:8443", "--health-probe-bind-address=:8443"],
          {},
        ),
      /--metrics-bind-address must differ from --health-probe-bind-address, got 127\.0\.0\.1:8443 and 0\.0\.0\.0:8443$/,
    );
    // Two hosts, neither a wildcard, are two sockets; one address is one server; port 0 picks two free ports.
    assert.doesNotThrow(() =>
      parseOptions(["--metrics-bind-address=127.0.0.1:8081", "--health-probe-bind-address=10.0.0.1:8081"], {}),
    );
    assert.doesNotThrow(() => parseOptions(["--metrics-bind-address=:8081"], {}));
    assert.doesNotThrow(() =>
      parseOptions(["--metrics-bind-address=:0", "--health-probe-bind-address=127.0.0.1:0"], {}),
    );
  });

  it("--help is a request for the usage, not an error", () => {
    assert.throws(() => parseOptions(["--help"], {}), UsageRequested);
    assert.throws(() => parseOptions(["-h"], {}), UsageRequested);
  });

  it("--version is a request for the version, answered before any other flag is checked", () => {
    assert.throws(() => parseOptions(["--concurrency=x", "--version"], {}), VersionRequested);
  });
});

describe("operator/main.ts", () => {
  it("--help and -h print the usage under the command's own name and exit 0, with nothing on stderr", () => {
    for (const flag of ["--help", "-h"]) {
      const result = run([flag]);
      assert.equal(result.status, 0, flag);
      assert.equal(result.stdout.trim(), usage);
      assert.match(result.stdout, /^Usage: myapp-operator \[flags\]/);
      assert.match(result.stdout, /npm run operator -- \[flags\]/);
      assert.doesNotMatch(result.stdout, /node operator\/main\.ts/);
      assert.equal(result.stderr, "");
    }
  });

  it("--version prints the package's version and exits 0", () => {
    const result = run(["--version"]);
    assert.equal(result.status, 0);
    assert.equal(result.stdout, `myapp-operator ${packageJson.version}\n`);
    assert.equal(result.stderr, "");
  });

  it("a bad flag value is one line naming the flag, without the usage, and exits 1", () => {
    const result = run(["--concurrency=x"]);
    assert.equal(result.status, 1);
    assert.equal(result.stderr, 'myapp-operator: --concurrency must be an integer from 1 to 100, got "x"\n');
    assert.equal(result.stdout, "");
  });

  it("an unknown flag is one line that says where the flags are listed, and exits 1", () => {
    const result = run(["--concurency=2"]);
    assert.equal(result.status, 1);
    assert.equal(result.stderr, "myapp-operator: unknown flag --concurency (see myapp-operator --help)\n");
  });

  it("an unreadable kubeconfig is one line, no stack trace, exit 1", () => {
    const ports = ["--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0"];
    const named = run(["--kubeconfig=/nonexistent/kubeconfig", ...ports]);
    assert.equal(named.status, 1);
    assert.equal(named.stderr, "myapp-operator: cannot read kubeconfig /nonexistent/kubeconfig: ENOENT\n");
    assert.equal(named.stdout, "", "no JSON log line with a stack at the default level");

    const listed = run(ports, { KUBECONFIG: "/nonexistent/kubeconfig" });
    assert.equal(listed.status, 1);
    assert.equal(
      listed.stderr,
      "myapp-operator: cannot read kubeconfig: no file of KUBECONFIG exists (/nonexistent/kubeconfig)\n",
    );
  });

  it("reads the KUBECONFIG of the environment it is given, not only the process's (npm run operator's wrapper)", async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "operator-main-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = path.join(dir, "kubeconfig");
    writeFileSync(kubeconfig, refusingKubeconfig);
    const options = parseOptions([], { KUBECONFIG: kubeconfig });
    await assert.rejects(
      reachCluster(options, 500),
      new RegExp(`cannot reach the cluster at https://127\\.0\\.0\\.1:1 \\(KUBECONFIG ${kubeconfig}\\)`),
    );
  });

  it("reads KUBECONFIG as kubectl does: a list of files, a missing one skipped", async (t) => {
    // GIVEN KUBECONFIG listing a missing file, then a kubeconfig whose server refuses connections
    const dir = mkdtempSync(path.join(os.tmpdir(), "operator-main-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = path.join(dir, "kubeconfig");
    writeFileSync(kubeconfig, refusingKubeconfig);
    const list = [path.join(dir, "missing"), kubeconfig].join(path.delimiter);

    // WHEN the operator starts
    const result = await runAsync(["--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0"], {
      KUBECONFIG: list,
    });

    // THEN it used the second file's cluster, and says where it came from
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      `myapp-operator: cannot reach the cluster at https://127.0.0.1:1 (KUBECONFIG ${list}): GET /version: connect ECONNREFUSED 127.0.0.1:1\n`,
    );
  });

  it("an unreachable cluster at start is one line naming the server, exit 1; its stack only at --log-level=debug", async (t) => {
    // GIVEN a kubeconfig whose server refuses connections (port 1 on localhost)
    const dir = mkdtempSync(path.join(os.tmpdir(), "operator-main-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const kubeconfig = path.join(dir, "kubeconfig");
    writeFileSync(kubeconfig, refusingKubeconfig);
    const flags = [
      `--kubeconfig=${kubeconfig}`,
      "--metrics-bind-address=127.0.0.1:0",
      "--health-probe-bind-address=127.0.0.1:0",
    ];

    // WHEN the operator starts, at the default log level and at debug (at once: each waits out its start deadline)
    const [plain, debug] = await Promise.all([runAsync(flags), runAsync([...flags, "--log-level=debug"])]);

    // THEN it gives up within its start deadline with one line, and nothing else
    assert.equal(plain.status, 1);
    assert.equal(
      plain.stderr,
      `myapp-operator: cannot reach the cluster at https://127.0.0.1:1 (kubeconfig ${kubeconfig}): GET /version: connect ECONNREFUSED 127.0.0.1:1\n`,
    );
    assert.equal(plain.stdout, "");

    // AND with --log-level=debug the same line, plus the error with its stack as a debug log line
    assert.equal(debug.status, 1);
    assert.equal(debug.stderr, plain.stderr);
    const logged = debug.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { stack?: string } })
      .find((line) => line.msg === "operator failed to start");
    assert.equal(logged?.level, 20);
    assert.match(logged?.err?.stack ?? "", /\n\s+at /);
  });
});

describe("watchedOwnedKinds", () => {
  it("watches the template's kinds plus every readable chart kind, never Secrets, each once, by the operator's label", () => {
    const kinds = watchedOwnedKinds(renderableChartKinds, new RenderedChildren());
    assert.deepEqual(
      kinds.map((k) => `${k.apiVersion}/${k.kind}`),
      [
        "apps/v1/Deployment",
        "apps/v1/StatefulSet",
        "v1/Service",
        "v1/ConfigMap",
        "v1/ServiceAccount",
        "networking.k8s.io/v1/Ingress",
        "policy/v1/PodDisruptionBudget",
        "autoscaling/v2/HorizontalPodAutoscaler",
      ],
    );
    assert.ok(kinds.every((k) => k.labelSelector === "app.kubernetes.io/managed-by=myapp-operator"));
    // A narrowed allow-list watches only what it allows (and the template's kinds, which it always makes).
    const narrowed = watchedOwnedKinds(
      renderableChartKinds.filter((k) => k.kind === "Ingress" || k.kind === "Secret"),
      new RenderedChildren(),
    );
    assert.deepEqual(
      narrowed.map((k) => k.kind),
      ["Deployment", "StatefulSet", "Service", "Ingress"],
    );
  });

  it("bounds per namespace the objects of each kind it keeps in part (identities, claims), not those kept whole", () => {
    const watched = [...watchedOwnedKinds(renderableChartKinds, new RenderedChildren(), 7), ...cachedKinds(7)];
    assert.ok(watched.every((kind) => kind.namespaceLimit?.maxObjects === 7));
    const deployment = watched.find((kind) => kind.kind === "Deployment")!;
    const child = (name: string): KubeObject => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name,
        namespace: "team",
        labels: { "app.kubernetes.io/managed-by": "myapp-operator" },
        ownerReferences: [
          { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", uid: "i", controller: true },
        ],
      },
    });
    // The template's child is kept whole and not counted; anything else with the label is an identity, counted.
    assert.equal(deployment.namespaceLimit?.counts(deployment.transform!(child("web"))), false);
    assert.equal(deployment.namespaceLimit?.counts(deployment.transform!(child("forged"))), true);
    // Every claim counts: the cache keeps each in part, and a tenant may label their own.
    const claims = watched.find((kind) => kind.kind === "PersistentVolumeClaim")!;
    assert.equal(claims.namespaceLimit?.counts(claimAsRead(child("data"))), true);
    // Unbounded when no number is given (tools and tests that keep a handful).
    assert.ok(watchedOwnedKinds(renderableChartKinds, new RenderedChildren()).every((k) => !k.namespaceLimit));
  });

  it("caches what an instance controls and keeps in sync whole, of anything else with our label its identity", () => {
    // GIVEN instance team/web (uid i) whose current render names "cm" of every watched kind
    const rendered = new RenderedChildren();
    rendered.record(
      { namespace: "team", name: "web" },
      "i",
      watchedOwnedKinds(renderableChartKinds, rendered).map(({ apiVersion, kind }) => ({
        apiVersion,
        kind,
        metadata: { name: "cm" },
        data: { blob: "x".repeat(20_000) },
      })),
    );
    const labels = {
      "app.kubernetes.io/managed-by": "myapp-operator",
      "app.kubernetes.io/instance": "web",
      "myapp.example.com/chart-instance": "web",
      "team/own": "x",
    };
    const object = (ownerReferences: OwnerReference[]): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cm", namespace: "team", uid: "u", resourceVersion: "3", labels, ownerReferences },
      data: { blob: "x".repeat(20_000) },
    });
    const controlled = { apiVersion: "example.com/v1", kind: "MyAppInstance", name: "web", uid: "i", controller: true };
    const unlabelled = (ownerReferences: OwnerReference[], name = "cm"): KubeObject => {
      const { "myapp.example.com/chart-instance": _, ...rest } = labels;
      return { ...object(ownerReferences), metadata: { ...object(ownerReferences).metadata, name, labels: rest } };
    };
    // WHEN the transform of each kind takes such objects THEN ...
    for (const watched of watchedOwnedKinds(renderableChartKinds, rendered)) {
      const transform = watched.transform!;
      assert.ok(transform(object([controlled]))["data"], `${watched.kind}: an object of the instance's chart whole`);
      // Controlled, but neither of its chart (the label) nor a child of its template (the name): a tenant's own
      // object that names the tenant's instance as controller is kept as its identity.
      assert.equal(transform(unlabelled([controlled]))["data"], undefined, `${watched.kind}: forged controller`);
      const templateName = { Deployment: "web", StatefulSet: "web", Service: "web" }[watched.kind as string];
      assert.equal(
        Boolean(transform(unlabelled([controlled], templateName ?? "cm"))["data"]),
        templateName !== undefined,
        `${watched.kind}: a child of the built-in template by its name`,
      );
      assert.deepEqual(transform(object([])), {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "cm",
          namespace: "team",
          uid: "u",
          resourceVersion: "3",
          labels: {
            "app.kubernetes.io/managed-by": "myapp-operator",
            "app.kubernetes.io/instance": "web",
            "myapp.example.com/chart-instance": "web",
          },
        },
        contentWithheld: true,
      });
    }
  });
});

describe("claimAsRead", () => {
  it("keeps of a volume claim what reconciles read, and nothing a tenant could fill", () => {
    const claim: KubeObject = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: "data-web-0",
        namespace: "team",
        uid: "u",
        resourceVersion: "9",
        creationTimestamp: "2026-12-08T02:51:15Z",
        labels: { "app.kubernetes.io/instance": "web", "team/own": "x" },
        annotations: { big: "x".repeat(200_000) },
      },
      spec: {
        storageClassName: "fast",
        resources: { requests: { storage: "1Gi" } },
        selector: { matchLabels: { big: "x".repeat(60) } },
        accessModes: ["ReadWriteOnce"],
      },
      status: {
        phase: "Bound",
        capacity: { storage: "1Gi" },
        conditions: [{ type: "Resizing", status: "True", message: "m", lastProbeTime: "t" }],
        allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
      },
    };
    assert.deepEqual(claimAsRead(claim), {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: "data-web-0",
        namespace: "team",
        uid: "u",
        resourceVersion: "9",
        labels: { "app.kubernetes.io/instance": "web" },
        creationTimestamp: "2026-12-08T02:51:15Z",
      },
      spec: { storageClassName: "fast", resources: { requests: { storage: "1Gi" } } },
      status: {
        phase: "Bound",
        capacity: { storage: "1Gi" },
        conditions: [{ type: "Resizing", status: "True", message: "m" }],
        allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
      },
    });
    assert.equal(cachedKinds()[0]?.transform, claimAsRead);
  });
});
