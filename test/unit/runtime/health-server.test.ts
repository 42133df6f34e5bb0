import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  informerCheckName,
  informerReadiness,
  listenError,
  startHealthServer,
  type HealthServer,
} from "../../../operator/runtime/health-server.ts";
import { OperatorMetrics } from "../../../operator/runtime/metrics.ts";
import { captureLogger } from "./capture-logger.ts";

describe("health server", () => {
  const informer = { kind: "MyAppInstance", synced: false, disconnectedMs: Infinity, stalenessMs: Infinity };
  const metrics = new OperatorMetrics();
  let server: HealthServer;
  const get = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
    return { status: response.status, body: await response.text(), type: response.headers.get("content-type") };
  };

  before(async () => {
    metrics.registerController("myappinstance");
    metrics.queue("myappinstance");
    metrics.leading("myapp-operator", false);
    metrics.processApiWrite("apply", "Deployment");
    server = await startHealthServer({
      port: 0,
      host: "127.0.0.1",
      registry: metrics.registry,
      logger: captureLogger().logger,
      readiness: [
        informerReadiness(
          {
            kind: informer.kind,
            hasSynced: () => informer.synced,
            disconnectedFor: () => informer.disconnectedMs,
            staleness: () => informer.stalenessMs,
          },
          300_000,
        ),
      ],
    });
  });
  after(() => server.close());

  it("serves the metrics in Prometheus text format", async () => {
    const { status, body, type } = await get("/metrics");
    assert.equal(status, 200);
    assert.match(type ?? "", /^text\/plain/);
    assert.match(body, /controller_runtime_reconcile_total\{controller="myappinstance",result="success"\} 0/);
    assert.match(body, /workqueue_depth\{name="myappinstance",priority="0"\} 0/);
    assert.match(body, /workqueue_depth\{name="myappinstance",priority="-100"\} 0/);
    assert.match(body, /myapp_operator_api_writes_total\{verb="apply",kind="Deployment"\} 1/);
  });

  it("answers /healthz while the process runs", async () => {
    assert.deepEqual(await get("/healthz"), { status: 200, body: "ok\n", type: "text/plain; charset=utf-8" });
  });

  it("is not ready before the informers synced, nor when their watch failed for too long, and says why", async () => {
    informer.synced = false;
    let answer = await get("/readyz");
    assert.equal(answer.status, 503);
    assert.match(answer.body, /\[-\]informer-MyAppInstance failed: initial list not done/);

    informer.synced = true;
    informer.disconnectedMs = 301_000;
    informer.stalenessMs = 301_000;
    answer = await get("/readyz");
    assert.equal(answer.status, 503);
    assert.match(answer.body, /no watch accepted by the apiserver for 301s, heard 301s ago/);

    informer.disconnectedMs = 0;
    informer.stalenessMs = 20_000;
    answer = await get("/readyz");
    assert.deepEqual([answer.status, answer.body], [200, "ok\n"]);
    answer = await get("/readyz?verbose");
    assert.match(answer.body, /\[\+\]informer-MyAppInstance ok: watching, heard 20s ago\nreadyz check passed/);

    // A quiet resource: connected, nothing heard for an hour, still ready.
    informer.stalenessMs = 3_600_000;
    assert.equal((await get("/readyz")).status, 200);
    // Reconnecting within the threshold is ready too.
    informer.disconnectedMs = 299_000;
    answer = await get("/readyz?verbose");
    assert.match(answer.body, /\[\+\]informer-MyAppInstance ok: reconnecting, heard 3600s ago/);
  });

  it("answers unknown paths with 404", async () => {
    assert.equal((await get("/nope")).status, 404);
  });
});

describe("health server with split endpoints", () => {
  it("serves only what it is asked to: probes without /metrics, and /metrics without probes", async () => {
    const metrics = new OperatorMetrics();
    const start = (serves: { metrics: boolean; probes: boolean }) =>
      startHealthServer({
        port: 0,
        host: "127.0.0.1",
        registry: metrics.registry,
        logger: captureLogger().logger,
        readiness: [],
        serves,
      });
    const probes = await start({ metrics: false, probes: true });
    const scrape = await start({ metrics: true, probes: false });
    try {
      const status = async (server: HealthServer, path: string) =>
        (await fetch(`http://127.0.0.1:${server.port}${path}`)).status;
      assert.equal(await status(probes, "/healthz"), 200);
      assert.equal(await status(probes, "/readyz"), 200);
      assert.equal(await status(probes, "/metrics"), 404, "the probe port does not leak /metrics");
      assert.equal(await status(scrape, "/metrics"), 200);
      assert.equal(await status(scrape, "/healthz"), 404);
    } finally {
      await probes.close();
      await scrape.close();
    }
  });
});

describe("readiness check names", () => {
  it("name an informer by kind, group and namespace, so each watch has its own /readyz line", () => {
    assert.equal(informerCheckName({ kind: "ConfigMap", apiVersion: "v1", namespace: "a" }), "informer-ConfigMap/a");
    assert.equal(
      informerCheckName({ kind: "Deployment", apiVersion: "apps/v1", namespace: "b" }),
      "informer-Deployment.apps/b",
    );
    assert.equal(
      informerCheckName({ kind: "MyAppInstance", apiVersion: "example.com/v1", namespace: undefined }),
      "informer-MyAppInstance.example.com",
    );
  });

  it("are unique: a server refuses two checks of one name instead of showing one of them", async () => {
    const check = (name: string) => ({ name, check: () => ({ ok: true, detail: "fine" }) });
    await assert.rejects(
      startHealthServer({
        port: 0,
        host: "127.0.0.1",
        registry: new OperatorMetrics().registry,
        logger: captureLogger().logger,
        readiness: [check("informer-Pod/a"), check("informer-Pod/b"), check("informer-Pod/a")],
      }),
      /readiness checks must have unique names, so \/readyz shows each; repeated: informer-Pod\/a$/,
    );
  });
});

describe("a failure to listen", () => {
  it("is one line naming the flag that chose the address, and asking for another", async (t) => {
    // GIVEN a port another process listens on
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    t.after(() => taken.close());
    const { port } = taken.address() as AddressInfo;

    // WHEN the operator's metrics server is started there
    const started = startHealthServer({
      port,
      host: "127.0.0.1",
      registry: new OperatorMetrics().registry,
      logger: captureLogger().logger,
      readiness: [],
      flag: "--metrics-bind-address",
    });

    // THEN it fails in one line that says which flag to change, with Node's error as the cause
    await assert.rejects(started, (error: Error) => {
      assert.equal(
        error.message,
        `cannot listen on 127.0.0.1:${port} (--metrics-bind-address): it is already in use by another process; ` +
          "pick another address with --metrics-bind-address=[host]:port",
      );
      assert.equal((error.cause as NodeJS.ErrnoException).code, "EADDRINUSE");
      return true;
    });
  });

  it("says why for a port that needs privileges or a host not of this machine; keeps Node's words otherwise", () => {
    const error = (code: string, message = code) => Object.assign(new Error(message), { code });
    const probe = { host: "0.0.0.0", port: 81 };
    assert.equal(
      listenError(error("EACCES"), probe, "--health-probe-bind-address").message,
      "cannot listen on 0.0.0.0:81 (--health-probe-bind-address): not allowed (a port below 1024 needs privileges); " +
        "pick another address with --health-probe-bind-address=[host]:port",
    );
    assert.match(
      listenError(error("EADDRNOTAVAIL"), { host: "::1", port: 9443 }, "--webhook-bind-address").message,
      /^cannot listen on \[::1\]:9443 \(--webhook-bind-address\): that is not an address of this machine; /,
    );
    assert.match(listenError(error("EOTHER", "odd"), probe, "--x").message, /\(--x\): odd; pick another address/);
    const bare = error("EADDRINUSE");
    assert.equal(listenError(bare, probe, undefined), bare, "without a flag, the error as it was");
  });
});
