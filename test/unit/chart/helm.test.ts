/**
 * Helm as a bounded guest: one process per render split into what is applied and what is reported, at most K
 * renders at once, each held to memory, CPU-time, wall-time and output limits, and renders reused from an LRU
 * bounded by bytes. Stand-in processes (sh, yes, sleep) exercise the limits; the hostile charts at the end run
 * the real helm when one is available (MYAPP_HELM, or the toolchain's once built).
 */
import assert from "node:assert/strict";
import os from "node:os";
import { readFileSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { findChrt, guestNiceness, idleClassAfterCpuSeconds } from "../../../chart/guest-priority.ts";
import { findPrlimit, GuestFailure, runGuest } from "../../../chart/guest-process.ts";
import { ByteBoundedLru, namespaceShareBytes } from "../../../chart/lru-cache.ts";
import { chartArchive } from "../../support/chart-archive.ts";
import {
  defaultRenderCacheBytes,
  defaultRenderLimits,
  fairSlots,
  helmRenderer,
  largestRenderCacheBytes,
  renderCacheBytes,
  renderKey,
  splitFullRender,
  type RenderLimits,
  type RenderPriority,
} from "../../../chart/index.ts";

const fullRender = [
  "---",
  "# Source: app/crds/widgets.yaml",
  "apiVersion: apiextensions.k8s.io/v1",
  "kind: CustomResourceDefinition",
  "metadata:",
  "  name: widgets.example.org",
  "---",
  "apiVersion: apiextensions.k8s.io/v1",
  "kind: CustomResourceDefinition",
  "metadata:",
  "  name: gadgets.example.org",
  "",
  "---",
  "# Source: app/charts/db/crds/dbs.yaml",
  "apiVersion: apiextensions.k8s.io/v1",
  "kind: CustomResourceDefinition",
  "metadata:",
  "  name: dbs.example.org",
  "---",
  "# Source: app/templates/service.yaml",
  "apiVersion: v1",
  "kind: Service",
  "metadata:",
  "  name: web",
  "---",
  "# Source: app/templates/deployment.yaml",
  "apiVersion: apps/v1",
  "kind: Deployment",
  "metadata:",
  "  name: web",
  "---",
  "# Source: app/templates/tests/test-connection.yaml",
  "apiVersion: v1",
  "kind: Pod",
  "metadata:",
  "  name: web-test",
  "  annotations:",
  '    "helm.sh/hook": test',
  "---",
  "# Source: app/templates/job.yaml",
  "apiVersion: batch/v1",
  "kind: Job",
  "metadata:",
  "  name: migrate",
  "  annotations:",
  "    helm.sh/hook: pre-install",
  "",
].join("\n");

test("one full render is split into the --no-hooks --skip-tests stream, the hooks and tests, and the CRDs", async () => {
  const result = await splitFullRender(fullRender);
  assert.equal(
    result.manifest,
    [
      "---",
      "# Source: app/templates/service.yaml",
      "apiVersion: v1",
      "kind: Service",
      "metadata:",
      "  name: web",
      "---",
      "# Source: app/templates/deployment.yaml",
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata:",
      "  name: web",
      "",
    ].join("\n"),
  );
  assert.deepEqual(result.hooks, ["app/templates/job.yaml", "app/templates/tests/test-connection.yaml"]);
  assert.deepEqual(result.crds, ["widgets.example.org", "gadgets.example.org", "dbs.example.org"]);
  // A CustomResourceDefinition a template renders is an ordinary object (only crds/ files are left out).
  const templated = "---\n# Source: app/templates/crd.yaml\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n";
  assert.equal((await splitFullRender(templated)).manifest, templated);
  // A CRD file named without the chart's directory is a CRD file too.
  assert.deepEqual(
    (await splitFullRender("---\n# Source: crds/x.yaml\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n")).crds,
    ["x"],
  );
});

test("a template path padded with a million blanks is split in linear time", async (t) => {
  // GIVEN a render whose template file name (the tenant's: tar allows any length) is mostly blanks, then a hook
  const padded = `app/templates/a${" ".repeat(1_000_000)}b.yaml`;
  const stream =
    `---\n# Source: ${padded}  \nkind: ConfigMap\nmetadata:\n  name: x\n` +
    `---\n# Source: app/templates/h.yaml\nkind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n`;
  // WHEN a worker splits it, with a deadline this thread keeps (a quadratic match of the path would hold the
  // worker's event loop for most of an hour; one in this thread would hold the deadline too)
  const worker = new Worker(
    `import { parentPort, workerData } from "node:worker_threads";
     const { splitFullRender } = await import(workerData.module);
     parentPort.postMessage(await splitFullRender(workerData.stream));`,
    { eval: true, workerData: { stream, module: new URL("../../../chart/helm.ts", import.meta.url).href } },
  );
  t.after(() => worker.terminate());
  const result = await Promise.race([
    once(worker, "message").then(([message]) => message as { manifest: string; hooks: string[] }),
    sleep(60_000, undefined, { ref: false }).then(() => assert.fail("the split took more than 60 s")),
  ]);
  // THEN the object is kept and the hook is reported by its path, trailing blanks trimmed
  assert.match(result.manifest, /kind: ConfigMap/);
  assert.deepEqual(result.hooks, ["app/templates/h.yaml"]);
});

test("the render key is what determines the output, whatever the key order", () => {
  const chart = new Uint8Array([1, 2, 3]);
  const base = { chart, release: "web", namespace: "shop", capabilities: { kubeVersion: "v1.36.0" } };
  const a = renderKey({ ...base, values: { image: { tag: "1", repository: "r" }, replicaCount: 2 } });
  const b = renderKey({ ...base, values: { replicaCount: 2, image: { repository: "r", tag: "1" } } });
  assert.equal(a, b);
  assert.notEqual(a, renderKey({ ...base, values: { replicaCount: 3, image: { repository: "r", tag: "1" } } }));
  assert.notEqual(a, renderKey({ ...base, chart: new Uint8Array([1, 2, 4]), values: { replicaCount: 2 } }));
  assert.notEqual(a, renderKey({ ...base, namespace: "other", values: { replicaCount: 2 } }));
  const caps = (apiVersions: string[]) => renderKey({ ...base, values: {}, capabilities: { apiVersions } });
  assert.equal(caps(["a/v1", "b/v1"]), caps(["b/v1", "a/v1"]));
});

test("the LRU is bounded by bytes and keeps the recently used", () => {
  const lru = new ByteBoundedLru<string>(10, (value) => value.length);
  lru.set("a", "aaaa");
  lru.set("b", "bbbb");
  assert.equal(lru.get("a"), "aaaa"); // a is now the newest
  lru.set("c", "cccc"); // 12 bytes: the least recently used (b) goes
  assert.equal(lru.get("b"), undefined);
  assert.equal(lru.get("a"), "aaaa");
  assert.equal(lru.bytes, 8);
  lru.set("huge", "x".repeat(11)); // larger than the whole budget: not kept, nothing evicted
  assert.equal(lru.get("huge"), undefined);
  assert.equal(lru.size, 2);
});

test("a render at the output limit, with its read copy, is kept in one namespace's share, whatever the limit", () => {
  for (const outputMiB of [defaultRenderLimits.outputMiB, 32]) {
    // The most memory for its size: one character beyond Latin-1 makes V8 keep the whole text in two bytes each.
    const bytes = outputMiB * 1024 * 1024;
    const largest = { manifest: "€" + "a".repeat(bytes - 3), hooks: [], crds: [] };
    assert.equal(Buffer.byteLength(largest.manifest), bytes, "at the output limit");
    assert.ok(renderCacheBytes(largest) <= largestRenderCacheBytes({ outputMiB }));
    const share = namespaceShareBytes(defaultRenderCacheBytes, largestRenderCacheBytes({ outputMiB }));
    const cache = new ByteBoundedLru(defaultRenderCacheBytes, renderCacheBytes, share);
    cache.set("largest", largest, "team-a");
    assert.ok(cache.get("largest"), `kept with --render-output=${outputMiB}`);
  }
  // Text beyond Latin-1 takes two bytes a character in V8, and is counted so.
  const wide = { manifest: "ä€".repeat(1024), hooks: [], crds: [] };
  assert.equal(renderCacheBytes(wide), 2 * 2 * 2048);
});

test("one group's entries take at most its share: they push out the group's own, not the others'", () => {
  const lru = new ByteBoundedLru<string>(12, (value) => value.length, 6);
  lru.set("a1", "aaa", "team-a");
  lru.set("b1", "bbb", "team-b");
  lru.set("b2", "bbb", "team-b");
  lru.set("b3", "bbbb", "team-b"); // team-b would take 10 of its 6: its oldest go, team-a's stays
  assert.equal(lru.get("a1"), "aaa");
  assert.equal(lru.get("b1"), undefined);
  assert.equal(lru.get("b2"), undefined);
  assert.equal(lru.get("b3"), "bbbb");
  lru.set("b4", "b".repeat(7), "team-b"); // over the share on its own: not kept, nothing evicted
  assert.equal(lru.get("b4"), undefined);
  assert.equal(lru.bytes, 7);
  lru.set("a2", "aaa", "team-a");
  lru.set("c1", "cccc", "team-c"); // 14 of 12: the least recently used goes, whoever's
  assert.equal(lru.get("a1"), undefined);
  assert.equal(lru.bytes, 11);
  lru.delete("b3");
  lru.set("b5", "bbbbbb", "team-b"); // team-b's share is free again
  assert.equal(lru.get("b5"), "bbbbbb");
});

const tight: RenderLimits = {
  memoryMiB: 128,
  cpuSeconds: 1,
  timeoutSeconds: 10,
  outputMiB: 1,
  objects: 500,
  valuesKiB: 128,
};
const env = { PATH: process.env["PATH"] ?? "" };
const mechanisms = [
  { name: "prlimit", prlimit: findPrlimit(), skip: findPrlimit() ? false : "no prlimit on this machine" },
  { name: "watchdog", prlimit: undefined, skip: false },
] as const;

async function limitHit(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GuestFailure, String(error));
    return error.details.limit;
  }
  return undefined;
}

for (const { name, prlimit, skip } of mechanisms) {
  test(`${name}: an endless loop is stopped at the CPU-time limit`, { skip }, async () => {
    const started = performance.now();
    const limit = await limitHit(
      runGuest({ binary: "sh", args: ["-c", "while :; do :; done"], env, limits: tight, prlimit, chrt: undefined }),
    );
    assert.equal(limit, "cpu");
    assert.ok(performance.now() - started < 5000);
  });
}

test("endless output is stopped at the output limit, a hang at the wall-time limit", async () => {
  const prlimit = findPrlimit();
  assert.equal(
    await limitHit(runGuest({ binary: "yes", args: [], env, limits: tight, prlimit, chrt: undefined })),
    "output",
  );
  const slow = { ...tight, timeoutSeconds: 1 };
  assert.equal(
    await limitHit(runGuest({ binary: "sleep", args: ["30"], env, limits: slow, prlimit, chrt: undefined })),
    "time",
  );
});

test("watchdog: a process over the memory limit is stopped", async () => {
  // The shell keeps a 200 MB command substitution in its own memory.
  const hog = ["-c", 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo "${#x}"; sleep 5'];
  const limits = { ...tight, cpuSeconds: 30 };
  assert.equal(
    await limitHit(runGuest({ binary: "sh", args: hog, env, limits, prlimit: undefined, chrt: undefined })),
    "memory",
  );
});

test("at most K renders run at once, a repeated render is served from the cache", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "myapp-fake-helm-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const fake = path.join(dir, "helm");
  // Each run appends "start" and "end" to the log (one short append each: whole lines, in order). A run holds until
  // K runs are under way (or it is the last; or 30 s passed, so that a limit below K fails here, not at the wall-time
  // limit), so the limit is reached however slowly processes start; then it holds a while longer, in which a render
  // over the limit would start beside it.
  const log = path.join(dir, "log");
  const limit = 2;
  const renders = 5;
  const starts = `$(grep -c start ${log})`;
  await writeFile(
    fake,
    [
      "#!/bin/sh",
      `echo start >> ${log}`,
      "i=0",
      `while [ $((${starts} - $(grep -c end ${log}))) -lt ${limit} ] && [ ${starts} -lt ${renders} ] && [ $i -lt 1500 ]; do`,
      "  sleep 0.02; i=$((i + 1))",
      "done",
      "sleep 0.2",
      `echo end >> ${log}`,
      "printf -- '---\\n# Source: c/templates/a.yaml\\nkind: ConfigMap\\n'",
      "",
    ].join("\n"),
  );
  await chmod(fake, 0o755);
  const renderer = helmRenderer({ binary: fake, maxConcurrentRenders: limit });
  const chart = await chartArchive();
  const render = (n: number) => renderer.render({ chart, release: "r", namespace: "n", values: { n } });
  await Promise.all(Array.from({ length: renders }, (_, n) => render(n)));
  // THEN K renders ran at once, and never more
  const lines = (await readFile(log, "utf8")).split("\n").filter(Boolean);
  let running = 0;
  let peak = 0;
  for (const line of lines) {
    running += line === "start" ? 1 : -1;
    peak = Math.max(peak, running);
  }
  assert.equal(peak, limit, `renders at once, by the fake's log: ${lines.join(" ")}`);
  // AND a repeated render is served from the cache
  const again = await render(1);
  assert.match(again.manifest, /kind: ConfigMap/);
  const runs = (await readFile(log, "utf8")).split("\n").filter((line) => line === "start").length;
  assert.equal(runs, renders, "the repeated render ran helm");
});

/** Two render slots whose jobs log their start and run until their gate is opened. */
function gatedSlots() {
  const slots = fairSlots(2);
  const log: string[] = [];
  const gates = new Map<string, () => void>();
  const job = (group: string, name: string, priority?: RenderPriority) =>
    slots(
      group,
      () => {
        log.push(`start ${name}`);
        return new Promise<void>((resolve) => gates.set(name, resolve));
      },
      priority,
    );
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  return { log, gates, job, tick };
}

test("render slots are fair: a namespace alone may use them all, beside others it holds at most half", async () => {
  const { log, gates, job, tick } = gatedSlots();
  // GIVEN a namespace alone: both slots are its own
  const h1 = job("hostile", "h1");
  const h2 = job("hostile", "h2");
  await tick();
  assert.deepEqual(log, ["start h1", "start h2"]);
  // WHEN more of its renders and one of another tenant wait
  const h3 = job("hostile", "h3");
  const w1 = job("shop", "w1");
  await tick();
  // THEN the next free slot goes to the other tenant, and from then on the hostile namespace holds at most one
  gates.get("h1")!();
  await tick();
  assert.deepEqual(log.slice(2), ["start w1"]);
  gates.get("h2")!();
  await tick();
  assert.deepEqual(log.slice(3), ["start h3"]);
  gates.get("w1")!();
  gates.get("h3")!();
  await Promise.all([h1, h2, h3, w1]);
});

test("render slots: a change's render goes before the re-checks of Ready instances that wait, whatever their namespace", async () => {
  const { log, gates, job, tick } = gatedSlots();
  // GIVEN a restarted operator re-checking its Ready chart instances: two render, two more wait
  const low = ["a", "b", "c", "d"].map((name) => job("shop", name, "low"));
  await tick();
  assert.deepEqual(log, ["start a", "start b"]);
  // WHEN a tenant changes an instance of the same namespace, and another of its own
  const changed = job("shop", "changed");
  const other = job("bank", "other");
  await tick();
  // THEN the free slots go to the changes before the waiting re-checks (the other namespace first: beside it, shop
  // holds at most one slot)
  gates.get("a")!();
  await tick();
  assert.deepEqual(log.slice(2), ["start other"]);
  gates.get("b")!();
  await tick();
  assert.deepEqual(log.slice(3), ["start changed"]);
  for (const name of ["changed", "other"]) gates.get(name)!();
  await tick();
  assert.deepEqual(log.slice(4), ["start c", "start d"]);
  for (const name of ["c", "d"]) gates.get(name)!();
  await Promise.all([...low, changed, other]);
});

/** The niceness (field 19) and scheduling policy (field 41) of each thread of this process, by proc(5). */
const threadPriorities = `(() => {
  const fs = require("node:fs");
  return fs.readdirSync("/proc/self/task").map((tid) => {
    const fields = fs.readFileSync("/proc/self/task/" + tid + "/stat", "utf8").split(") ")[1].split(" ");
    return { nice: Number(fields[16]), policy: Number(fields[38]) };
  });
})()`;
/** Linux's scheduling policies (sched.h). */
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

for (const { name, prlimit, skip } of mechanisms) {
  test(`${name}: a render runs below the operator's CPU priority, every thread of it`, { skip }, async () => {
    // A many-threaded guest (Node starts its V8 and libuv threads at once) reports each thread's niceness after
    // the sweeps have run. It uses little CPU, so it stays in the normal scheduling class.
    const script = `setTimeout(() => console.log(JSON.stringify(${threadPriorities})), 600);`;
    const limits = { ...tight, memoryMiB: 1024, cpuSeconds: 10 };
    const chrt = findChrt();
    const out = await runGuest({ binary: process.execPath, args: ["-e", script], env, limits, prlimit, chrt });
    const threads = JSON.parse(out) as { nice: number; policy: number }[];
    assert.ok(threads.length > 3, `several threads: ${out}`);
    const own = os.getPriority();
    const expected = Math.min(19, own + 10);
    assert.deepEqual(
      [...new Set(threads.map((thread) => thread.nice))],
      [expected],
      `every thread at nice ${expected}: ${out}`,
    );
    assert.deepEqual(
      [...new Set(threads.map((thread) => thread.policy))],
      [SCHED_OTHER],
      `a short render stays normal: ${out}`,
    );
    assert.equal(guestNiceness(own), expected);
    assert.equal(os.getPriority(), own, "the operator itself keeps its priority");
  });

  test(
    `${name}: a render past ${idleClassAfterCpuSeconds} s of CPU moves to the idle class, every thread of it`,
    {
      skip: skip || (findChrt() ? false : "no chrt on this machine"),
    },
    async () => {
      // The guest spins until it has used half a second more than the threshold, then idles a moment (the move is
      // a chrt process the operator starts at its next 100 ms look) and reports its threads.
      const spin = (idleClassAfterCpuSeconds + 0.5) * 1e6;
      const script = `const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
      while (cpu() < ${spin}) {}
      setTimeout(() => console.log(JSON.stringify(${threadPriorities})), 500);`;
      const limits = { ...tight, memoryMiB: 1024, cpuSeconds: 20, timeoutSeconds: 120 };
      const out = await runGuest({
        binary: process.execPath,
        args: ["-e", script],
        env,
        limits,
        prlimit,
        chrt: findChrt(),
      });
      const threads = JSON.parse(out) as { nice: number; policy: number }[];
      assert.ok(threads.length > 3, `several threads: ${out}`);
      assert.deepEqual(
        [...new Set(threads.map((thread) => thread.policy))],
        [SCHED_IDLE],
        `every thread idle-class: ${out}`,
      );
      const own = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
      assert.equal(Number(own[38]), SCHED_OTHER, "the operator itself stays in the normal class");
    },
  );
}
