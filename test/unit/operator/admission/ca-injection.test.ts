import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { NotFoundError, ServerError } from "../../../../kube/index.ts";
import {
  CaInjector,
  caBundlePatch,
  isOlderBundle,
  type JsonPatchOperation,
  type WebhookConfiguration,
  type WebhookConfigurationKind,
  type WebhookConfigurationClient,
} from "../../../../operator/admission/ca-injection.ts";
import { createCertificateAuthority } from "../../../../operator/admission/certificates.ts";

const hour = 3_600_000;
const t0 = Date.UTC(2030, 0, 1);
const b64 = (pem: string) => Buffer.from(pem).toString("base64");

/** In-memory configurations that apply the patches (test + add) and record them. */
class MemoryConfigurations implements WebhookConfigurationClient {
  readonly configurations = new Map<
    WebhookConfigurationKind,
    { webhooks: { name: string; clientConfig: { caBundle?: string } }[] }
  >();
  readonly patches: { kind: WebhookConfigurationKind; operations: readonly JsonPatchOperation[] }[] = [];
  failGet: Error | undefined;
  failPatch: Error | undefined;

  constructor(kinds: readonly WebhookConfigurationKind[], webhooks: readonly string[]) {
    for (const kind of kinds)
      this.configurations.set(kind, { webhooks: webhooks.map((name) => ({ name, clientConfig: {} })) });
  }
  async get(kind: WebhookConfigurationKind): Promise<WebhookConfiguration | undefined> {
    if (this.failGet) throw this.failGet;
    return structuredClone(this.configurations.get(kind));
  }
  async patch(kind: WebhookConfigurationKind, operations: readonly JsonPatchOperation[]): Promise<void> {
    if (this.failPatch) throw this.failPatch;
    this.patches.push({ kind, operations });
    const configuration = this.configurations.get(kind)!;
    for (const op of operations) {
      const [, , index, ...rest] = op.path.split("/");
      const webhook = configuration.webhooks[Number(index)]!;
      if (op.op === "test") assert.equal(webhook.name, op.value);
      else if (rest.join("/") === "clientConfig/caBundle") webhook.clientConfig.caBundle = op.value as string;
    }
  }
  bundles(): (string | undefined)[] {
    return [...this.configurations.values()].flatMap((c) => c.webhooks.map((w) => w.clientConfig.caBundle));
  }
}

function recordingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, warnings: () => lines.filter((line) => line.level === 40).map((line) => line.msg) };
}

const bothKinds = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] as const;

test("the patch sets caBundle only on the webhooks that lack it, each guarded by a test of its name", () => {
  const configuration: WebhookConfiguration = {
    webhooks: [
      { name: "a.example.com", clientConfig: { caBundle: "QUJD" } },
      { name: "b.example.com", clientConfig: {} },
    ],
  };
  assert.deepEqual(caBundlePatch(configuration, "QUJD"), [
    { op: "test", path: "/webhooks/1/name", value: "b.example.com" },
    { op: "add", path: "/webhooks/1/clientConfig/caBundle", value: "QUJD" },
  ]);
  assert.deepEqual(caBundlePatch({ webhooks: [{ name: "a", clientConfig: { caBundle: "QUJD" } }] }, "QUJD"), []);
  assert.deepEqual(caBundlePatch({}, "QUJD"), []);
});

test("injection writes both configurations once, then nothing while the bundle is unchanged", async () => {
  // GIVEN two configurations of two webhooks each, without a caBundle
  const ca = await createCertificateAuthority({ validityMs: hour, nowMs: t0 });
  const webhooks = new MemoryConfigurations(bothKinds, ["validate.myapp.example.com", "other.myapp.example.com"]);
  const injector = new CaInjector(webhooks, "myapp-operator", pino({ level: "silent" }));
  // WHEN injected twice
  const first = await injector.inject(ca.cert);
  const second = await injector.inject(ca.cert);
  // THEN the first wrote every webhook's bundle (one patch per configuration), the second nothing
  assert.deepEqual(first, { trusted: true, wrote: true });
  assert.deepEqual(second, { trusted: true, wrote: false });
  assert.equal(webhooks.patches.length, 2);
  assert.deepEqual(webhooks.bundles(), Array(4).fill(b64(ca.cert)));
});

test("a missing configuration is logged once, does not block trust, and is injected once it appears", async () => {
  const ca = await createCertificateAuthority({ validityMs: hour, nowMs: t0 });
  const webhooks = new MemoryConfigurations(["ValidatingWebhookConfiguration"], ["v"]);
  const { logger, warnings } = recordingLogger();
  const injector = new CaInjector(webhooks, "myapp-operator", logger);
  assert.deepEqual(await injector.inject(ca.cert), { trusted: true, wrote: true });
  assert.deepEqual(await injector.inject(ca.cert), { trusted: true, wrote: false });
  assert.equal(warnings().length, 1);
  assert.match(warnings()[0]!, /MutatingWebhookConfiguration myapp-operator does not exist/);
  // WHEN it appears
  webhooks.configurations.set("MutatingWebhookConfiguration", { webhooks: [{ name: "m", clientConfig: {} }] });
  assert.deepEqual(await injector.inject(ca.cert), { trusted: true, wrote: true });
  assert.deepEqual(webhooks.bundles(), [b64(ca.cert), b64(ca.cert)]);
  // AND a configuration deleted between read and patch counts as missing again
  webhooks.failPatch = new NotFoundError(404, "gone");
  const other = await createCertificateAuthority({ validityMs: hour, nowMs: t0 + 1000 });
  assert.equal((await injector.inject(other.cert)).trusted, true);
  assert.equal(warnings().length, 3, "each configuration is reported missing once more");
});

test("where a policy gives the defaults, only the validating configuration is read: no missing mutating one is reported", async () => {
  const ca = await createCertificateAuthority({ validityMs: hour, nowMs: t0 });
  const webhooks = new MemoryConfigurations(["ValidatingWebhookConfiguration"], ["v"]);
  const reads: WebhookConfigurationKind[] = [];
  const get = webhooks.get.bind(webhooks);
  webhooks.get = async (kind) => (reads.push(kind), get(kind));
  const { logger, warnings } = recordingLogger();
  const injector = new CaInjector(webhooks, "myapp-operator", logger, ["ValidatingWebhookConfiguration"]);
  assert.deepEqual(await injector.inject(ca.cert), { trusted: true, wrote: true });
  assert.deepEqual(reads, ["ValidatingWebhookConfiguration"]);
  assert.deepEqual(warnings(), []);
});

test("a failure to read or patch is not trust, and is logged", async () => {
  const ca = await createCertificateAuthority({ validityMs: hour, nowMs: t0 });
  const webhooks = new MemoryConfigurations(bothKinds, ["v"]);
  const { logger, warnings } = recordingLogger();
  const injector = new CaInjector(webhooks, "myapp-operator", logger);
  webhooks.failPatch = new ServerError(500, "etcd");
  assert.deepEqual(await injector.inject(ca.cert), { trusted: false, wrote: false });
  webhooks.failPatch = undefined;
  webhooks.failGet = new ServerError(503, "unavailable");
  assert.equal((await injector.inject(ca.cert)).trusted, false);
  // THEN each of the four failures (two configuration kinds, two injects) says so
  assert.deepEqual(
    warnings().map((message) => /could not inject/.test(message)),
    [true, true, true, true],
  );
});

test("a replica with an older bundle never takes the newer CA away from the configurations", async () => {
  // GIVEN configurations that already trust [new, old] (another replica rotated the CA)
  const old = await createCertificateAuthority({ validityMs: 10 * hour, nowMs: t0 });
  const fresh = await createCertificateAuthority({ validityMs: 10 * hour, nowMs: t0 + 7 * hour });
  const webhooks = new MemoryConfigurations(bothKinds, ["v"]);
  const injector = new CaInjector(webhooks, "myapp-operator", pino({ level: "silent" }));
  await injector.inject(`${fresh.cert}${old.cert}`);
  const patches = webhooks.patches.length;
  // WHEN a replica that read the Secret before the rotation injects [old]
  const result = await injector.inject(old.cert);
  // THEN it writes nothing and does not count as trusted
  assert.deepEqual(result, { trusted: false, wrote: false });
  assert.equal(webhooks.patches.length, patches);
  assert.deepEqual(webhooks.bundles(), Array(2).fill(b64(`${fresh.cert}${old.cert}`)));
  // AND the predicate: older when theirs has a CA newer than all of ours; garbage is never newer
  assert.equal(isOlderBundle(old.cert, b64(`${fresh.cert}${old.cert}`)), true);
  assert.equal(isOlderBundle(`${fresh.cert}${old.cert}`, b64(old.cert)), false);
  assert.equal(isOlderBundle(fresh.cert, b64(`${fresh.cert}${old.cert}`)), false);
  assert.equal(isOlderBundle(old.cert, b64("not a bundle")), false);
  assert.equal(isOlderBundle(old.cert, undefined), false);
});
