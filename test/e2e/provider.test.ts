/**
 * The MyAppInstance dynamic provider through the real pulumi engine (Automation API, the built CLI and language
 * host), on the local cluster, with the operator running as a local process:
 * - `pulumi up` returns with the instance Ready and its outputs filled; the kubeconfig input is a secret in state;
 * - a preview right after shows no change; after an image change, an update of exactly that input; after a
 *   rename, a replacement keyed on `name`; after an invalid change, a failure naming the field; an instance the
 *   apiserver's admission would refuse (a quota) fails the preview through the server-side dry-run; removing
 *   storage, or setting it to "", fails the preview naming storage, changing nothing; a rotated kubeconfig and a
 *   new timeout are no change;
 * - `pulumi refresh` picks up a change made with kubectl, and the next `pulumi up` puts the program's value back;
 * - an instance that cannot become Ready fails `pulumi up` with the operator's reason and the Warning events,
 *   stays in state, and the next `pulumi up` after the fix completes; a problem the operator reports as permanent
 *   (Stalled) fails it at once instead of at the timeout; Ctrl-C during a 600 s wait returns at once (how fast is
 *   reported, not asserted) and the next `pulumi up` continues;
 * - `pulumi destroy` returns once every instance is gone: one with storage only after the operator's finalizer ran.
 *
 * Needs the toolchain, the local cluster and operator/main.ts: run with `npm test -- test/e2e/provider.test.ts`.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import {
  LocalWorkspace,
  PulumiCommand,
  type EngineEvent,
  type Stack,
  type StepEventMetadata,
} from "@pulumi/pulumi/automation/index.js";
import { parse, stringify } from "yaml";
import {
  apiVersion,
  finalizer,
  isReady,
  kind,
  reconcileRequestAnnotation,
  type MyAppInstanceObject,
} from "../../api/index.ts";
import { parseObjectKey } from "../../kube/object-key.ts";
import { localDir, pulumiEnv, repoRoot, toolchainBinDir } from "../../tools/lib/paths.ts";
import { adminClient, createForeignService, waitFor, type Typed, kubectl } from "../support/cluster.ts";
import { packChart } from "../support/helm.ts";
import { ensureCrd, startOperator } from "../support/operator.ts";

const chartDir = path.join(repoRoot, "examples/charts/myapp");

const client = adminClient();
const kubeconfigFile = process.env.KUBECONFIG!;
const binDir = process.env.MYAPP_TOOLCHAIN_BIN ?? toolchainBinDir();
const minutes = (n: number) => n * 60_000;

type Live = Typed<MyAppInstanceObject>;

describe("MyAppInstance dynamic provider", { timeout: minutes(20) }, () => {
  it("up waits for Ready, previews are exact, refresh sees kubectl, failed waits resume, destroy waits", async (t) => {
    const suffix = randomBytes(3).toString("hex");
    const namespaces = {
      web: `e2e-prov-${suffix}`,
      limited: `e2e-prov-q-${suffix}`,
      denied: `e2e-prov-d-${suffix}`,
      slow: `e2e-prov-s-${suffix}`,
    };
    const cleanup: (() => Promise<unknown>)[] = [];
    // One hook, in an order that cannot strand a finalizer: stack first, then the operator, then the namespaces.
    t.after(async () => {
      for (const step of cleanup.reverse()) await step().catch((error: unknown) => t.diagnostic(String(error)));
    });

    // Where no operator acts: an instance moved there never becomes Ready.
    const unwatched = `e2e-prov-u-${suffix}`;
    await ensureCrd(client);
    for (const name of [...Object.values(namespaces), unwatched]) {
      await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
      cleanup.push(() => client.delete("v1", "Namespace", name));
    }
    // `limited` fits one pod and one instance; `denied` no instance at all (the dry-run must say so in preview).
    await quota(namespaces.limited, "pods=1,count/myappinstances.example.com=1");
    await quota(namespaces.denied, "count/myappinstances.example.com=0");
    const operator = await startOperator(t, {
      namespaces: Object.values(namespaces),
      leaderElection: false,
      args: ["--log-level=debug"],
      label: "provider-e2e operator",
    });
    // Stopped by the cleanup, after the stack (whose destroy needs it for the finalizers) and before the namespaces.
    cleanup.push(() => operator.stop());
    const stack = await providerStack(suffix, cleanup);
    // The explicit kubeconfig input carries its credentials inline, as one passed around in a program would.
    const inlineKubeconfig = withInlineCredentials(readFileSync(kubeconfigFile, "utf8"));
    await stack.setAllConfig({
      namespace: { value: namespaces.web },
      image: { value: "nginx:1.27" },
      replicas: { value: "2" },
      kubeconfig: { value: inlineKubeconfig, secret: true },
    });
    const failWith = (error: unknown) => new Error(`${String(error)}\noperator log (tail):\n${operator.logTail()}`);

    await t.test("preview of a new stack: the instance would be created", async () => {
      const preview = await stack.preview({ onOutput: log(t) });
      assert.equal(preview.changeSummary.create, 2, "the stack and the instance");
    });

    let name = "";
    await t.test("up returns with the instance Ready and every output filled", async () => {
      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(up.summary.result, "succeeded");
      name = up.outputs.webName?.value as string;
      assert.match(name, /^web-[0-9a-f]{8}$/, "the auto-name");
      const live = await client.get<Live>(apiVersion, kind, name, namespaces.web);
      assert.ok(isReady(live), "Ready=True for the current generation the moment up returned");
      assert.equal(up.outputs.webUid?.value, live.metadata.uid);
      assert.equal(up.outputs.webGeneration?.value, live.metadata.generation);
      const status = up.outputs.webStatus?.value as MyAppInstanceObject["status"];
      assert.equal(status?.phase, "Running");
      assert.equal(status?.readyReplicas, 2);
      assert.equal(status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
      assert.equal(up.outputs.webServiceName?.value, name);
      assert.equal(up.outputs.webEndpoint?.value, `${name}.${namespaces.web}.svc:8080`);
      assert.equal(
        live.metadata.annotations?.["myapp.example.com/pulumi-stack"],
        `organization/provider-e2e/${stack.name}`,
      );
      assert.equal(live.metadata.annotations?.["myapp.example.com/pulumi-resource"], "web");
      assert.ok(
        !live.metadata.finalizers?.includes(finalizer),
        "no storage: no finalizer, the collector takes its children",
      );
      assert.doesNotMatch(up.stdout, /web: Ready/, "no line per instance for what the engine reports itself");
    });

    await t.test("the kubeconfig is a secret in state and no output", async () => {
      const key = (parse(inlineKubeconfig) as KubeconfigFile).users[0]!.user["client-key-data"]!.slice(0, 64);
      // At rest: the checkpoint the backend wrote holds only ciphertext.
      const checkpoint = path.join(
        new URL(pulumiEnv().PULUMI_BACKEND_URL!).pathname,
        ".pulumi/stacks/provider-e2e",
        `${stack.name}.json`,
      );
      assert.equal(readFileSync(checkpoint, "utf8").includes(key), false, "the client key is in the checkpoint");
      // Decrypted (the Automation API exports with --show-secrets): only inside values marked secret.
      const exported = await stack.exportStack();
      const found = pathsContaining(exported, key);
      assert.ok(found.length > 0, "the export shows decrypted secrets");
      assert.deepEqual(
        found.filter((at) => !at.endsWith(".plaintext")),
        [],
        "every copy of the kubeconfig is a secret",
      );
      assert.ok(
        found.some((at) => at.endsWith(".outputs.kubeconfig.plaintext")),
        "the instance keeps it, as a secret, for refresh and destroy",
      );
      const outputs = await stack.outputs();
      assert.equal(
        Object.keys(outputs).some((name) => /kubeconfig/i.test(name)),
        false,
      );
    });

    await t.test("a preview right after up changes nothing (server defaults and status never diff)", async () => {
      const preview = await stack.preview({ onOutput: log(t) });
      assert.deepEqual(preview.changeSummary, { same: 2 });
    });

    await t.test("an image change previews as an update of exactly that input, and up rolls it out", async () => {
      await stack.setConfig("image", { value: "nginx:1.28" });
      const step = await previewStep(stack, t, "web");
      assert.equal(step.op, "update");
      assert.deepEqual(changedInputs(step), ["image"]);
      // Known outputs stay known in the preview of an update: the program sees the endpoint, not "unknown".
      const planned = await plannedOutputs(stack, t, "web");
      assert.equal(planned["endpoint"], `${name}.${namespaces.web}.svc:8080`);
      assert.equal(planned["serviceName"], name);

      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(up.summary.resourceChanges?.update, 1);
      const status = up.outputs.webStatus?.value as MyAppInstanceObject["status"];
      assert.equal(status?.image, "nginx:1.28", "status.image moves once every replica runs the new image");
      assert.ok(isReady(await client.get<Live>(apiVersion, kind, name, namespaces.web)));
    });

    await t.test("a rename previews as a replacement keyed on name, the new one created first", async () => {
      await stack.setConfig("name", { value: "web-renamed" });
      const steps = await previewSteps(stack, t);
      const ops = (steps.get("web") ?? []).map((step) => step.op);
      assert.deepEqual(ops, ["create-replacement", "replace", "delete-replaced"]);
      assert.deepEqual(steps.get("web")?.[1]?.keys, ["name"]);
      await stack.removeConfig("name");
    });

    await t.test("an invalid change fails the preview, naming the field and what it allows", async () => {
      await stack.setConfig("replicas", { value: "-1" });
      await assert.rejects(stack.preview(), (error: Error) => {
        assert.match(error.message, /replicas/);
        assert.match(error.message, /must be an integer from 0 to 2147483647/);
        return true;
      });
      await stack.setConfig("replicas", { value: "2" });
    });

    await t.test("admission's verdict reaches the preview through the server-side dry-run", async () => {
      await stack.setConfig("deniedNamespace", { value: namespaces.denied });
      await assert.rejects(stack.preview(), (error: Error) => {
        assert.match(error.message, /exceeded quota/);
        assert.match(error.message, /count\/myappinstances\.example\.com/);
        return true;
      });
      await stack.removeConfig("deniedNamespace");
    });

    await t.test("where the apiserver cannot judge yet, preview says so and relies on the zod rules", async () => {
      const missing = `e2e-prov-none-${suffix}`;
      await stack.setConfig("deniedNamespace", { value: missing });
      const preview = await stack.preview({ onOutput: log(t) });
      assert.equal(preview.changeSummary.create, 1);
      assert.match(
        preview.stdout,
        new RegExp(
          `server-side dry-run skipped for denied \\(${missing}/denied-[0-9a-f]{8}\\): namespace ${missing} does not ` +
            "exist yet; checked with the zod rules only",
        ),
      );
      await stack.removeConfig("deniedNamespace");
    });

    await t.test("a storageClassName the cluster does not have fails the preview, naming it", async () => {
      await stack.setConfig("storageClass", { value: "no-such-class" });
      await assert.rejects(stack.preview({ onOutput: log(t) }), (error: Error) => {
        assert.match(error.message, /property storageClassName value/);
        assert.match(error.message, /StorageClass "no-such-class" does not exist in the cluster/);
        return true;
      });
      // `up` without a preview: check asks the apiserver nothing then, and create refuses it before applying.
      await assert.rejects(stack.up({ onOutput: log(t) }), (error: Error) => {
        assert.match(error.message, /classy: storageClassName: StorageClass "no-such-class" does not exist/);
        return true;
      });
      const live = await client.list<Live>(apiVersion, kind, { namespace: namespaces.web });
      assert.deepEqual(
        live.items.map((item) => item.metadata.name).filter((name) => name?.startsWith("classy")),
        [],
        "nothing was applied",
      );
      await stack.removeConfig("storageClass");
    });

    await t.test("a chart with a template error fails the preview with helm's words, naming the template", async () => {
      const broken = path.join(localDir, `e2e-broken-chart-${suffix}`);
      rmSync(broken, { recursive: true, force: true });
      cpSync(chartDir, broken, { recursive: true });
      writeFileSync(path.join(broken, "templates/broken.yaml"), '{{ fail "this chart is broken on purpose" }}\n');
      const chart = await packChart(broken);
      rmSync(broken, { recursive: true, force: true });
      await client.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "broken-chart", namespace: namespaces.web },
        binaryData: { "chart.tgz": chart.toString("base64") },
      });
      await stack.setConfig("chartConfigMap", { value: "broken-chart" });
      await assert.rejects(stack.preview({ onOutput: log(t) }), (error: Error) => {
        assert.match(error.message, /templates\/broken\.yaml/);
        assert.match(error.message, /this chart is broken on purpose/);
        return true;
      });
      await stack.removeConfig("chartConfigMap");
    });

    await t.test("refresh picks up a change made with kubectl; up puts the program's value back", async () => {
      await kubectl(
        "-n",
        namespaces.web,
        "patch",
        "myappinstance",
        name,
        "--type=merge",
        "-p",
        '{"spec":{"replicas":3}}',
      );
      const refresh = await stack.refresh({ onOutput: log(t) });
      assert.equal(refresh.summary.resourceChanges?.update, 1);
      const state = (await stack.exportStack()).deployment as {
        resources: { urn: string; outputs?: Record<string, unknown> }[];
      };
      const web = state.resources.find((r) => r.urn.endsWith("::web"));
      assert.equal(web?.outputs?.["replicas"], 3, "state has the live value");

      const step = await previewStep(stack, t, "web");
      assert.equal(step.op, "update");
      assert.deepEqual(changedInputs(step), ["replicas"]);
      await stack.up({ onOutput: log(t) });
      const live = await client.get<Live>(apiVersion, kind, name, namespaces.web);
      assert.equal(live.spec.replicas, 2);
    });

    let limitedName = "";
    await t.test(
      "an instance that cannot become Ready fails up with the operator's reason and stays in state",
      async () => {
        await stack.setAllConfig({ limitedNamespace: { value: namespaces.limited }, limitedReplicas: { value: "2" } });
        const started = Date.now();
        await assert.rejects(stack.up({ onOutput: log(t) }), (error: Error) => {
          // The operator reports the Deployment's ReplicaFailure as Degraded: up fails at once, with the reason.
          assert.match(
            error.message,
            /limited \(MyAppInstance e2e-prov-q-[0-9a-f]+\/limited-[0-9a-f]{8}\) cannot become Ready: the operator reports FailedCreate: pods cannot be created: .*exceeded quota/,
          );
          assert.match(error.message, /Warning FailedCreate ReplicaSet\/.*exceeded quota/, "the events say why");
          return true;
        });
        // The operator's reason in the message proves the verdict ended the wait, not its timeout (that says "did not
        // become Ready within"); how long the chain of controllers took on this machine is only reported.
        t.diagnostic(`up failed ${((Date.now() - started) / 1000).toFixed(1)} s after it started`);
        const state = (await stack.exportStack()).deployment as {
          resources: { urn: string; id?: string; initErrors?: string[]; outputs?: Record<string, unknown> }[];
        };
        const limited = state.resources.find((r) => r.urn.endsWith("::limited"));
        assert.ok(limited?.id, "the instance is in state");
        assert.ok((limited?.initErrors ?? []).length > 0, "recorded as failed to initialize");
        assert.equal(typeof limited?.outputs?.["__provider"], "string", "with the provider a later delete needs");
        limitedName = parseObjectKey(limited!.id!).name;
        assert.ok(await client.find(apiVersion, kind, limitedName, namespaces.limited), "and in the cluster");
      },
    );

    await t.test("the next up after the fix completes the same instance", async () => {
      await stack.setConfig("limitedReplicas", { value: "1" });
      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(up.summary.result, "succeeded");
      assert.equal(up.summary.resourceChanges?.create ?? 0, 0, "no second instance");
      const live = await client.get<Live>(apiVersion, kind, limitedName, namespaces.limited);
      assert.ok(isReady(live));
      const state = (await stack.exportStack()).deployment as { resources: { urn: string; initErrors?: string[] }[] };
      assert.equal(state.resources.find((r) => r.urn.endsWith("::limited"))?.initErrors, undefined);
    });

    await t.test("a problem the operator reports as permanent fails up at once, with its reason", async () => {
      // GIVEN a Service named like the instance, controlled by something else: the operator cannot take it over
      await createForeignService(client, namespaces.web, "clash");
      await stack.setConfig("clashName", { value: "clash" });
      const started = Date.now();
      await assert.rejects(stack.up({ onOutput: log(t) }), (error: Error) => {
        assert.match(
          error.message,
          /clash \(MyAppInstance e2e-prov-[0-9a-f]+\/clash\) cannot become Ready: the operator reports ChildOwnedElsewhere: Service .*\/clash already exists and is controlled by ConfigMap clash-owner/,
        );
        return true;
      });
      // The operator's reason in the message proves the verdict ended the wait, not the 300 s timeout.
      t.diagnostic(`up failed ${((Date.now() - started) / 1000).toFixed(1)} s after it started`);
    });

    await t.test("fixed outside the spec: the next up asks the operator to look again and completes", async () => {
      // GIVEN the clashing Service deleted by hand: nothing the operator watches for this instance changed
      await client.delete("v1", "Service", "clash", namespaces.web);
      await client.delete("v1", "ConfigMap", "clash-owner", namespaces.web);
      // WHEN the same program is run again (the instance failed to initialize, so the engine updates it)
      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      // THEN the update's reconcile request got a fresh verdict: Ready, the same instance, answering that request
      assert.equal(up.summary.result, "succeeded");
      assert.equal(up.summary.resourceChanges?.replace ?? 0, 0, "the same instance");
      const live = await client.get<Live>(apiVersion, kind, "clash", namespaces.web);
      assert.ok(isReady(live));
      const request = live.metadata.annotations?.[reconcileRequestAnnotation];
      assert.ok(request, "the update carried a reconcile request");
      assert.equal(live.status?.lastHandledReconcileAt, request, "and the status answers it");
    });

    await t.test("renamed: the next up replaces it and completes", async () => {
      await stack.setConfig("clashName", { value: "clash-2" });
      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(up.summary.resourceChanges?.replace, 1);
      assert.ok(isReady(await client.get<Live>(apiVersion, kind, "clash-2", namespaces.web)));
      assert.equal(await client.find(apiVersion, kind, "clash", namespaces.web), undefined, "the old one is gone");
    });

    await t.test("a move that fails, then reverted: the next up takes the instance back and keeps it", async () => {
      const before = await client.get<Live>(apiVersion, kind, "clash-2", namespaces.web);
      // GIVEN a move to a namespace no operator watches, which fails at its timeout: the replacement stays in
      // state, the original waits there to be deleted
      await stack.setAllConfig({ clashNamespace: { value: unwatched }, clashTimeout: { value: "10" } });
      await assert.rejects(stack.up({ onOutput: log(t) }), /did not become Ready within 10s/);
      // WHEN the program is put back, and run again
      await stack.setAllConfig({ clashNamespace: { value: namespaces.web }, clashTimeout: { value: "300" } });
      const up = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(up.summary.result, "succeeded");
      // THEN the instance it took back is still there, the same object, Ready; only the moved one is gone
      const after = await client.find<Live>(apiVersion, kind, "clash-2", namespaces.web);
      assert.equal(after?.metadata.uid, before.metadata.uid, "the original, taken back, not deleted after");
      assert.ok(after && isReady(after));
      assert.equal(await client.find(apiVersion, kind, "clash-2", unwatched), undefined, "the moved one is gone");
      await stack.preview({ expectNoChanges: true, onOutput: log(t) });
    });

    let dbName = "";
    await t.test(
      'removing storage, or setting it to "", fails the preview naming storage; nothing changes',
      async () => {
        await stack.setConfig("dbStorage", { value: "1Gi" });
        const created = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
          throw failWith(error);
        });
        assert.equal(created.summary.resourceChanges?.create, 1);
        const state = (await stack.exportStack()).deployment as { resources: { urn: string; id?: string }[] };
        dbName = parseObjectKey(state.resources.find((r) => r.urn.endsWith("::db"))!.id!).name;
        const before = await client.get<Live>(apiVersion, kind, dbName, namespaces.web);

        for (const value of ["none", "empty"]) {
          await stack.setConfig("dbStorage", { value });
          await assert.rejects(stack.preview({ onOutput: log(t) }), (error: Error) => {
            // A removed input is the resource's failure, naming it (the CLI would print its value as `{<nil>}`);
            // an empty string is a value the CLI prints readably.
            const namesStorage = value === "none" ? /has a problem: storage: / : /property storage value/;
            assert.match(error.message, namesStorage, `${value}: the failure names storage`);
            assert.match(
              error.message,
              value === "none" ? /may not be removed once set/ : /must be a whole number of bytes/,
            );
            return true;
          });
          await assert.rejects(
            stack.up({ onOutput: log(t) }),
            value === "none" ? /has a problem: storage: / : /property storage value/,
            "up refuses it too",
          );
        }
        const after = await client.get<Live>(apiVersion, kind, dbName, namespaces.web);
        assert.equal(after.metadata.uid, before.metadata.uid, "the same object");
        assert.equal(after.spec.storage, "1Gi", "its storage untouched");
        assert.ok(await client.find("v1", "PersistentVolumeClaim", `data-${dbName}-0`, namespaces.web), "its data too");
        await stack.setConfig("dbStorage", { value: "1Gi" });
      },
    );

    await t.test(
      "a new timeout and a rotated kubeconfig are stored for refresh and destroy, nothing applied",
      async () => {
        const before = await client.get<Live>(apiVersion, kind, name, namespaces.web);
        // GIVEN a new timeout: an update of web's state alone, so destroy waits as long as the program says
        await stack.setConfig("webTimeout", { value: "900" });
        const timeout = await stack.preview({ onOutput: log(t) });
        assert.equal(timeout.changeSummary.update ?? 0, 1, JSON.stringify(timeout.changeSummary));
        // AND the same credentials in another text (other entry names, another current context), as a rotation
        // gives: an update of web's state alone, so refresh and destroy reach the cluster with them
        await stack.setConfig("kubeconfig", { value: renamedEntries(inlineKubeconfig), secret: true });
        const preview = await stack.preview({ onOutput: log(t) });
        assert.equal(preview.changeSummary.update ?? 0, 1, JSON.stringify(preview.changeSummary));
        const up = await stack.up({ onOutput: log(t) });
        assert.equal(up.summary.resourceChanges?.update ?? 0, 1);
        const after = await client.get<Live>(apiVersion, kind, name, namespaces.web);
        assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, "nothing written to the cluster");
        const state = (await stack.exportStack()).deployment as {
          resources: { urn: string; outputs?: Record<string, unknown> }[];
        };
        const web = state.resources.find((resource) => resource.urn.endsWith("::web"));
        assert.equal(web?.outputs?.["timeoutSeconds"], 900, "the state holds the new timeout");
        await stack.preview({ expectNoChanges: true, onOutput: log(t) });
        await stack.refresh({ expectNoChanges: true, onOutput: log(t) });
      },
    );

    let slowName = "";
    await t.test("Ctrl-C during a 600 s wait returns at once; the next up continues", async () => {
      // GIVEN an instance that cannot become Ready (its pods ask for more CPU than any node has: local nodes have
      // 1000, so they stay Pending: no creation failure, just a rollout that does not progress), default 600 s timeout
      await stack.setAllConfig({
        slowNamespace: { value: namespaces.slow },
        slowReplicas: { value: "2" },
        slowCpu: { value: "100000" },
      });
      const abort = new AbortController();
      let output = "";
      const up = stack.up({
        onOutput: (text) => {
          output += text;
          log(t)(text);
        },
        signal: abort.signal,
      });
      up.catch(() => undefined);
      // WHEN the wait is under way (the operator reports 0 of 2 replicas) and Ctrl-C arrives
      const live = await waitFor(
        "the slow instance to report 0/2 replicas",
        async () => {
          const { items } = await client.list<Live>(apiVersion, kind, { namespace: namespaces.slow });
          const item = items[0];
          return item?.status?.conditions?.some((c) => c.type === "Ready" && /0\/2/.test(c.message)) ? item : undefined;
        },
        { timeoutMs: minutes(3) },
      );
      slowName = live.metadata.name!;
      // ... and the wait has said where it stands: naming the instance, with the time spent and allowed (a line
      // at least every 30 s, so one comes within 35 s of the apply)
      const progressLine = new RegExp(`slow \\(${namespaces.slow}/${slowName}\\): .*0/2.* \\(\\d+s of 600s\\)`);
      await waitFor("a progress line naming the instance", async () => (progressLine.test(output) ? true : undefined), {
        timeoutMs: 40_000,
      });
      const interrupted = Date.now();
      abort.abort();
      // THEN up returns, its wait ended by the Ctrl-C and not by its 600 s timeout: the provider says which (how soon
      // is reported, not judged: a busy machine's engine and plugins may take seconds to stop)
      const failure = await up.then(
        () => assert.fail("up succeeded after Ctrl-C"),
        (error: unknown) => error,
      );
      t.diagnostic(`up returned ${Date.now() - interrupted} ms after Ctrl-C`);
      const said = `${output}\n${String(failure)}`;
      assert.match(said, /stopped waiting for Ready because the deployment was cancelled/);
      assert.doesNotMatch(said, /did not become Ready within/);
      // ... and the instance is in the state, so the next up continues with it instead of creating another
      const state = (await stack.exportStack()).deployment as { resources: { urn: string; id?: string }[] };
      assert.equal(state.resources.find((r) => r.urn.endsWith("::slow"))?.id, `${namespaces.slow}/${slowName}`);
      await stack.setConfig("slowReplicas", { value: "1" });
      await stack.removeConfig("slowCpu");
      const next = await stack.up({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(next.summary.resourceChanges?.create ?? 0, 0, "no second instance");
      assert.ok(isReady(await client.get<Live>(apiVersion, kind, slowName, namespaces.slow)));
    });

    await t.test("destroy returns once every instance is gone: with storage, after the finalizer ran", async () => {
      const instances: [string, string][] = [
        [name, namespaces.web],
        [limitedName, namespaces.limited],
        ["clash-2", namespaces.web],
        [dbName, namespaces.web],
        [slowName, namespaces.slow],
      ];
      for (const [instance, namespace] of instances) {
        const live = await client.get<Live>(apiVersion, kind, instance, namespace);
        const guarded = instance === dbName;
        assert.equal(
          live.metadata.finalizers?.includes(finalizer) ?? false,
          guarded,
          guarded
            ? `${instance} (storage) can only go once the operator let it`
            : `${instance} (no storage) has nothing the garbage collector leaves: no finalizer`,
        );
      }
      const destroy = await stack.destroy({ onOutput: log(t) }).catch((error: unknown) => {
        throw failWith(error);
      });
      assert.equal(destroy.summary.result, "succeeded");
      for (const [instance, namespace] of instances) {
        assert.equal(await client.find(apiVersion, kind, instance, namespace), undefined, `${instance} is gone`);
      }
      const workload = await client.find("apps/v1", "StatefulSet", dbName, namespaces.web);
      assert.ok(!workload || workload.metadata.deletionTimestamp, "the operator's cleanup ran before");
      await waitFor(
        `the garbage collector to take ${name}'s Deployment`,
        async () => ((await client.find("apps/v1", "Deployment", name, namespaces.web)) ? undefined : true),
        { timeoutMs: minutes(2) },
      );
    });
  });
});

/**
 * A ResourceQuota, once the quota controller has counted every resource it limits (admission refuses with "status
 * unknown for quota" until then; a CRD installed a moment ago is counted only after the controller's next full
 * resync).
 */
async function quota(namespace: string, hard: string): Promise<void> {
  await kubectl("-n", namespace, "create", "quota", "e2e", `--hard=${hard}`);
  const limited = hard.split(",").map((entry) => entry.split("=")[0]!);
  await waitFor(
    `quota in ${namespace} to count ${limited.join(", ")}`,
    async () => {
      const out = await kubectl("-n", namespace, "get", "resourcequota", "e2e", "-o", "jsonpath={.status.used}");
      const used = out.trim() ? (JSON.parse(out) as Record<string, string>) : {};
      return limited.every((resource) => resource in used) ? true : undefined;
    },
    // The quota controller takes up a new kind at its next full resync (5 minutes by default).
    { timeoutMs: minutes(7) },
  );
}

/** The program, written into a throwaway project directory under .local (so it resolves our node_modules). */
async function providerStack(suffix: string, cleanup: (() => Promise<unknown>)[]): Promise<Stack> {
  const workDir = path.join(localDir, "e2e", `provider-${suffix}`);
  mkdirSync(workDir, { recursive: true });
  writeFileSync(
    path.join(workDir, "Pulumi.yaml"),
    "name: provider-e2e\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.ts\n",
  );
  writeFileSync(path.join(workDir, "index.ts"), program(path.join(repoRoot, "provider/index.ts")));
  // The built CLI first on PATH (as `npm test` sets it), with Node 24 for the language host and the dynamic
  // provider's launcher; PulumiCommand.get() finds the CLI there.
  const PATH = [binDir, path.dirname(process.execPath), process.env.PATH].join(path.delimiter);
  process.env.PATH = PATH;
  const pulumiCommand = await PulumiCommand.get({ skipVersionCheck: true });
  const envVars = { ...pulumiEnv(), KUBECONFIG: kubeconfigFile, PATH };
  const stackName = `e2e-${suffix}`;
  const stack = await LocalWorkspace.createOrSelectStack({ stackName, workDir }, { pulumiCommand, envVars });
  cleanup.push(async () => {
    await stack.destroy().catch(() => undefined);
    await stack.workspace.removeStack(stackName, { force: true }).catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
  });
  return stack;
}

/**
 * A stack declaring `web` (explicit kubeconfig) and, when configured, `limited`, `clash`, `db` and `denied`
 * (ambient KUBECONFIG).
 */
function program(providerModule: string): string {
  return `import * as pulumi from "@pulumi/pulumi";
import { MyAppInstance } from ${JSON.stringify(providerModule)};

const config = new pulumi.Config();
const web = new MyAppInstance("web", {
  namespace: config.require("namespace"),
  name: config.get("name"),
  image: config.require("image"),
  replicas: config.requireNumber("replicas"),
  kubeconfig: config.requireSecret("kubeconfig"),
  timeoutSeconds: config.getNumber("webTimeout"),
});
export const webName = web.name;
export const webUid = web.uid;
export const webGeneration = web.generation;
export const webStatus = web.status;
export const webServiceName = web.serviceName;
export const webEndpoint = web.endpoint;

const limitedNamespace = config.get("limitedNamespace");
if (limitedNamespace) {
  new MyAppInstance("limited", {
    namespace: limitedNamespace,
    image: "nginx:1.27",
    replicas: config.requireNumber("limitedReplicas"),
    // Both outcomes (Degraded by the operator, then Ready after the fix) come through a chain of controllers: a
    // timeout a busy machine cannot hit; the failing up's message proves the verdict came from the operator.
    timeoutSeconds: 300,
  });
}
const clashName = config.get("clashName");
if (clashName) {
  new MyAppInstance("clash", {
    namespace: config.get("clashNamespace") ?? config.require("namespace"),
    name: clashName,
    image: "nginx:1.27",
    timeoutSeconds: config.getNumber("clashTimeout") ?? 300,
  });
}
const dbStorage = config.get("dbStorage");
if (dbStorage) {
  new MyAppInstance("db", {
    namespace: config.require("namespace"),
    image: "postgres:17",
    storage: dbStorage === "none" ? undefined : dbStorage === "empty" ? "" : dbStorage,
    storageReclaimPolicy: "Delete",
  });
}
const slowNamespace = config.get("slowNamespace");
if (slowNamespace) {
  new MyAppInstance("slow", {
    namespace: slowNamespace,
    image: "nginx:1.27",
    replicas: config.requireNumber("slowReplicas"),
    ...(config.get("slowCpu") ? { resources: { requests: { cpu: config.require("slowCpu") } } } : {}),
  });
}
const storageClass = config.get("storageClass");
if (storageClass) {
  new MyAppInstance("classy", {
    namespace: config.require("namespace"),
    image: "nginx:1.27",
    storage: "1Gi",
    storageClassName: storageClass,
  });
}
const chartConfigMap = config.get("chartConfigMap");
if (chartConfigMap) {
  new MyAppInstance("charted", {
    namespace: config.require("namespace"),
    image: "nginx:1.27",
    chart: { configMap: chartConfigMap },
  });
}
const deniedNamespace = config.get("deniedNamespace");
if (deniedNamespace) new MyAppInstance("denied", { namespace: deniedNamespace, image: "nginx:1.27" });
`;
}

/** The steps a preview would take, by resource name, in order (from the engine's own events). */
async function previewSteps(stack: Stack, t: TestContext): Promise<Map<string, StepEventMetadata[]>> {
  const steps = new Map<string, StepEventMetadata[]>();
  await stack.preview({
    onOutput: log(t),
    onEvent: (event: EngineEvent) => {
      const metadata = event.resourcePreEvent?.metadata;
      if (!metadata) return;
      const name = metadata.urn.split("::").pop()!;
      steps.set(name, [...(steps.get(name) ?? []), metadata]);
    },
  });
  return steps;
}

/** The outputs a preview plans for resource `name` (from the engine's outputs event). */
async function plannedOutputs(stack: Stack, t: TestContext, name: string): Promise<Record<string, unknown>> {
  let outputs: Record<string, unknown> = {};
  await stack.preview({
    onOutput: log(t),
    onEvent: (event: EngineEvent) => {
      const metadata = event.resOutputsEvent?.metadata;
      if (metadata?.urn.endsWith(`::${name}`)) outputs = metadata.new?.outputs ?? {};
    },
  });
  return outputs;
}

/** The one step a preview would take for `name`. */
async function previewStep(stack: Stack, t: TestContext, name: string): Promise<StepEventMetadata> {
  const steps = (await previewSteps(stack, t)).get(name) ?? [];
  assert.equal(steps.length, 1, `steps for ${name}: ${steps.map((step) => step.op).join(", ")}`);
  return steps[0]!;
}

/** Top-level inputs whose old and new values differ in a step. */
function changedInputs(step: StepEventMetadata): string[] {
  const olds = step.old?.inputs ?? {};
  const news = step.new?.inputs ?? {};
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)]);
  return [...keys].filter((key) => JSON.stringify(olds[key]) !== JSON.stringify(news[key])).sort();
}

interface KubeconfigFile {
  clusters: { cluster: Record<string, string> }[];
  users: { user: Record<string, string> }[];
}

/** The kubeconfig with its certificate and key files read into `*-data` fields. */
function withInlineCredentials(kubeconfig: string): string {
  const config = parse(kubeconfig) as KubeconfigFile;
  const inline = (entry: Record<string, string>, field: string) => {
    const file = entry[field];
    if (file === undefined) return;
    entry[`${field}-data`] = readFileSync(file).toString("base64");
    delete entry[field];
  };
  for (const { cluster } of config.clusters) inline(cluster, "certificate-authority");
  for (const { user } of config.users) for (const field of ["client-certificate", "client-key"]) inline(user, field);
  assert.ok(config.users[0]?.user["client-key-data"], "the test kubeconfig has a client key to look for");
  return stringify(config);
}

/** The same kubeconfig (same cluster, same credentials) in another text: every entry renamed. */
function renamedEntries(kubeconfig: string): string {
  const config = parse(kubeconfig) as {
    clusters: { name: string }[];
    users: { name: string }[];
    contexts: { name: string; context: { cluster: string; user: string } }[];
    "current-context": string;
  };
  for (const entry of [...config.clusters, ...config.users, ...config.contexts]) entry.name = `rotated-${entry.name}`;
  for (const { context } of config.contexts) {
    context.cluster = `rotated-${context.cluster}`;
    context.user = `rotated-${context.user}`;
  }
  config["current-context"] = `rotated-${config["current-context"]}`;
  return stringify(config);
}

/** JSON paths in `value` of strings that contain `needle`. */
function pathsContaining(value: unknown, needle: string, at = "$"): string[] {
  if (typeof value === "string") return value.includes(needle) ? [at] : [];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => pathsContaining(child, needle, `${at}.${key}`));
}

/** Engine output into the test's diagnostics, so a failed step explains itself. */
function log(t: TestContext): (line: string) => void {
  return (line) => {
    for (const text of line.split("\n")) if (text.trim()) t.diagnostic(text);
  };
}
