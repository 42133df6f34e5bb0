import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  readsOf,
  requestInfo,
  since,
  watchesOf,
  writesOf,
  writesWithoutEventsOf,
} from "../../../bench/support/counting-proxy.ts";
import { cidrSize } from "../../../bench/support/fleet-capacity.ts";
import { Readiness, type Fleet } from "../../../bench/support/fleet.ts";
import { medianOf, ratio, roundOrder, type SubjectFigures } from "../../../bench/side-by-side.ts";
import { podRoom } from "../../../bench/support/fleet-capacity.ts";
import type { KubeObject } from "../../../kube/index.ts";

const info = (method: string, url: string) => requestInfo(method, new URL(url, "https://proxy"));

describe("counting proxy: request classification", () => {
  it("tells get, list and watch apart, with namespace, name and subresource", () => {
    assert.deepEqual(info("GET", "/apis/apps/v1/namespaces/ns/deployments/app"), {
      verb: "get",
      resource: "deployments",
      namespace: "ns",
      name: "app",
    });
    assert.equal(info("GET", "/api/v1/namespaces/ns/services?limit=500").verb, "list");
    assert.equal(info("GET", "/apis/apps/v1/deployments?watch=true&resourceVersion=5").verb, "watch");
    assert.equal(info("GET", "/apis/apps/v1/deployments?watch=1").verb, "watch");
    assert.deepEqual(info("PUT", "/apis/example.com/v1/namespaces/ns/myappinstances/a/status"), {
      verb: "update",
      resource: "myappinstances/status",
      namespace: "ns",
      name: "a",
    });
  });

  it("maps write methods to verbs and keeps non-resource paths as they are", () => {
    assert.equal(info("POST", "/api/v1/namespaces/ns/events").verb, "create");
    assert.equal(info("PATCH", "/api/v1/namespaces/ns/services/s").verb, "patch");
    assert.equal(info("DELETE", "/api/v1/namespaces/ns/persistentvolumeclaims/c").verb, "delete");
    assert.equal(info("DELETE", "/api/v1/namespaces/ns/persistentvolumeclaims").verb, "deletecollection");
    assert.deepEqual(info("GET", "/version"), { verb: "get", resource: "/version" });
    assert.equal(info("GET", "/api/v1/namespaces/ns").resource, "namespaces");
  });

  it("sums writes, non-watch reads and watches, and differences snapshots", () => {
    const before = { "get deployments": 2, "create services": 1 };
    const now = {
      "get deployments": 5,
      "list services": 1,
      "watch services": 3,
      "create services": 4,
      "update myappinstances/status": 2,
    };
    assert.equal(writesOf(now), 6);
    assert.equal(readsOf(now), 6);
    assert.equal(watchesOf(now), 3);
    assert.deepEqual(since(now, before), {
      "get deployments": 3,
      "list services": 1,
      "watch services": 3,
      "create services": 3,
      "update myappinstances/status": 2,
    });
  });

  it("counts writes without Events apart, core and events.k8s.io alike", () => {
    const counts = { "create events": 3, "patch events": 1, "patch deployments": 2, "get events": 4 };
    assert.equal(writesOf(counts), 6);
    assert.equal(writesWithoutEventsOf(counts), 2);
  });
});

describe("side by side: figures", () => {
  it("alternates the order of the subjects between rounds", () => {
    assert.deepEqual(roundOrder(0), ["floor", "go", "ts"]);
    assert.deepEqual(roundOrder(1), ["ts", "go", "floor"]);
  });

  it("runs only the subjects asked for, keeping the alternating order", () => {
    assert.deepEqual(roundOrder(0, ["ts", "go"]), ["go", "ts"]);
    assert.deepEqual(roundOrder(1, ["go", "ts"]), ["ts", "go"]);
  });

  it("reports TS ÷ Go, with ∞ for something the peer does not do at all", () => {
    assert.equal(ratio(387, 263), 1.47);
    assert.equal(ratio(8, 0), Infinity);
    assert.equal(ratio(0, 0), 1);
    assert.ok(Number.isNaN(ratio(NaN, 3)));
  });

  it("takes the median over rounds of a subject's figure, ignoring the rounds that lack it", () => {
    const figure = (subject: "go" | "ts", round: number, allReadyS: number) =>
      ({ subject, round, allReadyS, loadBefore: 1 }) as unknown as SubjectFigures;
    const figures = [figure("go", 1, 10), figure("ts", 1, 30), figure("go", 2, 20), figure("ts", 2, 50)];
    assert.equal(medianOf(figures, "go", "allReadyS"), 15);
    assert.equal(medianOf(figures, "ts", "allReadyS"), 40);
    assert.ok(Number.isNaN(medianOf(figures, "ts", "peakRssMiB")));
    const cpu = [figure("go", 1, 15.6), figure("go", 2, 15.7)];
    assert.equal(medianOf(cpu, "go", "allReadyS"), 15.65, "3 decimals, not 15.649999999999999");
  });
});

describe("side by side: readiness", () => {
  const fleet: Fleet = {
    watched: { apiVersion: "v1", kind: "ConfigMap" },
    readyImage: (object) => (object as KubeObject & { data?: { ready?: string } }).data?.ready,
    create: () => Promise.resolve(),
    setImage: () => Promise.resolve(),
  };
  const event = (type: "ADDED" | "MODIFIED" | "DELETED", name: string, ready?: string) => ({
    type,
    object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, ...(ready ? { data: { ready } } : {}) },
  });

  it("counts members Ready per image as events move them", () => {
    const readiness = new Readiness(fleet);
    readiness.observe(event("ADDED", "a"));
    readiness.observe(event("MODIFIED", "a", "x:1"));
    readiness.observe(event("ADDED", "b", "x:1"));
    assert.equal(readiness.count("x:1"), 2);
    readiness.observe(event("MODIFIED", "a", "x:2"));
    assert.equal(readiness.count("x:1"), 1);
    assert.equal(readiness.count("x:2"), 1);
    assert.ok(readiness.isReadyAt("a", "x:2"));
    readiness.observe(event("DELETED", "b", "x:1"));
    assert.equal(readiness.count("x:1"), 0);
  });

  it("resolves a wait at the event that makes it true, and times out naming what it waited for", async () => {
    const readiness = new Readiness(fleet);
    const signal = new AbortController().signal;
    const waiting = readiness.until("a Ready", () => readiness.isReadyAt("a", "x:1"), { signal, timeoutMs: 5_000 });
    const before = performance.now();
    readiness.observe(event("ADDED", "a", "x:1"));
    assert.ok((await waiting) >= before);
    await assert.rejects(
      readiness.until("b Ready", () => readiness.isReadyAt("b", "x:1"), { signal, timeoutMs: 10 }),
      /waiting for b Ready/,
    );
  });
});

describe("side by side: fleet capacity", () => {
  it("counts the usable addresses of an IPv4 CIDR", () => {
    assert.equal(cidrSize("10.0.0.0/24"), 254);
    assert.equal(cidrSize("10.208.0.0/16"), 65_534);
    assert.equal(cidrSize("fd00::/108"), 0);
  });
});

describe("fleet capacity: room for pods", () => {
  it("counts the pods a node holds by slots, cpu and memory, whichever runs out first", () => {
    assert.equal(podRoom({ status: { allocatable: { pods: "110", cpu: "32", memory: "256Gi" } } }), 110);
    assert.equal(podRoom({ status: { allocatable: { pods: "4k", cpu: "32", memory: "256Gi" } } }), 320);
    assert.equal(podRoom({ status: { allocatable: { pods: "4k", cpu: "1k", memory: "4Ti" } } }), 4000);
    assert.equal(podRoom({ status: { allocatable: { pods: "4k", cpu: "1k", memory: "64Gi" } } }), 512);
    assert.equal(podRoom({}), 0);
  });
});
