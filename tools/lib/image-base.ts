/**
 * The operator image's base, assembled offline in the layout of distroless's nodejs images (so the Dockerfile
 * builds on either): Node at /nodejs/bin/node, exactly the shared libraries it links, a nonroot user 65532.
 *
 * - Node is the binary `npm ci` installed (node_modules/node/bin/node, the version package.json pins), byte for
 *   byte: no second download, and the image runs the Node the tests run.
 * - Its libraries come from Debian's own packages (libc6, libgcc-s1, libstdc++6), fetched with `apt-get download`
 *   and unpacked with `dpkg -x`, never copied from the host: the image's contents are then named by package
 *   versions (recorded as image labels, with the packages' copyright files inside), not by whatever this machine
 *   has. Only the files the dynamic loader resolves for node are taken, as the loader from those packages lists
 *   them; the rest of libc6 (locales, gconv, tools) stays out.
 * - prlimit and chrt, from Debian's util-linux (with the libsmartcols1 prlimit links): the operator runs each
 *   `helm template` under prlimit, so a chart's render is held to memory and CPU-time limits the kernel enforces
 *   (chart/guest-process.ts), and moves a render that loops to the idle scheduling class with chrt
 *   (chart/guest-priority.ts); the two binaries and the libraries their loader lists are taken, nothing else of
 *   util-linux.
 * - No CA bundle: the operator talks only to the API server, whose CA comes from the ServiceAccount mount, and
 *   Node carries Mozilla's roots for anything else. No shell, no package manager.
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { repoRoot } from "./paths.ts";
import { run } from "./run.ts";

/** uid and gid of the image's user: distroless's "nonroot", the Deployment's runAsUser. */
export const nonrootId = 65532;
/** Where the base puts Node, as distroless does. */
export const nodePath = "/nodejs/bin/node";
/** The Debian packages whose libraries Node links, and util-linux's prlimit and chrt with their library. */
const libraryPackages = ["libc6", "libgcc-s1", "libstdc++6", "util-linux", "libsmartcols1"] as const;
/** Where the base puts prlimit and chrt, where the operator looks for them. */
export const prlimitPath = "/usr/bin/prlimit";
export const chrtPath = "/usr/bin/chrt";
/** The util-linux binaries the base carries. */
const utilities = [prlimitPath, chrtPath] as const;

/** The Node binary `npm ci` installed (the `node` devDependency). */
export const nodeBinary = path.join(repoRoot, "node_modules/node/bin/node");

export interface BaseRootfs {
  /** `package=version` of every Debian package taken from. */
  readonly debianPackages: readonly string[];
  /** `node --version` inside the rootfs. */
  readonly nodeVersion: string;
}

/** sha256 of the Node binary: part of the image's cache key. */
export function nodeBinarySha256(): string {
  if (!existsSync(nodeBinary)) throw new Error(`${nodeBinary} is missing: run \`npm ci\` first`);
  return createHash("sha256").update(readFileSync(nodeBinary)).digest("hex");
}

/**
 * Writes the base's root filesystem into `rootfs` (an empty directory), with the library packages at exactly
 * `versions`. `debCache` keeps downloaded packages between builds; `staging` is scratch space for unpacked packages.
 */
export async function assembleBaseRootfs(
  rootfs: string,
  options: {
    /** `package=version` of the library packages (libraryPackageVersions()). */
    versions: readonly string[];
    debCache: string;
    staging: string;
    step: (message: string) => void;
  },
): Promise<BaseRootfs> {
  if (!existsSync(nodeBinary)) throw new Error(`${nodeBinary} is missing: run \`npm ci\` first`);
  const { debCache, staging, step } = options;
  const debs = await debianPackages(options.versions, debCache, step);
  for (const deb of debs) await run("dpkg", ["-x", deb.file, staging]);

  // The loader from the packages lists what node needs, resolved inside the unpacked packages, not the host.
  const loaders = findFiles(staging, (name) => /^ld-linux.*\.so\.\d+$/.test(name));
  const loader = loaders.find((file) => !lstatSync(file).isSymbolicLink());
  if (!loader) throw new Error(`no dynamic loader in ${libraryPackages.join(", ")}`);
  const libraryDirs = [
    ...new Set(
      findFiles(staging, (name) => /^lib(c\.so\.6|stdc\+\+\.so\.6|smartcols\.so\.1)$/.test(name)).map(path.dirname),
    ),
  ];
  const listing = (await run(loader, ["--library-path", libraryDirs.join(":"), "--list", nodeBinary])).stdout;
  const needed = neededFiles(listing, staging);
  for (const utility of utilities) {
    const staged = path.join(staging, utility);
    if (!existsSync(staged)) throw new Error(`util-linux has no ${utility}`);
    const listing = (await run(loader, ["--library-path", libraryDirs.join(":"), "--list", staged])).stdout;
    needed.push(...neededFiles(listing, staging));
  }

  mkdirSync(path.join(rootfs, path.dirname(nodePath)), { recursive: true });
  copyFileSync(nodeBinary, path.join(rootfs, nodePath));
  chmodSync(path.join(rootfs, nodePath), 0o755);
  for (const utility of utilities) {
    mkdirSync(path.join(rootfs, path.dirname(utility)), { recursive: true });
    copyFileSync(path.join(staging, utility), path.join(rootfs, utility));
    chmodSync(path.join(rootfs, utility), 0o755);
  }
  for (const file of needed) copyWithLinks(file, staging, rootfs);
  for (const deb of debs) {
    const copyright = `usr/share/doc/${deb.name}/copyright`;
    if (existsSync(path.join(staging, copyright))) copyWithLinks(path.join(staging, copyright), staging, rootfs);
  }
  writeAccounts(rootfs);

  // The rootfs must be complete on its own: its loader, its libraries, its node.
  const inRootfs = (file: string) => path.join(rootfs, path.relative(staging, file));
  const rootfsDirs = libraryDirs.map(inRootfs);
  const rootfsNode = path.join(rootfs, nodePath);
  const check = (await run(inRootfs(loader), ["--library-path", rootfsDirs.join(":"), "--list", rootfsNode])).stdout;
  if (/not found/.test(check)) throw new Error(`the base lacks a library node needs:\n${check}`);
  for (const utility of utilities) {
    const name = path.basename(utility);
    const version = (
      await run(inRootfs(loader), ["--library-path", rootfsDirs.join(":"), path.join(rootfs, utility), "--version"])
    ).stdout;
    if (!version.includes(name)) throw new Error(`the base's ${name} does not run: ${version}`);
  }
  const nodeVersion = (
    await run(inRootfs(loader), ["--library-path", rootfsDirs.join(":"), rootfsNode, "--version"])
  ).stdout.trim();
  return { debianPackages: debs.map((deb) => `${deb.name}=${deb.version}`), nodeVersion };
}

interface DebianPackage {
  readonly name: string;
  readonly version: string;
  readonly file: string;
}

/**
 * `package=version` of the library packages apt would install now (its candidates, from the package lists; an
 * `apt-get update` first on a machine that has none). Part of the image's key, so a Debian security update of
 * libc6 gives a new image rather than a stale cached one.
 */
export async function libraryPackageVersions(): Promise<string[]> {
  const candidates = async () => {
    const { stdout } = await run("apt-cache", ["policy", ...libraryPackages]);
    const versions = new Map<string, string>();
    let current = "";
    for (const line of stdout.split("\n")) {
      const name = /^(\S+):$/.exec(line)?.[1];
      if (name) current = name;
      const candidate = /^\s+Candidate:\s+(\S+)$/.exec(line)?.[1];
      if (candidate && candidate !== "(none)") versions.set(current, candidate);
    }
    return libraryPackages.every((name) => versions.has(name))
      ? libraryPackages.map((name) => `${name}=${versions.get(name)!}`)
      : undefined;
  };
  const found = (await candidates()) ?? (await run("apt-get", ["update", "-q"]).then(candidates));
  if (!found) throw new Error(`apt knows no version of ${libraryPackages.join(", ")}, even after apt-get update`);
  return found;
}

/** The packages `versions` names (`package=version`), from `debCache` or downloaded into it with apt-get. */
async function debianPackages(
  versions: readonly string[],
  debCache: string,
  step: (message: string) => void,
): Promise<DebianPackage[]> {
  mkdirSync(debCache, { recursive: true });
  const packages = versions.map((pinned) => {
    const [name, version] = pinned.split("=") as [string, string];
    // apt-get download names files name_version_arch.deb, with an epoch's ':' written as %3a.
    const prefix = `${name}_${version.replace(/:/g, "%3a")}_`;
    const find = () => readdirSync(debCache).find((file) => file.startsWith(prefix) && file.endsWith(".deb"));
    return { pinned, name, version, find };
  });
  const missing = packages.filter((p) => !p.find());
  if (missing.length > 0) {
    step(`apt-get download ${missing.map((p) => p.pinned).join(" ")} (Debian's packages for the base's libraries)`);
    await run("apt-get", ["download", ...missing.map((p) => p.pinned)], { cwd: debCache });
  }
  return packages.map(({ name, version, find }) => {
    const file = find();
    if (!file) throw new Error(`apt-get download ${name}=${version} left no .deb in ${debCache}`);
    // Older versions of the package are of no further use.
    for (const old of readdirSync(debCache).filter((f) => f.startsWith(`${name}_`) && f !== file)) {
      rmSync(path.join(debCache, old), { force: true });
    }
    return { name, version, file: path.join(debCache, file) };
  });
}

/**
 * The files of `ld.so --list` output that live under `staging`: each `name => /path (0x...)`, and for the loader's
 * own line (`/lib64/ld-linux-x86-64.so.2 => /path`) also its left side, the interpreter path node's ELF header names.
 */
function neededFiles(listing: string, staging: string): string[] {
  const files: string[] = [];
  for (const line of listing.split("\n")) {
    const match = /^\s*(\S+)\s+=>\s+(\/\S+)/.exec(line);
    if (!match) continue;
    const [, name, resolved] = match as unknown as [string, string, string];
    if (!resolved.startsWith(staging)) throw new Error(`node links ${resolved}, outside Debian's packages`);
    files.push(resolved);
    if (name.startsWith("/")) files.push(path.join(staging, name));
  }
  if (files.length === 0) throw new Error(`ld.so --list named no libraries:\n${listing}`);
  return files;
}

/** Copies `file` from `fromRoot` to the same place under `toRoot`; a symlink is kept, and its target copied too. */
function copyWithLinks(file: string, fromRoot: string, toRoot: string): void {
  const relative = path.relative(fromRoot, file);
  const target = path.join(toRoot, relative);
  if (existsSync(target) || isLink(target)) return;
  mkdirSync(path.dirname(target), { recursive: true });
  if (lstatSync(file).isSymbolicLink()) {
    const link = readlinkSync(file);
    symlinkSync(link, target);
    const pointsTo = path.isAbsolute(link) ? path.join(fromRoot, link) : path.resolve(path.dirname(file), link);
    copyWithLinks(pointsTo, fromRoot, toRoot);
  } else {
    copyFileSync(file, target);
    chmodSync(target, lstatSync(file).mode & 0o7777);
  }
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** /etc/passwd and /etc/group with root and nonroot (65532), their homes, and a world-writable /tmp. */
function writeAccounts(rootfs: string): void {
  mkdirSync(path.join(rootfs, "etc"), { recursive: true });
  const id = String(nonrootId);
  writeFileSync(
    path.join(rootfs, "etc/passwd"),
    `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${id}:${id}:nonroot:/home/nonroot:/sbin/nologin\n`,
  );
  writeFileSync(path.join(rootfs, "etc/group"), `root:x:0:\nnonroot:x:${id}:\n`);
  for (const dir of ["root", "home/nonroot"]) mkdirSync(path.join(rootfs, dir), { recursive: true, mode: 0o700 });
  chownSync(path.join(rootfs, "home/nonroot"), nonrootId, nonrootId);
  mkdirSync(path.join(rootfs, "tmp"), { recursive: true });
  chmodSync(path.join(rootfs, "tmp"), 0o1777);
}

/** Every file under `dir` (recursively, symlinks included) whose base name passes `test`. */
function findFiles(dir: string, test: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findFiles(full, test));
    else if (test(entry.name)) out.push(full);
  }
  return out;
}
