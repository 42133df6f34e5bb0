import assert from "node:assert/strict";
import { test } from "node:test";
import { pulumiPhases } from "../../../bench/support/pulumi-phases.ts";

// Lines as `pulumi preview -v=9 --logtostderr` wrote them (pulumi 3.274, a no-op preview of 100 MyAppInstances),
// shortened where the message runs on, with display lines between them as the CLI interleaves them.
const log = [
  `{"time":"2026-12-01T00:08:29.265837723Z","level":"INFO","msg":"OTLP receiver started on port 46043","v":5}`,
  `Previewing update (perf-myapp-100):`,
  `{"time":"2026-12-01T00:08:29.704021007Z","level":"INFO","msg":"ResourceMonitor.RegisterResource received: t=pulumi:pulumi:Stack, name=bench-pulumi-up-perf-myapp-100, custom=false","v":5}`,
  `{"time":"2026-12-01T00:08:31.008997202Z","level":"INFO","msg":"newPlugin(): Launching plugin 'pulumi-nodejs (resource)' from '/bin/pulumi-resource-pulumi-nodejs' with args: 127.0.0.1:44111","v":9}`,
  `{"time":"2026-12-01T00:08:31.430358493Z","level":"INFO","msg":"Provider[0x589b4b5f080].GetPluginInfo() success (#version=3.270.0) success","v":7}`,
  `{"time":"2026-12-01T00:08:31.52455261Z","level":"INFO","msg":"Provider[0x589b4b5f080].Diff(urn:pulumi:perf-myapp-100::bench-pulumi-up::pulumi-nodejs:dynamic/myapp:MyAppInstance::app-000,perf-myapp/app-000) success: changes=1","v":7}`,
  `{"time":"2026-12-01T00:08:31.954689111Z","level":"INFO","msg":"Provider[0x589b4b5f080].Diff(urn:pulumi:perf-myapp-100::bench-pulumi-up::pulumi-nodejs:dynamic/myapp:MyAppInstance::app-027,perf-myapp/app-027) success: changes=1","v":7}`,
  `    pulumi:pulumi:Stack bench-pulumi-up-perf-myapp-100  `,
  `{"time":"2026-12-01T00:08:32.027696708Z","level":"INFO","msg":"OTLP receiver stopped gracefully","v":5}`,
].join("\n");

test("the moments of a logged preview, in seconds since its first log line", () => {
  const phases = pulumiPhases(log);
  const approx = (actual: number | undefined, expected: number) =>
    assert.ok(actual !== undefined && Math.abs(actual - expected) < 0.002, `${actual} ≉ ${expected}`);
  approx(phases.stackRegistered, 0.438);
  approx(phases.pluginLaunched, 1.743);
  approx(phases.pluginReady, 2.165);
  approx(phases.lastDiff, 2.689);
  approx(phases.end, 2.762);
});

test("a moment the log does not show stays undefined, and a log without entries has none", () => {
  const withoutPlugin = log
    .split("\n")
    .filter((line) => !line.includes("Launching plugin"))
    .join("\n");
  assert.equal(pulumiPhases(withoutPlugin).pluginLaunched, undefined);
  assert.deepEqual(pulumiPhases("Previewing update (dev):\nno JSON here"), {});
});
