import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { operatorFlags } from "../../../components/operator-flags.ts";
import { platformPolicyFlags, resolvePlatformPolicy } from "../../../components/platform-policy.ts";
import { resolveSettings } from "../../../components/settings.ts";
import { mutatePath, validatePath } from "../../../components/operator-endpoints.ts";
import { operatorWebhookConfigurations, webhookService } from "../../../components/webhooks.ts";
import { admissionPaths } from "../../../operator/admission-wiring.ts";
import { parseAllowedRegistries } from "../../../operator/admission/policy.ts";
import { settingsFor, testImage } from "./settings-fixture.ts";

const issuesOf = (args: Parameters<typeof resolveSettings>[1]) => {
  const result = resolveSettings("op", args);
  return result.ok ? [] : result.issues.map((issue) => `${issue.field}: ${issue.message}`);
};

describe("webhooks settings", () => {
  it("are on in-cluster, off for an external operator unless a URL says where it listens", () => {
    assert.deepEqual(settingsFor().webhooks, {
      enabled: true,
      url: undefined,
      defaults: "auto",
      certManager: undefined,
    });
    assert.deepEqual(settingsFor({ operatorPlacement: "external" }).webhooks, {
      enabled: false,
      url: undefined,
      defaults: "auto",
      certManager: undefined,
    });
    assert.deepEqual(
      settingsFor({ operatorPlacement: "external", webhooks: { url: "https://127.0.0.1:9443/" } }).webhooks,
      { enabled: true, url: "https://127.0.0.1:9443", defaults: "auto", certManager: undefined },
    );
  });

  it("refuse a URL that is not https://HOST:PORT, a URL in-cluster, and an external operator without one", () => {
    const external = { operatorPlacement: "external" } as const;
    assert.match(
      issuesOf({ ...external, webhooks: { url: "http://127.0.0.1:9443" } })[0] ?? "",
      /^webhooks\.url: .*https:\/\/HOST:PORT/,
    );
    assert.match(issuesOf({ ...external, webhooks: { url: "https://op.example/hook" } })[0] ?? "", /^webhooks\.url: /);
    assert.match(issuesOf({ ...external, webhooks: { enabled: true } })[0] ?? "", /^webhooks\.url: is required/);
    assert.match(
      issuesOf({ image: testImage, webhooks: { url: "https://127.0.0.1:9443" } })[0] ?? "",
      /^webhooks\.url: is for an external operator/,
    );
  });

  it("an external URL: https's own port 443 may be written; port 0 and a host the certificate cannot name may not", () => {
    const external = { operatorPlacement: "external" } as const;
    const webhookFlagsOf = (url: string) =>
      operatorFlags(settingsFor({ ...external, webhooks: { url } })).filter((flag) =>
        /^--webhook-(bind-address|hosts)=/.test(flag),
      );
    // GIVEN https://HOST:443, which the URL parser writes without its port
    // THEN it is taken as written, and the operator listens on 443
    assert.deepEqual(webhookFlagsOf("https://webhook.example.com:443"), [
      "--webhook-bind-address=:443",
      "--webhook-hosts=webhook.example.com",
    ]);
    assert.equal(
      settingsFor({ ...external, webhooks: { url: "https://webhook.example.com:443/" } }).webhooks.url,
      "https://webhook.example.com",
    );
    // AND without a port it is still refused: the port is where the operator listens
    assert.match(
      issuesOf({ ...external, webhooks: { url: "https://webhook.example.com" } })[0] ?? "",
      /^webhooks\.url: "https:\/\/webhook\.example\.com" must be https:\/\/HOST:PORT, with a port/,
    );
    // AND port 0, which the apiserver could never call, is refused naming the range
    assert.deepEqual(issuesOf({ ...external, webhooks: { url: "https://127.0.0.1:0" } }), [
      'webhooks.url: "https://127.0.0.1:0" must name a port from 1 to 65535, got 0',
    ]);
    // AND a host that is neither a DNS name nor an IP (a comma would split --webhook-hosts) is refused
    assert.match(
      issuesOf({ ...external, webhooks: { url: "https://a,b.example:9443" } })[0] ?? "",
      /^webhooks\.url: "https:\/\/a,b\.example:9443" must name its host as a DNS name .* or an IP address$/,
    );
  });

  it("an external URL on IPv6: the operator listens there, on [::1] for the loopback address", () => {
    const external = { operatorPlacement: "external" } as const;
    // GIVEN https://[::1]:PORT, where the apiserver calls the IPv6 loopback address
    const loopback = operatorFlags(settingsFor({ ...external, webhooks: { url: "https://[::1]:9443" } }));
    // THEN the operator listens on [::1], not 127.0.0.1, and the certificate names ::1
    assert.ok(loopback.includes("--webhook-bind-address=[::1]:9443"), loopback.join(" "));
    assert.ok(loopback.includes("--webhook-hosts=::1"), loopback.join(" "));
    // AND another IPv6 address is served on every interface, IPv6 ones included
    const other = operatorFlags(settingsFor({ ...external, webhooks: { url: "https://[fd00::7]:9443" } }));
    assert.ok(other.includes("--webhook-bind-address=[::]:9443"), other.join(" "));
  });

  it("an external URL on the operator's own metrics or probe port is refused, naming the clash", () => {
    // GIVEN externalOperatorFlags, which leave metrics (127.0.0.1:8080) and probes (:8081) to the process
    // THEN a webhook URL whose port the operator would refuse to share is refused here, with a port that works
    assert.deepEqual(issuesOf({ operatorPlacement: "external", webhooks: { url: "https://127.0.0.1:8081" } }), [
      'webhooks.url: "https://127.0.0.1:8081" has the operator listen on 127.0.0.1:8081, the port of its health ' +
        "probes (--health-probe-bind-address, :8081 unless its command line says otherwise), so it would refuse " +
        "to start: choose another port, such as 9443",
    ]);
    assert.match(
      issuesOf({ operatorPlacement: "external", webhooks: { url: "https://webhook.example.com:8080" } })[0] ?? "",
      /^webhooks\.url: .* listen on :8080, the port of its metrics \(--metrics-bind-address, 127\.0\.0\.1:8080 /,
    );
  });

  it("refuse a defaults mode they do not know, and a policy for the defaults with the webhooks off", () => {
    assert.match(
      issuesOf({ image: testImage, webhooks: { defaults: "cel" as "policy" } })[0] ?? "",
      /^webhooks\.defaults: must be "auto", "webhook" or "policy", got "cel"/,
    );
    assert.match(
      issuesOf({ image: testImage, webhooks: { enabled: false, defaults: "policy" } })[0] ?? "",
      /^webhooks\.defaults: is part of the platform's admission, which is off/,
    );
  });

  it("refuse a policy that nothing would enforce", () => {
    assert.match(
      issuesOf({ image: testImage, webhooks: { enabled: false }, policy: { maxReplicas: 3 } })[0] ?? "",
      /^policy: is enforced by the operator's admission webhooks, which are off/,
    );
  });
});

describe("platform policy", () => {
  it("becomes the operator's flags, nothing for what is unlimited", () => {
    const resolved = resolvePlatformPolicy({
      allowedRegistries: ["ghcr.io/acme", "docker.io/library"],
      maxReplicas: 10,
      maxStorage: "50Gi",
      namespaceBudget: { instances: 20, storage: "200Gi" },
      requireExpandableStorage: true,
    });
    assert.ok(resolved.ok);
    assert.deepEqual(platformPolicyFlags(resolved.policy), [
      "--allowed-registries=ghcr.io/acme,docker.io/library",
      "--max-replicas=10",
      "--max-storage=50Gi",
      "--namespace-max-instances=20",
      "--namespace-max-storage=200Gi",
      "--require-expandable-storage",
    ]);
    assert.deepEqual(platformPolicyFlags(undefined), []);
  });

  it("names each bad field and what is allowed", () => {
    const resolved = resolvePlatformPolicy({
      allowedRegistries: ["ghcr.io/acme", "https://ghcr.io"],
      maxReplicas: 0,
      maxStorage: "lots",
      namespaceBudget: { instances: 1.5, storage: "10 Gi" },
    });
    assert.ok(!resolved.ok);
    assert.deepEqual(
      resolved.issues.map((issue) => issue.field),
      [
        "policy.allowedRegistries[1]",
        "policy.maxReplicas",
        "policy.maxStorage",
        "policy.namespaceBudget.instances",
        "policy.namespaceBudget.storage",
      ],
    );
    assert.match(
      resolved.issues[2]?.message ?? "",
      /"lots" must be a storage quantity of at least 1 byte, such as 50Gi/,
    );
  });
  it("numbers past the largest safe integer are refused, as the operator's flags refuse them", () => {
    // GIVEN numbers a flag would write as 1e+21, or round to a neighbour
    const resolved = resolvePlatformPolicy({ maxReplicas: 1e21, namespaceBudget: { replicas: 2 ** 53 } });
    // THEN each is refused naming the field and the range
    assert.ok(!resolved.ok);
    assert.deepEqual(resolved.issues, [
      { field: "policy.maxReplicas", message: "1e+21 must be a whole number from 1 to 9007199254740991" },
      {
        field: "policy.namespaceBudget.replicas",
        message: "9007199254740992 must be a whole number from 1 to 9007199254740991",
      },
    ]);
    // AND the largest one is a flag the operator reads
    const largest = resolvePlatformPolicy({ maxReplicas: Number.MAX_SAFE_INTEGER });
    assert.ok(largest.ok);
    assert.deepEqual(platformPolicyFlags(largest.policy), ["--max-replicas=9007199254740991"]);
  });

  it("a registry listed twice, or with a comma, is refused naming its index", () => {
    // GIVEN one registry twice (written differently) and an entry the flag's commas would split
    const resolved = resolvePlatformPolicy({
      allowedRegistries: ["ghcr.io/acme", "GHCR.io/acme/", "quay.io/a,quay.io/b"],
    });
    // THEN each is named, with what to do; neither reaches the flag
    assert.ok(!resolved.ok);
    assert.deepEqual(resolved.issues, [
      {
        field: "policy.allowedRegistries[1]",
        message:
          '"GHCR.io/acme/" is policy.allowedRegistries[0] ("ghcr.io/acme") again, written differently; list it once',
      },
      {
        field: "policy.allowedRegistries[2]",
        message:
          '"quay.io/a,quay.io/b" contains a comma, which separates the entries of the operator\'s --allowed-registries; list each entry on its own',
      },
    ]);
  });

  it("reads registries and storage as the operator's flags do: what pulumi up accepts, the operator starts with", () => {
    const entries = ["acme", "nginx", "Index.Docker.io/acme/", "GHCR.io/acme", "ghcr.io/x@sha256:ab", "[::1]:5000"];
    const resolved = resolvePlatformPolicy({ allowedRegistries: entries, maxStorage: " 50Gi " });
    assert.ok(!resolved.ok);
    assert.deepEqual(
      resolved.issues.map((issue) => issue.field),
      ["policy.allowedRegistries[0]", "policy.allowedRegistries[1]", "policy.allowedRegistries[4]"],
    );
    assert.match(resolved.issues[0]?.message ?? "", /"acme" does not start with a registry host.*docker\.io\/acme/);
    assert.throws(() => parseAllowedRegistries(entries.join(",")), /"acme" does not start with a registry host/);

    const good = resolvePlatformPolicy({
      allowedRegistries: [entries[2]!, entries[3]!, entries[5]!],
      maxStorage: " 50Gi ",
    });
    assert.ok(good.ok);
    const flags = platformPolicyFlags(good.policy);
    assert.deepEqual(flags, ["--allowed-registries=docker.io/acme,ghcr.io/acme,[::1]:5000", "--max-storage=50Gi"]);
    assert.deepEqual(parseAllowedRegistries(flags[0]!.slice("--allowed-registries=".length)), [
      "docker.io/acme",
      "ghcr.io/acme",
      "[::1]:5000",
    ]);
  });
});

describe("operatorWebhookConfigurations", () => {
  it("in-cluster: through the webhook Service, failing closed, never for the operator, kube-system or metadata-only updates", () => {
    const settings = settingsFor({ watchNamespaces: ["team-a"] });
    const built = operatorWebhookConfigurations(settings);
    assert.ok(built);
    const [validating] = built.validating.webhooks ?? [];
    const [mutating] = built.mutating?.webhooks ?? [];
    assert.ok(validating && mutating);
    assert.deepEqual(validating.clientConfig, {
      service: { namespace: "myapp-system", name: "myapp-operator-webhook", path: "/validate", port: 443 },
    });
    assert.equal(mutating.clientConfig.service?.path, "/mutate");
    assert.ok(!("caBundle" in validating.clientConfig), "the operator injects its own CA");
    const watched = { key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a"] };
    assert.deepEqual(validating.namespaceSelector, { matchExpressions: [watched] });
    // The default is called for only where it can apply: a looser namespace, an instance without a level.
    assert.deepEqual(mutating.namespaceSelector, {
      matchExpressions: [
        watched,
        { key: "pod-security.kubernetes.io/enforce", operator: "In", values: ["baseline", "privileged"] },
      ],
    });
    // One condition per webhook (one CEL program per write), the scope's clauses and the webhook's own.
    assert.deepEqual(
      mutating.matchConditions?.map((condition) => condition.name),
      ["in-scope-and-takes-the-default"],
    );
    assert.match(
      mutating.matchConditions?.[0]?.expression ?? "",
      /^\(has\(object\.spec\) && !has\(object\.spec\.podSecurityLevel\)\) && \(request\.operation == .CREATE. \|\|/,
    );
    assert.deepEqual(
      validating.matchConditions?.map((condition) => condition.name),
      ["in-scope-and-needs-the-webhook"],
    );
    for (const webhook of [validating, mutating]) {
      assert.equal(webhook.failurePolicy, "Fail");
      assert.equal(webhook.sideEffects, "None");
      assert.equal(webhook.timeoutSeconds, 5);
      const conditions = (webhook.matchConditions ?? []).map((c) => c.expression).join(" && ");
      assert.match(conditions, /request\.userInfo\.username != 'system:serviceaccount:myapp-system:myapp-operator'/);
      // kube-system's controllers are left alone but for a scale-up: the HPA controller's, for a tenant.
      assert.match(
        conditions,
        /\(has\(request\.subResource\) && request\.subResource == 'scale' && \(has\(object\.spec\.replicas\) \? object\.spec\.replicas : 0\) > .*\) \|\| \(!request\.userInfo\.username\.startsWith\('system:serviceaccount:kube-system:'\)/,
      );
      assert.match(conditions, /object\.spec != oldObject\.spec/);
    }
    // `kubectl scale` is judged too; defaults only apply to whole objects.
    assert.deepEqual(validating.rules?.[0]?.resources, ["myappinstances", "myappinstances/scale"]);
    assert.deepEqual(mutating.rules?.[0]?.resources, ["myappinstances"]);
    assert.deepEqual(validating.rules?.[0]?.operations, ["CREATE", "UPDATE"]);
    assert.deepEqual(webhookService(settings)?.spec?.ports, [
      { name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" },
    ]);
  });

  it("external: the URL, and flags that listen there with the URL's host in the certificate", () => {
    const settings = settingsFor({ operatorPlacement: "external", webhooks: { url: "https://127.0.0.1:19443" } });
    const built = operatorWebhookConfigurations(settings);
    assert.deepEqual(built?.validating.webhooks?.[0]?.clientConfig, { url: "https://127.0.0.1:19443/validate" });
    assert.deepEqual(built?.validating.webhooks?.[0]?.namespaceSelector, {
      matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system"] }],
    });
    assert.equal(webhookService(settings), undefined);
    const flags = operatorFlags(settings).filter((flag) => flag.startsWith("--webhook-"));
    assert.deepEqual(flags, [
      "--webhook-bind-address=127.0.0.1:19443",
      "--webhook-cert-secret=myapp-system/myapp-operator-webhook-cert",
      "--webhook-configuration=myapp-operator",
      "--webhook-hosts=127.0.0.1",
    ]);
  });

  it("call the validating webhook only where CEL cannot decide: a volume, chart or values, or a namespace with a budget", () => {
    const conditionsOf = (webhook: { matchConditions?: { name: string; expression: string }[] } | undefined) =>
      (webhook?.matchConditions ?? []).map((condition) => condition.name);
    const labelled = operatorWebhookConfigurations(settingsFor({ watchNamespaces: ["team-a"] }));
    const watched = { key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a"] };
    const webhooks = labelled?.validating.webhooks ?? [];
    assert.deepEqual(
      webhooks.map((webhook) => webhook.name),
      [
        "validate.myappinstances.example.com",
        "budget-1.myappinstances.example.com",
        "budget-2.myappinstances.example.com",
        "budget-3.myappinstances.example.com",
      ],
    );
    assert.deepEqual(conditionsOf(webhooks[0]), ["in-scope-and-needs-the-webhook"]);
    assert.match(
      webhooks[0]?.matchConditions?.at(-1)?.expression ?? "",
      /has\(object\.spec\.storage\).*has\(object\.spec\.chart\).*has\(object\.spec\.values\)/,
    );
    // Any of three labels as three disjoint selectors: a namespace with two budgets is still judged once.
    assert.deepEqual(
      webhooks.slice(1).map((webhook) => webhook.namespaceSelector?.matchExpressions),
      [
        [watched, { key: "myapp.example.com/max-instances", operator: "Exists" }],
        [
          watched,
          { key: "myapp.example.com/max-instances", operator: "DoesNotExist" },
          { key: "myapp.example.com/max-replicas", operator: "Exists" },
        ],
        [
          watched,
          { key: "myapp.example.com/max-instances", operator: "DoesNotExist" },
          { key: "myapp.example.com/max-replicas", operator: "DoesNotExist" },
          { key: "myapp.example.com/max-storage", operator: "Exists" },
        ],
      ],
    );
    for (const webhook of webhooks.slice(1)) {
      assert.deepEqual(conditionsOf(webhook), ["in-scope-and-needs-only-a-budget"]);
      assert.match(webhook.matchConditions?.[0]?.expression ?? "", /^\(!\(\(!has\(request\.subResource\)/);
      assert.deepEqual(webhook.rules?.[0]?.resources, ["myappinstances", "myappinstances/scale"]);
    }
    // A budget set by a flag applies everywhere: one budget webhook over every judged namespace.
    const flagged = operatorWebhookConfigurations(
      settingsFor({ watchNamespaces: ["team-a"], policy: { namespaceBudget: { replicas: 10 } } }),
    );
    const budget = flagged?.validating.webhooks?.[1];
    assert.equal(flagged?.validating.webhooks?.length, 2);
    assert.equal(budget?.name, "budget.myappinstances.example.com");
    assert.deepEqual(budget?.namespaceSelector, { matchExpressions: [watched] });
  });

  it("point at the paths the operator serves", () => {
    assert.deepEqual({ validate: validatePath, mutate: mutatePath }, admissionPaths);
  });

  it("off: no configurations, Service or flags", () => {
    const settings = settingsFor({ webhooks: { enabled: false } });
    assert.equal(operatorWebhookConfigurations(settings), undefined);
    assert.equal(webhookService(settings), undefined);
    assert.ok(!operatorFlags(settings).some((flag) => flag.startsWith("--webhook-")));
  });
});
