/**
 * The two operators a side-by-side run compares, started the same way: scoped to one namespace, reaching the
 * cluster only through a kubeconfig (their counting proxy's), without leader election, at the same concurrency.
 *
 * - `ts`: this repository's operator as its image runs it: the bundle (tools/lib/operator-bundle.ts) with the V8
 *   heap flags the component derives from its default memory limit (components/node-heap.ts).
 * - `go`: the controller-runtime peer of tools/go/controller-peer, built by the toolchain (`controller-peer`), or
 *   with `go build` into .local/bench/ while the toolchain does not know that piece yet.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defaultResources } from "../../components/settings.ts";
import { nodeOptionsFor } from "../../components/node-heap.ts";
import { rendersMemoryMiB } from "../../components/chart-limits.ts";
import { defaultMaxConcurrentRenders, defaultRenderLimits } from "../../chart/render-limits.ts";
import { bundleOperator } from "../../tools/lib/operator-bundle.ts";
import { freePort } from "../../tools/lib/operator-launcher.ts";
import { startOperator, waitForReady } from "./operator-process.ts";
import { readMemory, type Memory } from "./operator-process.ts";
import { cpuSeconds } from "./process-stats.ts";
import { GiveUp, waitUntil } from "./wait.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export type OperatorName = "ts" | "go";

/** A running operator under test. */
export interface Subject {
  /** `ts`, `go`, or another peer's name (bench/support/helm-operator.ts). */
  readonly name: string;
  readonly pid: number;
  /** CPU seconds used so far; the last reading once it has exited. */
  cpuSeconds(): number;
  /** VmRSS/VmHWM now; the last reading once it has exited. */
  memory(): Memory;
  /** The last lines it printed, for an error message. */
  tail(): string;
  /** SIGTERM, SIGKILL after 20 s; safe to call twice. */
  stop(): Promise<void>;
}

export interface SubjectOptions {
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly concurrency: number;
  /** More flags for the TS operator, e.g. `--helm=PATH` for charts. */
  readonly args?: readonly string[];
  /** How long its /readyz may take to answer ok (its informers listing the fleet). @default 30_000 */
  readonly readyTimeoutMs?: number;
  readonly signal: AbortSignal;
}

/** Starts operator `name` and resolves once its /readyz answers. */
export async function startSubject(name: OperatorName, options: SubjectOptions): Promise<Subject> {
  return name === "ts" ? startTypeScript(options) : startPeer(options);
}

/** Keeps the last CPU and memory readings, so figures survive the process. */
function meter(pid: number) {
  let cpu = 0;
  let memory: Memory = { rss: 0, peakRss: 0 };
  return {
    cpuSeconds: () => (cpu = cpuSeconds(pid) ?? cpu),
    memory: () => (memory = readMemory(pid) ?? memory),
  };
}

/**
 * The bundle, built once per benchmark process into a temporary directory (build/ may hold another one), which
 * goes when the process exits (it holds a copy of helm, ~66 MB).
 */
let bundled: Promise<string> | undefined;
function operatorBundle(): Promise<string> {
  // BENCH_TS_BUNDLE=FILE runs a bundle made elsewhere (e.g. of a commit, while the work tree is mid-change).
  if (process.env.BENCH_TS_BUNDLE) return Promise.resolve(path.resolve(process.env.BENCH_TS_BUNDLE));
  if (!bundled) {
    const dir = mkdtempSync(path.join(tmpdir(), "myapp-bench-bundle-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    bundled = bundleOperator(dir).then((bundle) => bundle.file);
  }
  return bundled;
}

/** The container's Node flags for the component's defaults: its resources, less what its renders may take. */
export const inClusterNodeOptions: readonly string[] = nodeOptionsFor(
  defaultResources,
  rendersMemoryMiB({
    maxConcurrentRenders: defaultMaxConcurrentRenders,
    renderLimits: defaultRenderLimits,
    chartSources: [],
  }),
);

async function startTypeScript(options: SubjectOptions): Promise<Subject> {
  const operator = await startOperator({
    script: await operatorBundle(),
    // BENCH_TS_NODE_OPTIONS adds Node flags for a profile, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    nodeOptions: [...inClusterNodeOptions, ...(process.env.BENCH_TS_NODE_OPTIONS ?? "").split(" ").filter(Boolean)],
    namespaces: [options.namespace],
    args: [`--kubeconfig=${options.kubeconfig}`, `--concurrency=${options.concurrency}`, ...(options.args ?? [])],
    signal: options.signal,
  });
  const readings = meter(operator.pid);
  try {
    await waitForReady(operator, options.signal, options.readyTimeoutMs);
  } catch (error) {
    await operator.stop(5_000);
    throw error;
  }
  return {
    name: "ts",
    pid: operator.pid,
    ...readings,
    tail: () => operator.tail(),
    stop: async () => {
      readings.cpuSeconds();
      readings.memory();
      await operator.stop();
    },
  };
}

/** Children still running; killed if the benchmark exits without having stopped them. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

async function startPeer(options: SubjectOptions): Promise<Subject> {
  const probePort = await freePort();
  const args = [
    `--kubeconfig=${options.kubeconfig}`,
    `--namespaces=${options.namespace}`,
    `--health-probe-bind-address=127.0.0.1:${probePort}`,
    "--metrics-bind-address=0",
    `--max-concurrent-reconciles=${options.concurrency}`,
  ];
  return startGoOperator({ name: "go", binary: peerBinary(), args, probePort }, options);
}

/** A Go operator binary to start: its flags, and the port its /readyz answers on (controller-runtime's probe). */
export interface GoOperatorLaunch {
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  readonly probePort: number;
  /** Its environment on top of the benchmark's (e.g. KUBECONFIG, WATCH_NAMESPACE). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Spawns a controller-runtime operator, keeps its last log lines, and resolves once its /readyz answers; stopped
 * by its pid (SIGTERM, SIGKILL after 20 s), and killed if the benchmark exits first.
 */
export async function startGoOperator(launch: GoOperatorLaunch, options: SubjectOptions): Promise<Subject> {
  const { binary, probePort } = launch;
  const child = spawn(binary, launch.args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...launch.env },
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${binary}`);
  running.add(child);
  const lines: string[] = [];
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    lines.push(...chunk.split("\n").filter(Boolean));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  });
  let exited = false;
  const closed = new Promise<void>((resolve) =>
    child.on("close", () => {
      exited = true;
      running.delete(child);
      resolve();
    }),
  );
  const readings = meter(pid);
  const tail = () => lines.slice(-15).join("\n");
  const stop = async () => {
    if (exited) return;
    readings.cpuSeconds();
    readings.memory();
    process.kill(pid, "SIGTERM");
    const timer = setTimeout(() => !exited && process.kill(pid, "SIGKILL"), 20_000);
    await closed;
    clearTimeout(timer);
  };
  try {
    await waitUntil(
      `${launch.name}'s /readyz`,
      async () => {
        if (exited) throw new GiveUp(`${launch.name} exited before it was ready:\n${tail()}`);
        return (await fetch(`http://127.0.0.1:${probePort}/readyz`)).ok ? true : undefined;
      },
      { signal: options.signal, timeoutMs: options.readyTimeoutMs ?? 30_000, intervalMs: 50 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { name: launch.name, pid, ...readings, tail, stop };
}

let builtPeer: string | undefined;

/**
 * The controller-peer binary: BENCH_PEER_BINARY, else the toolchain's (`tools/toolchain.sh build controller-peer`),
 * else a `go build` of tools/go/controller-peer into .local/bench/ (until the toolchain knows that piece).
 */
export function peerBinary(): string {
  if (process.env.BENCH_PEER_BINARY) return process.env.BENCH_PEER_BINARY;
  if (builtPeer) return builtPeer;
  const toolchain = path.join(repoRoot, "tools/toolchain.sh");
  // Only a toolchain.sh that knows the piece: an older one would take `build` as "build everything".
  if (readFileSync(toolchain, "utf8").includes("controller-peer")) {
    // `build PIECE` builds it unless cached and prints its bin directory.
    const binDir = execFileSync("bash", [toolchain, "build", "controller-peer"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    })
      .trim()
      .split("\n")
      .at(-1)!;
    const candidate = path.join(binDir, "controller-peer");
    if (existsSync(candidate)) return (builtPeer = candidate);
  }
  const out = path.join(repoRoot, ".local/bench/controller-peer");
  mkdirSync(path.dirname(out), { recursive: true });
  process.stderr.write(`building the Go peer: go build ./cmd/controller-peer -> ${out}\n`);
  execFileSync("go", ["build", "-trimpath", "-o", out, "./cmd/controller-peer"], {
    cwd: path.join(repoRoot, "tools/go/controller-peer"),
    env: { ...process.env, GOTOOLCHAIN: "local", CGO_ENABLED: "0", GOFLAGS: "-mod=mod" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  return (builtPeer = out);
}
