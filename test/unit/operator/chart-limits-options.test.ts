/**
 * The operator's flags for helm's limits and the chart-source allow-list: defaults, environment fallbacks, and
 * errors that name the flag.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseOptions } from "../../../operator/options.ts";

describe("render limits and chart sources", () => {
  it("defaults: 2 renders at once, 256 MiB, 20 s CPU, 60 s wall, 16 MiB output, 500 objects, 128 KiB values; no remote chart source", () => {
    const options = parseOptions([], {});
    assert.equal(options.maxConcurrentRenders, 2);
    assert.deepEqual(options.renderLimits, {
      memoryMiB: 256,
      cpuSeconds: 20,
      timeoutSeconds: 60,
      outputMiB: 16,
      objects: 500,
      valuesKiB: 128,
    });
    // The webhook judges values by the same limit the cache keeps them by.
    assert.equal(options.policy.maxValuesKiB, 128);
    assert.deepEqual(options.chartSources, []);
  });

  it("flags win over MYAPP_* variables", () => {
    const env = {
      MYAPP_MAX_CONCURRENT_RENDERS: "4",
      MYAPP_RENDER_MEMORY: "512",
      MYAPP_RENDER_CPU: "5",
      MYAPP_RENDER_VALUES: "64",
      MYAPP_RENDER_OBJECTS: "50",
      MYAPP_CHART_SOURCES: "oci://ghcr.io/org/, https://charts.example.com/",
    };
    const fromEnv = parseOptions([], env);
    assert.equal(fromEnv.maxConcurrentRenders, 4);
    assert.equal(fromEnv.renderLimits.memoryMiB, 512);
    assert.equal(fromEnv.renderLimits.cpuSeconds, 5);
    assert.equal(fromEnv.renderLimits.valuesKiB, 64);
    assert.equal(fromEnv.renderLimits.objects, 50);
    assert.deepEqual(fromEnv.chartSources, ["oci://ghcr.io/org/", "https://charts.example.com/"]);
    const fromFlags = parseOptions(
      [
        "--max-concurrent-renders=1",
        "--render-timeout=30",
        "--render-output=4",
        "--render-objects=2000",
        "--render-values=512",
      ],
      env,
    );
    assert.equal(fromFlags.maxConcurrentRenders, 1);
    assert.equal(fromFlags.renderLimits.valuesKiB, 512);
    assert.equal(fromFlags.policy.maxValuesKiB, 512);
    assert.equal(fromFlags.renderLimits.timeoutSeconds, 30);
    assert.equal(fromFlags.renderLimits.outputMiB, 4);
    assert.equal(fromFlags.renderLimits.objects, 2000);
  });

  it("bad values name the flag and what is allowed", () => {
    assert.throws(
      () => parseOptions(["--max-concurrent-renders=0"], {}),
      /--max-concurrent-renders must be an integer from 1 to 32, got "0"/,
    );
    assert.throws(() => parseOptions(["--render-memory=32"], {}), /--render-memory must be at least 96/);
    assert.throws(() => parseOptions(["--render-values=0"], {}), /--render-values must be a positive/);
    assert.throws(() => parseOptions(["--chart-sources=ftp://x/"], {}), /--chart-sources: "ftp:\/\/x\/" must start/);
    assert.throws(
      () => parseOptions(["--chart-sources=https://user:pw@x/"], {}),
      /--chart-sources: .*must not carry credentials/,
    );
  });

  it("a chart source listed twice is refused, as --namespaces refuses a repeat; blanks are dropped", () => {
    // GIVEN one prefix twice: as written, and written differently (case of the host, the trailing slash)
    // THEN each is refused naming it, and what it reads as
    assert.throws(
      () => parseOptions(["--chart-sources=oci://ghcr.io/org/,https://charts.example.com/,oci://ghcr.io/org/"], {}),
      /^Error: --chart-sources: "oci:\/\/ghcr.io\/org\/" is listed twice; list it once$/,
    );
    assert.throws(
      () => parseOptions([], { MYAPP_CHART_SOURCES: "oci://ghcr.io/org/, oci://GHCR.io/org" }),
      /^Error: MYAPP_CHART_SOURCES \(--chart-sources\): "oci:\/\/GHCR.io\/org" is listed twice \(as oci:\/\/ghcr.io\/org\/\); list it once$/,
    );
    // AND an empty entry is no entry, as in every list flag
    assert.deepEqual(parseOptions(["--chart-sources=oci://ghcr.io/org/,,"], {}).chartSources, ["oci://ghcr.io/org/"]);
  });
});
