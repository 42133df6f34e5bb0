/** The operator's command line: options, --help, and what a bad flag or a failed start print. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { defaultChartKinds } from "../../../api/index.ts";
import { parseOptions, usage, UsageRequested } from "../../../operator/options.ts";
import { watchedOwnedKinds } from "../../../operator/watched-kinds.ts";

const mainPath = fileURLToPath(new URL("../../../operator/main.ts", import.meta.url));
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

  it("--help is a request for the usage, not an error", () => {
    assert.throws(() => parseOptions(["--help"], {}), UsageRequested);
  });
});

describe("operator/main.ts", () => {
  it("--help prints the usage and exits 0, with nothing on stderr", () => {
    const result = run(["--help"]);
    assert.equal(result.status, 0);
    assert.equal(result.stdout.trim(), usage);
    assert.equal(result.stderr, "");
  });

  it("a bad flag prints the error and the usage, and exits 2", () => {
    const result = run(["--concurrency=0"]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--concurrency must be a positive integer, got "0"/);
    assert.match(result.stderr, /Usage:/);
  });

  it("a failure to start is one structured error line, without the usage, and exits 1", () => {
    const result = run(["--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0"], {
      KUBECONFIG: "/nonexistent/kubeconfig",
    });
    assert.equal(result.status, 1);
    assert.doesNotMatch(result.stdout + result.stderr, /Usage:/);
    const line = JSON.parse(result.stdout.trim()) as { level: number; msg: string; err: { message: string } };
    assert.equal(line.msg, "operator failed to start");
    assert.match(line.err.message, /cannot read kubeconfig \/nonexistent\/kubeconfig: ENOENT/);
  });
});

describe("watchedOwnedKinds", () => {
  it("watches the template's kinds plus every readable chart kind, never Secrets, each once, by the operator's label", () => {
    const kinds = watchedOwnedKinds(defaultChartKinds);
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
    const narrowed = watchedOwnedKinds(defaultChartKinds.filter((k) => k.kind === "Ingress" || k.kind === "Secret"));
    assert.deepEqual(
      narrowed.map((k) => k.kind),
      ["Deployment", "StatefulSet", "Service", "Ingress"],
    );
  });
});
