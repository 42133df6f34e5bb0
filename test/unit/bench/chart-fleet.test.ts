import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { chartMedian, chartRoundOrder, deployedToken, type ChartFigures } from "../../../bench/chart-fleet.ts";
import { cpuSeconds, processTree, sampleProcessTree, treeResidentBytes } from "../../../bench/support/process-stats.ts";
import type { PodinfoApp } from "../../../bench/support/helm-operator.ts";

/** A PodinfoApp as helm-operator-plugins writes its status, with podinfo's Deployment in the manifest. */
function app(options: { deployed: boolean; wantedTag: string; manifestTag: string; chart: string }): PodinfoApp {
  const manifest = [
    "---",
    "# Source: podinfo/templates/deployment.yaml",
    "apiVersion: apps/v1",
    "kind: Deployment",
    "metadata:",
    "  labels:",
    `    helm.sh/chart: podinfo-${options.chart}`,
    "spec:",
    "  template:",
    "    spec:",
    "      containers:",
    "        - name: podinfo",
    `          image: "ghcr.io/stefanprodan/podinfo:${options.manifestTag}"`,
  ].join("\n");
  return {
    apiVersion: "bench.example.com/v1alpha1",
    kind: "PodinfoApp",
    metadata: { name: "a", namespace: "ns" },
    spec: { image: { repository: "ghcr.io/stefanprodan/podinfo", tag: options.wantedTag } },
    status: {
      conditions: [
        {
          type: "Deployed",
          status: options.deployed ? "True" : "False",
          reason: "UpgradeSuccessful",
          message: "",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
      deployedRelease: { name: "a", manifest },
    },
  };
}

describe("chart fleet: what Ready is for the Helm operator's release", () => {
  it("is the deployed manifest's image and chart version, when they are what the spec asks for", () => {
    // GIVEN a release deployed at the wanted tag on chart 6.9.3 / THEN its token names both
    const token = deployedToken(app({ deployed: true, wantedTag: "6.9.1", manifestTag: "6.9.1", chart: "6.9.3" }));
    assert.equal(token, "ghcr.io/stefanprodan/podinfo:6.9.1 chart 6.9.3");
  });

  it("is nothing while the deployed release still runs the old image, or Deployed is not True", () => {
    assert.equal(
      deployedToken(app({ deployed: true, wantedTag: "6.9.1", manifestTag: "6.9.2", chart: "6.9.2" })),
      undefined,
    );
    assert.equal(
      deployedToken(app({ deployed: false, wantedTag: "6.9.1", manifestTag: "6.9.1", chart: "6.9.2" })),
      undefined,
    );
  });
});

describe("chart fleet: order and medians", () => {
  it("alternates which operator goes first", () => {
    assert.deepEqual(chartRoundOrder(0), ["ts", "helm-operator"]);
    assert.deepEqual(chartRoundOrder(1), ["helm-operator", "ts"]);
  });

  it("takes the median per subject over rounds", () => {
    const figures = [
      { subject: "ts", allReadyS: 10 },
      { subject: "ts", allReadyS: 30 },
      { subject: "helm-operator", allReadyS: 40 },
    ] as unknown as ChartFigures[];
    assert.equal(chartMedian(figures, "ts", "allReadyS"), 20);
    assert.equal(chartMedian(figures, "helm-operator", "allReadyS"), 40);
  });
});

describe("process tree: an operator's helm children count", () => {
  it("finds a child process below its parent, and samples their memory", async () => {
    // GIVEN a child of this process
    const child = spawn("sleep", ["5"], { stdio: "ignore" });
    try {
      await new Promise((resolve) => child.once("spawn", resolve));
      // THEN it is in this process's tree, and the tree's memory is more than the child's alone
      assert.ok(processTree(process.pid).includes(child.pid!));
      assert.ok(!processTree(child.pid!).includes(process.pid));
      const sampler = sampleProcessTree(process.pid, 10_000);
      sampler.stop();
      assert.ok(sampler.peakBytes() > 10 * 1024 * 1024, `tree RSS ${sampler.peakBytes()}`);
    } finally {
      child.kill();
    }
  });

  it("counts each page once: own pages summed, an executable's file pages once however many run it", () => {
    const mib = 1024 * 1024;
    // GIVEN an operator and two helm processes sharing helm's text pages
    const members = [
      { exe: "/usr/bin/node", ownBytes: 90 * mib, fileBytes: 40 * mib },
      { exe: "/opt/helm", ownBytes: 25 * mib, fileBytes: 20 * mib },
      { exe: "/opt/helm", ownBytes: 30 * mib, fileBytes: 22 * mib },
    ];
    // THEN the tree holds 90 + 25 + 30 of their own, 40 of node's files and 22 of helm's, not 44
    assert.equal(treeResidentBytes(members), (90 + 25 + 30 + 40 + 22) * mib);
    assert.equal(treeResidentBytes([]), 0);
  });

  it("counts the CPU of children that have exited and been waited for", async () => {
    // GIVEN a child that burns CPU and exits (Node waits for it)
    const before = (cpuSeconds(process.pid, true) ?? 0) - (cpuSeconds(process.pid) ?? 0);
    const burner = spawn("sh", ["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"], { stdio: "ignore" });
    await new Promise((resolve) => burner.once("exit", resolve));
    // THEN the children's share grew
    const after = (cpuSeconds(process.pid, true) ?? 0) - (cpuSeconds(process.pid) ?? 0);
    assert.ok(after - before > 0.05, `children's CPU ${before} → ${after}`);
  });
});
