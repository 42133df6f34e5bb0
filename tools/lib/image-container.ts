/**
 * Runs the operator image the way a kubelet runs a pod's container, with runc and no daemon: `umoci unpack` turns
 * the OCI image into a runtime bundle, `runtimeConfig` turns the pod's settings into its config.json (user,
 * read-only root, no new privileges, no capabilities, emptyDir as tmpfs, the ServiceAccount volume at
 * /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST/PORT), and `runc run` starts it.
 *
 * One difference from a pod, on purpose: the container shares the host's network namespace. The local API server
 * listens on 127.0.0.1, which a pod network would hide; a pod reaches the same API server through the
 * `kubernetes` Service address instead.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { ensureImageTools } from "./image-tools.ts";
import { run } from "./run.ts";

/** runc's state directory for our containers (tmpfs, like runc's default /run/runc). */
export const runcRoot = "/run/myapp-platform/runc";
export const serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";

/** What a pod says about its one container, resolved to values (downward API included). */
export interface PodContainerSpec {
  /** runc's container id; also the hostname, as a pod's name is. */
  readonly id: string;
  /** `<layout>:<tag>` of an OCI image layout. */
  readonly imageRef: string;
  /** Appended to the image's entrypoint, as a container's `args` are. */
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly runAsUser: number;
  readonly runAsGroup: number;
  readonly readOnlyRootFilesystem: boolean;
  readonly allowPrivilegeEscalation: boolean;
  /** `capabilities.drop: ["ALL"]` */
  readonly dropAllCapabilities: boolean;
  /** emptyDir volumes: memory-backed (tmpfs) here. */
  readonly emptyDirs: readonly { readonly mountPath: string; readonly sizeBytes: number }[];
  /** The API server as a pod sees it (KUBERNETES_SERVICE_HOST/PORT). */
  readonly apiServer: { readonly host: string; readonly port: number };
  /** The projected ServiceAccount volume's files. */
  readonly serviceAccount: { readonly token: string; readonly caCrt: string; readonly namespace: string };
  /** configMap volumes: their files, as the kubelet writes them (read-only). */
  readonly configMaps?: readonly { readonly mountPath: string; readonly files: Readonly<Record<string, string>> }[];
}

/** The parts of an OCI runtime config (config.json) this module sets; the rest passes through. */
export interface OciConfig {
  process: {
    terminal?: boolean;
    user: { uid: number; gid: number; additionalGids?: number[] };
    args: string[];
    env?: string[];
    noNewPrivileges?: boolean;
    capabilities?: Record<"bounding" | "effective" | "inheritable" | "permitted" | "ambient", string[]>;
    [key: string]: unknown;
  };
  root: { path: string; readonly?: boolean };
  hostname?: string;
  mounts?: { destination: string; type?: string; source?: string; options?: string[] }[];
  linux?: { namespaces?: { type: string; path?: string }[]; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * The runtime config for `spec`, from the one umoci generated for the image (`base`). Pure; `serviceAccountDir` is
 * the host directory holding the ServiceAccount files.
 */
export function runtimeConfig(
  base: OciConfig,
  spec: PodContainerSpec,
  serviceAccountDir: string,
  configMapDirs: readonly string[] = [],
): OciConfig {
  const env = new Map((base.process.env ?? []).map((entry) => [entry.split("=")[0]!, entry] as const));
  env.delete("TERM"); // a pod's container has no terminal
  const podEnv = {
    HOSTNAME: spec.id,
    KUBERNETES_SERVICE_HOST: spec.apiServer.host,
    KUBERNETES_SERVICE_PORT: String(spec.apiServer.port),
    ...spec.env,
  };
  for (const [name, value] of Object.entries(podEnv)) env.set(name, `${name}=${value}`);
  const capabilities = spec.dropAllCapabilities
    ? { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] }
    : base.process.capabilities;
  return {
    ...base,
    process: {
      ...base.process,
      terminal: false,
      user: { uid: spec.runAsUser, gid: spec.runAsGroup },
      args: [...base.process.args, ...spec.args],
      env: [...env.values()],
      noNewPrivileges: !spec.allowPrivilegeEscalation,
      ...(capabilities ? { capabilities } : {}),
    },
    root: { ...base.root, readonly: spec.readOnlyRootFilesystem },
    hostname: spec.id,
    mounts: [
      ...(base.mounts ?? []),
      ...spec.emptyDirs.map((dir) => ({
        destination: dir.mountPath,
        type: "tmpfs",
        source: "tmpfs",
        options: ["nosuid", "nodev", "mode=1777", `size=${dir.sizeBytes}`],
      })),
      {
        destination: serviceAccountMountPath,
        type: "bind",
        source: serviceAccountDir,
        options: ["rbind", "ro", "nosuid", "nodev", "noexec"],
      },
      ...(spec.configMaps ?? []).map((volume, i) => ({
        destination: volume.mountPath,
        type: "bind",
        source: configMapDirs[i] ?? "",
        options: ["rbind", "ro", "nosuid", "nodev", "noexec"],
      })),
    ],
    linux: {
      ...base.linux,
      // Host network: see the module comment.
      namespaces: (base.linux?.namespaces ?? []).filter((namespace) => namespace.type !== "network"),
    },
  };
}

export interface ContainerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface RunningContainer {
  readonly id: string;
  /** The container's first process, as the host sees it (for /proc/<pid>/...). */
  readonly pid: number;
  /** Every line it wrote so far, stdout and stderr. */
  readonly lines: readonly string[];
  readonly exited: Promise<ContainerExit>;
  /** Resolves with the first line that satisfies `predicate`; rejects when the container exits first or after `timeoutMs`. */
  waitForLine(predicate: (line: string) => boolean, timeoutMs: number, what: string): Promise<string>;
  /** `runc exec`: another process in the container, with the same user and restrictions. */
  exec(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** SIGTERM, then SIGKILL after `graceMs` (a pod's terminationGracePeriodSeconds). */
  stop(graceMs?: number): Promise<ContainerExit>;
  /** Stops it if needed, `runc delete --force`, and removes the bundle directory. Safe to call twice. */
  remove(): Promise<void>;
}

const removeOnExit = new Map<string, () => void>();
process.on("exit", () => {
  for (const remove of removeOnExit.values()) remove();
});

/** Unpacks the image, writes the runtime config for `spec` and starts the container with `runc run`. */
export async function runPodContainer(
  spec: PodContainerSpec,
  step: (message: string) => void,
): Promise<RunningContainer> {
  const tools = await ensureImageTools(["umoci", "runc"], step);
  const runc = (...args: string[]) => [tools.runc, ["--root", runcRoot, ...args]] as const;
  const dir = mkdtempSync(path.join(os.tmpdir(), `${spec.id}-`));
  const bundle = path.join(dir, "bundle");
  const removeBundle = () => rmSync(dir, { recursive: true, force: true });
  // A test process that dies before remove() still takes its container along.
  removeOnExit.set(spec.id, () => {
    try {
      execFileSync(...runc("delete", "--force", spec.id), { stdio: "ignore" });
    } catch {
      // already gone
    }
    removeBundle();
  });
  try {
    step(`umoci unpack ${spec.imageRef}`);
    await run(tools.umoci, ["unpack", "--image", spec.imageRef, bundle]);
    const serviceAccountDir = path.join(dir, "serviceaccount");
    mkdirSync(serviceAccountDir);
    // As the kubelet writes a projected volume: files readable by the container's user, the directory read-only.
    writeFileSync(path.join(serviceAccountDir, "token"), spec.serviceAccount.token, { mode: 0o644 });
    writeFileSync(path.join(serviceAccountDir, "ca.crt"), spec.serviceAccount.caCrt, { mode: 0o644 });
    writeFileSync(path.join(serviceAccountDir, "namespace"), spec.serviceAccount.namespace, { mode: 0o644 });
    const configMapDirs = (spec.configMaps ?? []).map((volume, i) => {
      const volumeDir = path.join(dir, `configmap-${i}`);
      mkdirSync(volumeDir);
      for (const [file, text] of Object.entries(volume.files)) {
        writeFileSync(path.join(volumeDir, file), text, { mode: 0o644 });
      }
      return volumeDir;
    });
    const configFile = path.join(bundle, "config.json");
    const base = JSON.parse(readFileSync(configFile, "utf8")) as OciConfig;
    const config = runtimeConfig(base, spec, serviceAccountDir, configMapDirs);
    writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  } catch (error) {
    removeOnExit.get(spec.id)?.();
    removeOnExit.delete(spec.id);
    throw error;
  }

  step(`runc run ${spec.id}`);
  const [command, args] = runc("run", "--bundle", bundle, spec.id);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters = new Set<(line: string) => void>();
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      for (const waiter of waiters) waiter(line);
    });
  }
  const exited = new Promise<ContainerExit>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  let exit: ContainerExit | undefined;
  void exited.then((value) => (exit = value));
  const tail = () => `\nlast lines:\n${lines.slice(-20).join("\n")}${exit ? `\nexited: ${JSON.stringify(exit)}` : ""}`;

  const waitForLine: RunningContainer["waitForLine"] = (predicate, timeoutMs, what) => {
    const found = lines.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const done = (error?: Error, line?: string) => {
        clearTimeout(timer);
        waiters.delete(waiter);
        if (error) reject(error);
        else resolve(line!);
      };
      const waiter = (line: string) => predicate(line) && done(undefined, line);
      const timer = setTimeout(
        () => done(new Error(`${spec.id}: no ${what} within ${timeoutMs / 1000}s${tail()}`)),
        timeoutMs,
      );
      waiters.add(waiter);
      void exited.then(() => setImmediate(() => done(new Error(`${spec.id} exited before ${what}${tail()}`))));
    });
  };

  const state = async () => {
    const { stdout } = await run(...runc("state", spec.id));
    return JSON.parse(stdout) as { pid: number; status: string };
  };
  let pid: number;
  try {
    pid = await waitForPid(state, exited, tail);
  } catch (error) {
    child.kill("SIGKILL");
    removeOnExit.get(spec.id)?.();
    removeOnExit.delete(spec.id);
    throw error;
  }

  const stop = async (graceMs = 30_000): Promise<ContainerExit> => {
    if (exit) return exit;
    await run(...runc("kill", spec.id, "TERM")).catch(() => undefined);
    const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), graceMs).unref());
    const result = await Promise.race([exited, timer]);
    if (result) return result;
    await run(...runc("kill", spec.id, "KILL")).catch(() => undefined);
    return exited;
  };
  const remove = async () => {
    await stop();
    await run(...runc("delete", "--force", spec.id)).catch(() => undefined);
    removeBundle();
    removeOnExit.delete(spec.id);
  };
  const exec: RunningContainer["exec"] = (execArgs) =>
    new Promise((resolve, reject) => {
      const [execCommand, execRuncArgs] = runc("exec", spec.id, ...execArgs);
      const process = spawn(execCommand, execRuncArgs, { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      process.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      process.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      process.on("error", reject);
      process.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  return { id: spec.id, pid, lines, exited, waitForLine, exec, stop, remove };
}

/** The container's host pid, once runc reports it running. */
async function waitForPid(
  state: () => Promise<{ pid: number; status: string }>,
  exited: Promise<ContainerExit>,
  tail: () => string,
): Promise<number> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error(`the container exited while starting${tail()}`);
    const current = await state().catch(() => undefined);
    if (current?.status === "running" && current.pid > 0) return current.pid;
    if (Date.now() > deadline) throw new Error(`the container did not start within 60s${tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Ids of the containers runc knows in our state directory. */
export async function listContainers(): Promise<string[]> {
  const tools = await ensureImageTools(["runc"], () => undefined);
  const { stdout } = await run(tools.runc, ["--root", runcRoot, "list", "--format", "json"]);
  const list = JSON.parse(stdout.trim() || "null") as { id: string }[] | null;
  return (list ?? []).map((container) => container.id);
}
