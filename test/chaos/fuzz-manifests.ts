/**
 * Fuzzed MyAppInstance specs, reproducible from a seed: a valid spec drawn at random, and, for about half of the
 * cases, one or two of its fields broken with a value some layer once got wrong (types, bounds, patterns,
 * fractions and tiny or huge quantities, case, cross-field rules). Each case says which fields it broke, so a
 * verdict can be checked for naming them. Pure: the same seed always gives the same cases.
 *
 * Only the spec's own fields are fuzzed. Unknown fields and null are left out on purpose: the Pulumi resource's
 * inputs are typed top-level keys (an unknown key cannot reach the provider) and Pulumi has no null apart from
 * "not set".
 */

/** One fuzzed spec. */
export interface FuzzCase {
  readonly name: string;
  readonly spec: Record<string, unknown>;
  /** Field paths the case broke (`spec.port`, `spec.resources`): empty for a valid case. */
  readonly broken: readonly string[];
}

/** mulberry32: a small, fast, seedable PRNG; good enough to pick from lists. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (random: Random, p: number) => random() < p;

const hex64 = "0123456789abcdef".repeat(4);
const images = [
  "nginx",
  "nginx:1.27",
  "busybox:latest",
  "registry.example.com:5000/team/app:v2",
  `ghcr.io/org/app@sha256:${hex64}`,
  "docker.io/library/redis:7.4-alpine",
  "quay.io/a/b/c:1.0.0-rc.1",
  "localhost:5000/app_name/x-y.z:tag_1",
];
const storages = ["1", "1Gi", "500M", "1536Mi", "10Gi", "1e9", "1Ei", "1024Ki", "3T", "64k"];
/** Ascending, so a limit at index i and a request at index <= i never break "request within limit". */
const cpus = ["50m", "100m", "250m", "0.5", "1", "2"];
const memories = ["64Mi", "128Mi", "256M", "512Mi", "1Gi", "2Gi"];

/** A valid spec. `local` is the local cluster's StorageClass: a class that does not exist fails the provider's check. */
function validSpec(random: Random): Record<string, unknown> {
  const spec: Record<string, unknown> = { image: pick(random, images) };
  if (chance(random, 0.7)) spec.replicas = chance(random, 0.05) ? 2_147_483_647 : Math.floor(random() * 6);
  if (chance(random, 0.5)) spec.port = 1 + Math.floor(random() * 65535);
  if (chance(random, 0.4)) {
    spec.storage = pick(random, storages);
    if (chance(random, 0.3)) spec.storageClassName = "local";
  }
  if (chance(random, 0.4)) spec.storageReclaimPolicy = pick(random, ["Retain", "Delete"]);
  if (chance(random, 0.3)) spec.podSecurityLevel = pick(random, ["Restricted", "Baseline"]);
  if (chance(random, 0.4)) {
    const resources: Record<string, Record<string, string>> = {};
    for (const [key, list] of [
      ["cpu", cpus],
      ["memory", memories],
    ] as const) {
      const limit = chance(random, 0.5) ? Math.floor(random() * list.length) : undefined;
      const request = chance(random, 0.6) ? Math.floor(random() * ((limit ?? list.length - 1) + 1)) : undefined;
      if (limit !== undefined) (resources.limits ??= {})[key] = list[limit]!;
      if (request !== undefined) (resources.requests ??= {})[key] = list[request]!;
    }
    spec.resources = resources;
  }
  return spec;
}

/** One way to break a spec: the group it belongs to (one break per group) and the field it must be named by. */
interface Breakage {
  readonly group: string;
  readonly field: string;
  apply(spec: Record<string, unknown>): void;
}

const set =
  (key: string, value: unknown) =>
  (spec: Record<string, unknown>): void => {
    spec[key] = value;
  };

const breakages: readonly Breakage[] = [
  ...[-1, 1.5, "3", 2_147_483_648, true].map((value) => ({
    group: "replicas",
    field: "spec.replicas",
    apply: set("replicas", value),
  })),
  ...[
    "",
    "Nginx",
    "nginx:",
    "http://nginx",
    "nginx latest",
    "nginx:1.27 ",
    42,
    "nginx@sha256:abc",
    "ngïnx",
    `registry.example.com/${"a".repeat(260)}`,
    "nginx:" + "t".repeat(129),
  ].map((value) => ({ group: "image", field: "spec.image", apply: set("image", value) })),
  ...[0, 65536, -80, "http", 80.5, false].map((value) => ({
    group: "port",
    field: "spec.port",
    apply: set("port", value),
  })),
  ...["0", "1.5Gi", "0.0000000001", "9999999999999999999Ei", "2Ei", "1GB", "-1Gi", "01Gi", "", 5, "1Gi ", "100m"].map(
    (value) => ({ group: "storage", field: "spec.storage", apply: set("storage", value) }),
  ),
  ...["Local_Class", "", "-local", "a".repeat(254)].map((value) => ({
    group: "storage",
    field: "spec.storageClassName",
    apply: (spec: Record<string, unknown>) => {
      spec.storage ??= "1Gi";
      spec.storageClassName = value;
    },
  })),
  {
    group: "storage",
    field: "spec.storageClassName",
    apply: (spec) => {
      delete spec.storage;
      spec.storageClassName = "local";
    },
  },
  ...["retain", "Recycle", "", 1].map((value) => ({
    group: "storageReclaimPolicy",
    field: "spec.storageReclaimPolicy",
    apply: set("storageReclaimPolicy", value),
  })),
  ...["Privileged", "restricted", ""].map((value) => ({
    group: "podSecurityLevel",
    field: "spec.podSecurityLevel",
    apply: set("podSecurityLevel", value),
  })),
  ...[
    { requests: { cpu: "-1" } },
    { requests: { memory: "lots" } },
    { limits: { cpu: 1 } },
    { requests: { cpu: "2" }, limits: { cpu: "1" } },
    { requests: { memory: "2Gi" }, limits: { memory: "1Gi" } },
    { requests: { gpu: "1" } },
    { request: { cpu: "1" } },
    "big",
    { limits: "1Gi" },
  ].map((value) => ({ group: "resources", field: "spec.resources", apply: set("resources", value) })),
];

/** `count` cases from `seed`: names fuzz-000...; about half valid, the rest with one or two broken fields. */
export function fuzzCases(seed: number, count: number): FuzzCase[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const name = `fuzz-${String(i).padStart(3, "0")}`;
    const spec = validSpec(random);
    if (chance(random, 0.5)) return { name, spec, broken: [] };
    const chosen: Breakage[] = [];
    const wanted = chance(random, 0.3) ? 2 : 1;
    while (chosen.length < wanted) {
      const breakage = pick(random, breakages);
      if (!chosen.some((c) => c.group === breakage.group)) chosen.push(breakage);
    }
    for (const breakage of chosen) breakage.apply(spec);
    return { name, spec, broken: chosen.map((c) => c.field) };
  });
}
