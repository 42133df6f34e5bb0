/**
 * The operator's admission webhooks for a test that starts its own operator process: the configurations the
 * component would install (its own builders, URL placement on a free port of 127.0.0.1, only the test's
 * namespaces), applied with the admin client and deleted when the test ends, and the flags (webhook and policy)
 * the operator needs to serve them, derived the way the component derives them.
 */
import { randomBytes } from "node:crypto";
import type { TestContext } from "node:test";
import { operatorFlags } from "../../components/operator-flags.ts";
import type { PlatformPolicyArgs } from "../../components/platform-policy.ts";
import { resolveSettings } from "../../components/settings.ts";
import { operatorWebhookConfigurations } from "../../components/webhooks.ts";
import type { KubeClient, KubeObject } from "../../kube/index.ts";
import { freePort } from "../../tools/lib/operator-launcher.ts";
import { testNamespace } from "./cluster.ts";

export interface PlatformWebhooks {
  /** Flags for the operator: `--webhook-*` and the policy's. */
  readonly flags: readonly string[];
  /** The configurations' name. */
  readonly name: string;
}

const servedFlags = /^--(webhook-|allowed-registries|max-|namespace-max-|require-expandable-storage)/;

/** Installs the webhooks for `watchNamespaces` with `policy`; the operator must be started with the flags. */
export async function platformWebhooks(
  t: TestContext,
  client: KubeClient,
  options: { readonly watchNamespaces: readonly string[]; readonly policy?: PlatformPolicyArgs },
): Promise<PlatformWebhooks> {
  const name = `wh-${randomBytes(3).toString("hex")}`;
  const operatorNamespace = await testNamespace(t, client, "webhook-system");
  const resolved = resolveSettings(name, {
    namespace: operatorNamespace,
    createNamespace: false,
    operatorPlacement: "external",
    watchNamespaces: [...options.watchNamespaces],
    webhooks: { url: `https://127.0.0.1:${await freePort()}` },
    ...(options.policy ? { policy: options.policy } : {}),
  });
  if (!resolved.ok) throw new Error(`platformWebhooks: ${JSON.stringify(resolved.issues)}`);
  const configurations = operatorWebhookConfigurations(resolved.settings);
  if (!configurations) throw new Error("platformWebhooks: the webhooks are off");
  const objects = [configurations.validating, configurations.mutating] as KubeObject[];
  t.after(async () => {
    for (const object of objects) {
      await client.delete(object.apiVersion, object.kind, name).catch(() => undefined);
    }
  });
  for (const object of objects) await client.apply(object, { fieldManager: "myapp-test", force: true });
  return { flags: operatorFlags(resolved.settings).filter((flag) => servedFlags.test(flag)), name };
}
