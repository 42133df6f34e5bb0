/**
 * The helm binary for tests: MYAPP_HELM, else `helm` in the toolchain's bin directory (MYAPP_TOOLCHAIN_BIN), else
 * the toolchain's helm piece (tools/toolchain.sh build helm). Also: packing a chart directory and fetching the
 * public podinfo chart from the Go module proxy (its module zip carries charts/podinfo).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../..");
const moduleDir = path.join(repoRoot, "tools/go/helm");

/** The helm version the wrapper module pins (tools/go/helm/go.mod). */
export function helmVersion(): string {
  const found = /helm\.sh\/helm\/v4 (v\S+)/.exec(readFileSync(path.join(moduleDir, "go.mod"), "utf8"));
  if (!found?.[1]) throw new Error("tools/go/helm/go.mod does not require helm.sh/helm/v4");
  return found[1];
}

let binary: Promise<string> | undefined;

/** Path of a helm binary, building it when nothing provides one. */
export function helmBinary(): Promise<string> {
  binary ??= locate();
  return binary;
}

async function locate(): Promise<string> {
  const given = process.env["MYAPP_HELM"];
  if (given) return given;
  const toolchain = process.env["MYAPP_TOOLCHAIN_BIN"];
  if (toolchain && existsSync(path.join(toolchain, "helm"))) return path.join(toolchain, "helm");
  return build();
}

/** The toolchain's helm piece (built when missing; `npm test` has built it already). */
async function build(): Promise<string> {
  const { stdout } = await run("bash", [path.join(repoRoot, "tools/toolchain.sh"), "build", "helm"], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return path.join(stdout.trim().split("\n").at(-1) ?? "", "helm");
}

/** `helm` with a private, empty home (no repositories or registries of the machine's user). */
export async function helm(args: readonly string[], options: { cwd?: string } = {}): Promise<string> {
  const home = await privateHome();
  const { stdout } = await run(await helmBinary(), [...args], {
    cwd: options.cwd,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: home,
      HELM_CONFIG_HOME: path.join(home, "config"),
      HELM_CACHE_HOME: path.join(home, "cache"),
      HELM_DATA_HOME: path.join(home, "data"),
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

let home: Promise<string> | undefined;
/** One helm home per test process, removed when the process exits. */
function privateHome(): Promise<string> {
  home ??= mkdtemp(path.join(tmpdir(), "myapp-helm-home-")).then((dir) => {
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  });
  return home;
}

/** Packs the chart directory `dir` (after overriding its version, when given) into a .tgz; returns its bytes. */
export async function packChart(dir: string, version?: string): Promise<Buffer> {
  const out = await mkdtemp(path.join(tmpdir(), "myapp-chart-pack-"));
  try {
    await helm(["package", dir, "--destination", out, ...(version ? ["--version", version] : [])]);
    const file = (await readdir(out))[0] ?? "";
    return await readFile(path.join(out, file));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** The podinfo module version whose charts/podinfo the tests use (a widely used public chart). */
export const podinfoModule = "github.com/stefanprodan/podinfo@v1.8.1-0.20250910200901-e86405a8674e";

/** The directory of the public podinfo chart, downloaded from the Go module proxy into Go's module cache. */
export async function podinfoChartDir(): Promise<string> {
  const { stdout } = await run("go", ["mod", "download", "-json", podinfoModule], {
    env: { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" },
    maxBuffer: 16 * 1024 * 1024,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${podinfoModule} gave no directory`);
  return path.join(dir, "charts/podinfo");
}
