/**
 * Fuzzed manifests through all three layers that judge a MyAppInstance, which must agree on every one:
 * - zod (api/): `validateInstance`;
 * - the apiserver (CRD schema and CEL): every manifest in one `kubectl apply --dry-run=server` of a directory
 *   (kubectl goes on past a rejected file and names the file in its error);
 * - the provider's check: in-process for every manifest (the `check` the dynamic provider serves), and through the
 *   real `pulumi preview`: one run with every valid manifest as a resource (all must pass), and one run per
 *   broken field with a manifest that breaks only that field. The engine stops a preview at the first invalid
 *   resource, so invalid manifests cannot share a run.
 * Each rejection must name every field the case broke, except where the apiserver stops early by design (a strict
 * decoding error names only the unknown field; a schema error skips the CEL rules): there it names at least one.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { stringify } from "yaml";
import { apiVersion, kind, validateInstance } from "../../api/index.ts";
import type { KubeClient } from "../../kube/index.ts";
import { check } from "../../provider/impl.ts";
import { localDir, repoRoot, toolchainBinDir } from "../../tools/lib/paths.ts";
import { namesField } from "../fixtures/instances/corpus.ts";
import { testNamespace } from "../support/cluster.ts";
import { ensureCrd } from "../support/operator.ts";
import { pulumiProject } from "../support/pulumi-cli.ts";
import { fuzzCases, type FuzzCase } from "./fuzz-manifests.ts";
import type { Figures } from "./scenarios.ts";

const seconds = (ms: number) => Math.round(ms / 100) / 10;

export interface FuzzSize {
  readonly count: number;
  readonly seed: number;
  /** How many broken fields get a `pulumi preview` run of their own (all of them: Infinity). */
  readonly invalidPreviews: number;
}

/** One layer's verdict on one case: accepted, or rejected naming these fields (`spec.port`). */
interface Verdict {
  readonly ok: boolean;
  readonly fields: readonly string[];
  readonly message: string;
}

export async function fuzzedManifests(t: TestContext, client: KubeClient, size: FuzzSize): Promise<Figures> {
  const namespace = await testNamespace(t, client, "chaos-fuzz");
  await ensureCrd(client);
  const cases = fuzzCases(size.seed, size.count);
  const manifest = (c: FuzzCase) => ({ apiVersion, kind, metadata: { name: c.name, namespace }, spec: c.spec });

  // zod
  const zod = new Map<string, Verdict>();
  for (const c of cases) {
    const verdict = validateInstance(manifest(c));
    const fields = verdict.ok ? [] : verdict.issues.map((issue) => issue.path);
    zod.set(c.name, { ok: verdict.ok, fields, message: fields.join(", ") });
  }

  // the apiserver, through kubectl
  const dir = path.join(localDir, "e2e", `fuzz-${namespace}`);
  mkdirSync(dir, { recursive: true });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const c of cases) writeFileSync(path.join(dir, `${c.name}.yaml`), stringify(manifest(c)));
  const applyStarted = performance.now();
  const apiserver = await kubectlDryRun(dir, cases);
  const applyMs = performance.now() - applyStarted;

  // the provider's check, in-process
  const inputsOf = (c: FuzzCase) => ({
    name: c.name,
    namespace,
    ...c.spec,
    owner: "organization/fuzz/fuzz",
    logicalName: c.name,
  });
  const provider = new Map<string, Verdict>();
  for (const c of cases) {
    const result = await check({}, inputsOf(c));
    const failures = result.failures ?? [];
    provider.set(c.name, {
      ok: failures.length === 0,
      // A failure of an object input (resources) is reported for the whole resource, its reason starting with the
      // input's name (provider/failure-display.ts: the CLI would print the object as Go's {map[...]}).
      fields: failures.map((f) => `spec.${f.property || (/^([A-Za-z]+):/.exec(f.reason)?.[1] ?? "")}`),
      message: failures.map((f) => `${f.property}: ${f.reason}`).join("; "),
    });
  }

  // Every layer agrees with the case, and names what it broke.
  const disagreements: string[] = [];
  for (const c of cases) {
    for (const [layer, verdicts] of [
      ["zod", zod],
      ["apiserver", apiserver],
      ["provider", provider],
    ] as const) {
      const verdict = verdicts.get(c.name);
      const spec = JSON.stringify(c.spec);
      if (!verdict) disagreements.push(`${c.name} ${spec}: no verdict from ${layer}`);
      else if (verdict.ok !== (c.broken.length === 0)) {
        disagreements.push(`${c.name} ${spec}: ${layer} says ${verdict.ok ? "valid" : `invalid (${verdict.message})`}`);
      } else {
        // The apiserver stops early in two documented ways: a strict decoding error (an unknown field, HTTP 400)
        // comes before any validation, and a schema error (a wrong type, a pattern) skips the CEL rules ("some
        // validation rules were not checked"). Then it names some of the broken fields, not all. Every other
        // rejection names every field the case broke.
        const decodingOnly =
          layer === "apiserver" &&
          (verdict.message.includes("strict decoding error") ||
            verdict.message.includes("some validation rules were not checked"));
        const unnamed = c.broken.filter((field) => !namesField(verdict.fields, field));
        if (decodingOnly ? unnamed.length === c.broken.length : unnamed.length > 0) {
          disagreements.push(`${c.name} ${spec}: ${layer} does not name ${unnamed.join(", ")}: ${verdict.message}`);
        }
      }
    }
  }
  assert.deepEqual(disagreements, [], "zod, the apiserver and the provider agree on every manifest");

  // the provider's check through the real `pulumi preview`
  const valid = cases.filter((c) => c.broken.length === 0);
  const previewStarted = performance.now();
  const project = await pulumiProject(t, "fuzz", program(valid.map(inputsOf)));
  const previewed = await project.must("preview", "--non-interactive", "--stack", project.stackName);
  const creates = [...previewed.matchAll(/MyAppInstance (fuzz-\d+) create/g)].map((m) => m[1]).sort();
  assert.deepEqual(creates, valid.map((c) => c.name).sort(), "every valid manifest previews as a create");
  let previewRuns = 1;
  const byField = new Map<string, FuzzCase>();
  for (const c of cases) if (c.broken.length === 1 && !byField.has(c.broken[0]!)) byField.set(c.broken[0]!, c);
  for (const c of [...byField.values()].slice(0, size.invalidPreviews)) {
    await project.pulumi("stack", "select", project.stackName);
    writeFileSync(path.join(project.workDir, "index.ts"), program([inputsOf(c)]));
    const result = await project.pulumi("preview", "--non-interactive", "--stack", project.stackName);
    previewRuns++;
    const expected = provider.get(c.name)!;
    assert.equal(result.ok, false, `pulumi preview of ${c.name} ${JSON.stringify(c.spec)} fails`);
    const property = c.broken[0]!.replace(/^spec\./, "");
    for (const reason of expected.message.split("; ")) {
      assert.ok(
        result.output.includes(reason.slice(reason.indexOf(": ") + 2)) && result.output.includes(property),
        `pulumi preview of ${c.name} names ${property} with the check's reason (${reason}):\n${result.output}`,
      );
    }
  }
  const previewMs = performance.now() - previewStarted;

  return {
    manifests: cases.length,
    seed: size.seed,
    valid: valid.length,
    invalid: cases.length - valid.length,
    brokenFieldKinds: new Set(cases.flatMap((c) => c.broken)).size,
    disagreements: 0,
    kubectlApplyS: seconds(applyMs),
    previewRuns,
    previewS: seconds(previewMs),
  };
}

/** A program declaring one MyAppInstance per input bag (the resource class sets owner and logicalName). */
function program(bags: readonly Record<string, unknown>[]): string {
  const args = bags.map(({ owner: _owner, logicalName, ...rest }) => ({ logicalName, args: rest }));
  return `import { MyAppInstance } from ${JSON.stringify(path.join(repoRoot, "provider/index.ts"))};
for (const { logicalName, args } of ${JSON.stringify(args)}) new MyAppInstance(logicalName, args);
`;
}

/**
 * `kubectl apply --dry-run=server -f DIR`: one verdict per file. kubectl applies every file and reports each
 * rejection as `Error from server (...): error when creating "DIR/NAME.yaml": MESSAGE`.
 */
async function kubectlDryRun(dir: string, cases: readonly FuzzCase[]): Promise<Map<string, Verdict>> {
  const kubectl = path.join(process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir(), "kubectl");
  // It exits 1 when any file was rejected: the verdicts are in its output, whatever the exit code.
  const { stdout, stderr } = await output(kubectl, ["apply", "--dry-run=server", "-f", dir]);
  const verdicts = new Map<string, Verdict>();
  for (const match of stdout.matchAll(/myappinstance\.example\.com\/(fuzz-\d+) created \(server dry run\)/g)) {
    verdicts.set(match[1]!, { ok: true, fields: [], message: "" });
  }
  for (const block of stderr.split(/(?=^Error from server)/m)) {
    const file = /error when creating "[^"]*\/(fuzz-\d+)\.yaml"/.exec(block)?.[1];
    if (!file) continue;
    const fields = [...block.matchAll(/\bspec(?:\.[A-Za-z]+)+/g)].map((m) => m[0]);
    verdicts.set(file, { ok: false, fields, message: block.trim() });
  }
  for (const c of cases) if (!verdicts.has(c.name)) throw new Error(`kubectl said nothing about ${c.name}:\n${stderr}`);
  return verdicts;
}

/** Runs a command and returns its output whatever its exit code. */
function output(command: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", () => resolve({ stdout, stderr }));
  });
}
