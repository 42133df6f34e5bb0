import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { parse } from "yaml";
import {
  kwokctlConfig,
  localCluster,
  nodeCount,
  nodeResources,
  podsPerNode,
  scaleNodeParams,
} from "../../../tools/lib/cluster.ts";
import { localDir } from "../../../tools/lib/paths.ts";

test("the default cluster keeps .local/kubeconfig; another name gets its own files beside it", () => {
  const main = localCluster();
  assert.equal(main.kubeconfig, path.join(localDir, "kubeconfig"));
  const other = localCluster("other");
  assert.equal(other.kubeconfig, path.join(localDir, "kubeconfig-other"));
  for (const key of ["kubeconfig", "dir", "configFile", "provisionerRecord", "provisionerLog"] as const) {
    assert.notEqual(main[key], other[key], `${key} differs`);
  }
});

test("a cluster name that is no DNS label is refused, naming what is allowed", () => {
  for (const bad of ["", "Other", "a_b", "-a", "x".repeat(33), "../up"]) {
    assert.throws(() => localCluster(bad), /lowercase letters, digits and '-'/, bad);
  }
});

test("the kwokctl configuration sizes the cluster for a fleet and names only local binaries", () => {
  const config = parse(kwokctlConfig("/opt/bin")) as {
    options: Record<string, unknown>;
    componentsPatches: { name: string; extraArgs: { key: string; value: string }[] }[];
  };
  assert.equal(config.options.bindAddress, "127.0.0.1");
  assert.equal(config.options.kubeApiserverBinary, "/opt/bin/kube-apiserver");
  const args = (name: string) =>
    Object.fromEntries(config.componentsPatches.find((p) => p.name === name)!.extraArgs.map((a) => [a.key, a.value]));
  assert.equal(args("kube-apiserver")["service-cluster-ip-range"], "10.96.0.0/16");
  assert.equal(args("kube-controller-manager")["service-cluster-ip-range"], "10.96.0.0/16");
  for (const component of ["kube-controller-manager", "kube-scheduler"]) {
    assert.ok(Number(args(component)["kube-api-qps"]) >= 100, `${component} qps raised`);
  }
  // 10,000 Deployments' pods and 200 StatefulSets' pods fit on the nodes.
  assert.ok(nodeCount * podsPerNode >= 10_200);
  assert.ok(scaleNodeParams.includes(`.allocatable.pods=${podsPerNode}`));
  // ...and their cpu and memory requests too (kwok's default node, 32 cpus, holds 320 pods of 100m).
  assert.ok(scaleNodeParams.includes(`.allocatable.cpu="${nodeResources.cpu}"`));
  assert.ok(scaleNodeParams.includes(`.allocatable.memory="${nodeResources.memory}"`));
});
