import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { portsConfig, portsForNewCluster, portsInUse, recordedPortsOf } from "../../../tools/lib/cluster-ports.ts";

describe("a stopped cluster's ports", () => {
  it("are the *Port options of kwokctl's configuration, not the ports of other documents", () => {
    const kwokYaml = [
      "apiVersion: config.kwok.x-k8s.io/v1alpha1",
      "kind: KwokctlConfiguration",
      "options:",
      "  etcdPeerPort: 32766",
      "  etcdPort: 32765",
      "  kubeApiserverPort: 32764",
      "  kwokControllerPort: 0",
      "  securePort: true",
      "---",
      "kind: Stage",
      "spec:",
      "  kubeSchedulerPort: 1",
      "",
    ].join("\n");
    assert.deepEqual(recordedPortsOf(kwokYaml), [
      { port: 32764, component: "kube-apiserver" },
      { port: 32765, component: "etcd" },
      { port: 32766, component: "etcd" },
    ]);
  });

  it("in use are those another process listens on", async (t) => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen({ port: 0, host: "127.0.0.1" }, resolve));
    t.after(() => holder.close());
    const held = (holder.address() as AddressInfo).port;
    const free = createServer();
    await new Promise<void>((resolve) => free.listen({ port: 0, host: "127.0.0.1" }, resolve));
    const released = (free.address() as AddressInfo).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    assert.deepEqual(await portsInUse([held, released]), [held]);
  });
});

describe("a new cluster's ports", () => {
  it("count down from 32766 past those another cluster keeps and those in use", async () => {
    const kept = new Set([32766, 32765, 32764, 32763, 32762, 32761]);
    const inUse = async (ports: readonly number[]) => ports.filter((port) => port === 32759);
    assert.deepEqual(await portsForNewCluster(kept, inUse), {
      etcdPeerPort: 32760,
      etcdPort: 32758,
      kubeApiserverPort: 32757,
      kwokControllerPort: 32756,
      kubeControllerManagerPort: 32755,
      kubeSchedulerPort: 32754,
    });
  });

  it("are given to kwokctl as a configuration of their own, which it merges over the cluster's", () => {
    const config = portsConfig({ etcdPort: 32758, kubeApiserverPort: 32757 });
    assert.deepEqual(
      recordedPortsOf(config).map(({ port }) => port),
      [32757, 32758],
    );
    assert.match(config, /^kind: KwokctlConfiguration$/m);
  });
});
