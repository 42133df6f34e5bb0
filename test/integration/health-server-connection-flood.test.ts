/**
 * The red team's flood of the probe port, on the real servers the operator starts (in-process: no cluster needed):
 * 256 connections that each send `GET /healthz HTTP/1.1\r\n` and never finish their headers, reconnecting 5 ms after
 * each is closed. With one ceiling of 256 that refused newcomers, every probe was refused (ECONNRESET) for as long
 * as the flood went on, and the kubelet (1 s timeout, 3 failures) restarted the operator every 30 s and marked it
 * NotReady. Now the flood's own connections make room for a newcomer (operator/runtime/connection-limits.ts).
 *
 * Every connection here comes from 127.0.0.1, the probe's as the flood's, so the per-address limit does not tell
 * them apart: the probe is answered because the flood's connections are replaced oldest first and a request being
 * answered never is (in a cluster the kubelet has an address of its own, and is not even in the flood's way).
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { test, type TestContext } from "node:test";
import { informerReadiness, startHealthServer } from "../../operator/runtime/health-server.ts";
import { OperatorMetrics } from "../../operator/runtime/metrics.ts";
import { captureLogger } from "../unit/runtime/capture-logger.ts";

/** A probe's deadline: the kubelet gives 1 s; this is generous, for a slow machine (answers take milliseconds). */
const probeTimeoutMs = 3_000;
/** How long the flood runs while probes are sent (the red team's ran 95 s; every probe failed from the first). */
const floodMs = 15_000;

function probe(port: number, path: string): Promise<string> {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request({ host: "127.0.0.1", port, path, agent: false, timeout: probeTimeoutMs }, (res) => {
      res.resume();
      res.on("end", () => resolve(`${res.statusCode} in ${Math.round(performance.now() - started)} ms`));
      res.on("error", (error) => resolve(`failed: ${error.message}`));
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${probeTimeoutMs} ms`)));
    req.on("error", (error: NodeJS.ErrnoException) => resolve(`failed: ${error.code ?? error.message}`));
    req.end();
  });
}

/** The red team's flood: `size` connections held with unfinished headers, each reopened 5 ms after it closes. */
function flood(t: TestContext, port: number, size: number) {
  const open = new Set<Socket>();
  const state = { connected: 0, opened: 0, closedByServer: 0, stopped: false };
  const start = () => {
    if (state.stopped) return;
    const socket = connect(port, "127.0.0.1");
    state.opened++;
    open.add(socket);
    socket.on("error", () => undefined);
    // Reads the server's answer (a 408), so its close is seen and the slot taken again at once.
    socket.on("data", () => undefined);
    socket.once("connect", () => {
      state.connected++;
      socket.write("GET /healthz HTTP/1.1\r\n");
    });
    socket.once("close", () => {
      open.delete(socket);
      if (state.stopped) return;
      state.closedByServer++;
      setTimeout(start, 5);
    });
  };
  for (let i = 0; i < size; i++) start();
  const stop = () => {
    state.stopped = true;
    for (const socket of open) socket.destroy();
  };
  t.after(stop);
  return { state, stop };
}

async function until(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    assert.ok(performance.now() < deadline, `timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("the probe and metrics ports answer while one address floods each with unfinished requests", async (t) => {
  // GIVEN the operator's two servers as startManager starts them: the probes on one port, /metrics on another
  const metrics = new OperatorMetrics();
  const { logger } = captureLogger();
  const readiness = [
    informerReadiness({ kind: "MyAppInstance", hasSynced: () => true, disconnectedFor: () => 0, staleness: () => 0 }),
  ];
  const served = { host: "127.0.0.1", port: 0, registry: metrics.registry, readiness, logger };
  const probes = await startHealthServer({ ...served, serves: { metrics: false } });
  t.after(() => probes.close());
  const scrapes = await startHealthServer({ ...served, serves: { probes: false } });
  t.after(() => scrapes.close());
  assert.match(await probe(probes.port, "/healthz"), /^200 /);

  // WHEN 256 connections from 127.0.0.1 hold each port with headers never finished, reconnecting as each closes
  const floods = [flood(t, probes.port, 256), flood(t, scrapes.port, 256)];
  await until("every connection of both floods was accepted once", () =>
    floods.every(({ state }) => state.connected >= 256),
  );

  // THEN a new connection's /healthz, /readyz and /metrics are answered, every time, as long as the flood goes on
  const failures: string[] = [];
  let answered = 0;
  const started = performance.now();
  while (performance.now() - started < floodMs) {
    const at = `${((performance.now() - started) / 1000).toFixed(1)} s`;
    const results = await Promise.all([
      probe(probes.port, "/healthz"),
      probe(probes.port, "/readyz"),
      probe(scrapes.port, "/metrics"),
    ]);
    for (const [path, result] of [
      ["/healthz", results[0]],
      ["/readyz", results[1]],
      ["/metrics", results[2]],
    ] as const) {
      if (result.startsWith("200 ")) answered++;
      else failures.push(`${at} ${path}: ${result}`);
    }
    // The kubelet probes every few seconds; a quarter of one keeps the test short and still probes often.
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const summary = floods.map(({ state }) => `${state.opened} opened, ${state.closedByServer} closed by the server`);
  t.diagnostic(`${answered} answered; floods: ${summary.join("; ")}`);
  assert.deepEqual(failures, [], `every probe answered while the flood went on (${answered} were)`);
  assert.ok(answered >= 30, `probed often enough: ${answered}`);
  // (The floods were at it all along: they never stopped holding connections.)
  assert.ok(floods.every(({ state }) => state.opened > 256 && !state.stopped));

  // AND once the flood ends, the ports are as before
  for (const { stop } of floods) stop();
  assert.match(await probe(probes.port, "/healthz"), /^200 /);
  assert.match(await probe(scrapes.port, "/metrics"), /^200 /);
});
