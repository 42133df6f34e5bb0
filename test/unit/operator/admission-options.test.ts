/**
 * The operator's flags for the platform policy and the admission webhook: defaults, environment fallbacks, and
 * errors that name the flag and what it takes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { externalOperatorFlags, operatorFlags } from "../../../components/operator-flags.ts";
import { resolveSettings, type MyAppOperatorArgs } from "../../../components/settings.ts";
import { parseOptions, usage } from "../../../operator/options.ts";

describe("platform policy flags", () => {
  it("defaults: no limit, any registry, no webhook server", () => {
    const options = parseOptions([], {});
    assert.deepEqual(options.policy, {
      allowedRegistries: [],
      maxReplicas: undefined,
      maxStorage: undefined,
      namespaceBudget: {},
      requireExpandableStorage: false,
      maxValuesKiB: 128,
      chartSources: [],
    });
    assert.equal(options.webhook, undefined);
  });

  it("reads every flag, normalising registries as Docker does", () => {
    const options = parseOptions(
      [
        "--allowed-registries=docker.io/library, GHCR.io/acme/ ,index.docker.io/team,localhost:5000",
        "--max-replicas=10",
        "--max-storage=100Gi",
        "--namespace-max-instances=5",
        "--namespace-max-replicas=20",
        "--namespace-max-storage=1Ti",
        "--require-expandable-storage",
        "--chart-sources=oci://ghcr.io/acme/",
        '--default-chart={"repo":"https://charts.example.com/","name":"web","version":"1.0.0"}',
      ],
      {},
    );
    assert.deepEqual(options.policy, {
      allowedRegistries: ["docker.io/library", "ghcr.io/acme", "docker.io/team", "localhost:5000"],
      maxReplicas: 10,
      maxStorage: "100Gi",
      namespaceBudget: { instances: 5, replicas: 20, storage: "1Ti" },
      requireExpandableStorage: true,
      maxValuesKiB: 128,
      // The platform's own default chart is allowed, as the chart engine allows it (chart-wiring.ts).
      chartSources: ["oci://ghcr.io/acme/", "https://charts.example.com/"],
      // ... in every namespace, whatever its chart-sources annotation says.
      defaultChart: { repo: "https://charts.example.com/", name: "web", version: "1.0.0" },
    });
    assert.deepEqual(options.chartSources, ["oci://ghcr.io/acme/"]);
  });

  it("falls back to MYAPP_* variables; flags win", () => {
    const env = {
      MYAPP_ALLOWED_REGISTRIES: "ghcr.io/acme",
      MYAPP_MAX_REPLICAS: "3",
      MYAPP_MAX_STORAGE: "10Gi",
      MYAPP_NAMESPACE_MAX_INSTANCES: "2",
      MYAPP_NAMESPACE_MAX_REPLICAS: "6",
      MYAPP_NAMESPACE_MAX_STORAGE: "50Gi",
      MYAPP_REQUIRE_EXPANDABLE_STORAGE: "true",
    };
    const fromEnv = parseOptions([], env).policy;
    assert.deepEqual(fromEnv.allowedRegistries, ["ghcr.io/acme"]);
    assert.equal(fromEnv.maxReplicas, 3);
    assert.equal(fromEnv.maxStorage, "10Gi");
    assert.deepEqual(fromEnv.namespaceBudget, { instances: 2, replicas: 6, storage: "50Gi" });
    assert.equal(fromEnv.requireExpandableStorage, true);
    const fromFlags = parseOptions(["--max-replicas=4", "--allowed-registries=quay.io"], env).policy;
    assert.equal(fromFlags.maxReplicas, 4);
    assert.deepEqual(fromFlags.allowedRegistries, ["quay.io"]);
  });

  it("bad values name the flag and what is allowed", () => {
    assert.throws(() => parseOptions(["--max-replicas=0"], {}), /--max-replicas must be a positive integer, got "0"/);
    assert.throws(
      () => parseOptions(["--namespace-max-instances=two"], {}),
      /--namespace-max-instances must be a positive integer/,
    );
    assert.throws(
      () => parseOptions(["--max-storage=lots"], {}),
      /--max-storage must be a storage quantity of at least 1 byte such as 100Gi/,
    );
    assert.throws(() => parseOptions(["--namespace-max-storage=0"], {}), /--namespace-max-storage must be a storage/);
    assert.throws(
      () => parseOptions(["--allowed-registries=acme"], {}),
      /--allowed-registries: "acme" does not start with a registry host .*docker\.io\/acme/,
    );
    assert.throws(
      () => parseOptions(["--allowed-registries=ghcr.io/acme:1.0"], {}),
      /--allowed-registries: "ghcr.io\/acme:1.0" must be a registry and path prefix, without tag or digest/,
    );
    assert.throws(
      () => parseOptions(["--allowed-registries=ghcr.io/Acme"], {}),
      /--allowed-registries: "ghcr.io\/Acme" is not host\[:port\]\[\/path\] with a lower-case path/,
    );
  });

  it("the usage names every policy and webhook flag", () => {
    for (const flag of [
      "--allowed-registries",
      "--max-replicas",
      "--max-storage",
      "--namespace-max-instances",
      "--namespace-max-replicas",
      "--namespace-max-storage",
      "--require-expandable-storage",
      "--webhook-bind-address",
      "--webhook-cert-secret",
      "--webhook-configuration",
      "--webhook-hosts",
      "--webhook-cert-validity",
    ]) {
      assert.match(usage, new RegExp(`${flag}[=\\s]`));
    }
  });
});

describe("webhook flags", () => {
  it("a bind address turns the server on, with defaults for the rest", () => {
    const options = parseOptions(["--webhook-bind-address=:9443"], { POD_NAMESPACE: "myapp-system" });
    assert.deepEqual(options.webhook, {
      address: { host: "0.0.0.0", port: 9443 },
      certSecret: { namespace: "myapp-system", name: "myapp-operator-webhook-cert" },
      configuration: "myapp-operator",
      hosts: ["localhost", "127.0.0.1"],
      certValidityMs: 2160 * 3_600_000,
      defaults: "webhook",
      certIssuer: "operator",
    });
    assert.deepEqual(parseOptions(["--webhook-bind-address=:9443"], {}).webhook?.certSecret, {
      namespace: "default",
      name: "myapp-operator-webhook-cert",
    });
  });

  it("reads every webhook flag, and the MYAPP_* variables", () => {
    const flags = [
      "--webhook-bind-address=127.0.0.1:0",
      "--webhook-cert-secret=ops/hook-tls",
      "--webhook-configuration=myapp-operator-test",
      "--webhook-hosts=myapp-operator-webhook.myapp-system.svc, 10.0.0.7,::1",
      "--webhook-cert-validity=1h30m",
      "--webhook-defaults=policy",
      "--webhook-cert-issuer=external",
    ];
    assert.deepEqual(parseOptions(flags, {}).webhook, {
      address: { host: "127.0.0.1", port: 0 },
      certSecret: { namespace: "ops", name: "hook-tls" },
      configuration: "myapp-operator-test",
      hosts: ["myapp-operator-webhook.myapp-system.svc", "10.0.0.7", "::1"],
      certValidityMs: 90 * 60_000,
      defaults: "policy",
      certIssuer: "external",
    });
    const env = {
      MYAPP_WEBHOOK_BIND_ADDRESS: ":8443",
      MYAPP_WEBHOOK_CERT_SECRET: "a/b",
      MYAPP_WEBHOOK_CONFIGURATION: "c",
      MYAPP_WEBHOOK_HOSTS: "d.svc",
      MYAPP_WEBHOOK_CERT_VALIDITY: "60s",
      MYAPP_WEBHOOK_DEFAULTS: "webhook",
      MYAPP_WEBHOOK_CERT_ISSUER: "operator",
    };
    assert.deepEqual(parseOptions([], env).webhook, {
      address: { host: "0.0.0.0", port: 8443 },
      certSecret: { namespace: "a", name: "b" },
      configuration: "c",
      hosts: ["d.svc"],
      certValidityMs: 60_000,
      defaults: "webhook",
      certIssuer: "operator",
    });
  });

  it("bad values name the flag and what is allowed", () => {
    const on = "--webhook-bind-address=:9443";
    assert.throws(
      () => parseOptions(["--webhook-bind-address=9443x"], {}),
      /--webhook-bind-address must be \[host\]:port/,
    );
    assert.throws(
      () => parseOptions([on, "--webhook-cert-issuer=vault"], {}),
      /--webhook-cert-issuer must be operator or external, got "vault"/,
    );
    assert.throws(
      () => parseOptions([on, "--webhook-defaults=cel"], {}),
      /--webhook-defaults must be webhook or policy, got "cel"/,
    );
    assert.throws(
      () => parseOptions([on, "--webhook-cert-secret=nope"], {}),
      /--webhook-cert-secret must be NAMESPACE\/NAME/,
    );
    assert.throws(
      () => parseOptions([on, "--webhook-cert-secret=A/b"], {}),
      /--webhook-cert-secret must be NAMESPACE\/NAME/,
    );
    assert.throws(
      () => parseOptions([on, "--webhook-hosts=,"], {}),
      /--webhook-hosts must be DNS names or IP addresses/,
    );
    assert.throws(() => parseOptions([on, "--webhook-hosts=bad_host"], {}), /--webhook-hosts must be DNS names/);
    assert.throws(
      () => parseOptions([on, "--webhook-configuration=Hooks"], {}),
      /--webhook-configuration must be a lower-case DNS name/,
    );
    assert.throws(
      () => parseOptions(["--webhook-bind-address=  "], {}),
      /^Error: --webhook-bind-address must be \[host\]:port .*, got " {2}"$/,
    );
    assert.throws(
      () => parseOptions([], { MYAPP_WEBHOOK_BIND_ADDRESS: "" }),
      /^Error: MYAPP_WEBHOOK_BIND_ADDRESS \(--webhook-bind-address\) must be \[host\]:port/,
    );
    assert.throws(
      () => parseOptions([on, "--health-probe-bind-address=127.0.0.1:9443"], {}),
      /^Error: --webhook-bind-address ":9443" would listen on the port of --health-probe-bind-address "127\.0\.0\.1:9443": give the webhook server a port of its own$/,
    );
    for (const validity of ["90", "0s", "500ms", "1d", "h", "1h 2m"]) {
      assert.throws(
        () => parseOptions([on, `--webhook-cert-validity=${validity}`], {}),
        /--webhook-cert-validity must be a duration of at least 1s such as 2160h/,
        validity,
      );
    }
  });
  it("are checked without --webhook-bind-address too, and refused there: no server would use them", () => {
    // GIVEN webhook flags without a bind address (a typo, or a forgotten flag)
    // THEN a bad value says what is allowed, as with a server
    assert.throws(
      () => parseOptions(["--webhook-defaults=polcy"], {}),
      /^Error: --webhook-defaults must be webhook or policy, got "polcy"$/,
    );
    assert.throws(() => parseOptions(["--webhook-hosts=??"], {}), /^Error: --webhook-hosts must be DNS names/);
    // AND a good one is refused, naming it and the flag that starts the server
    assert.throws(
      () => parseOptions(["--webhook-cert-issuer=external"], {}),
      /^Error: --webhook-cert-issuer configures the admission webhook server, which only --webhook-bind-address starts: set it \(such as --webhook-bind-address=:9443\) or leave that setting out$/,
    );
    assert.throws(
      () => parseOptions(["--webhook-hosts=a.example"], { MYAPP_WEBHOOK_DEFAULTS: "policy" }),
      /^Error: --webhook-hosts, MYAPP_WEBHOOK_DEFAULTS \(--webhook-defaults\) configure the admission webhook server/,
    );
    // AND with one, from the flag or its variable, they are used
    assert.equal(
      parseOptions(["--webhook-cert-issuer=external"], { MYAPP_WEBHOOK_BIND_ADDRESS: ":9443" }).webhook?.certIssuer,
      "external",
    );
  });
});

describe("the flags the MyAppOperator component gives its operator", () => {
  it("parse as they are, in every placement the component has", () => {
    const full: MyAppOperatorArgs = {
      image: "registry.example.com/myapp-operator:1.0.0",
      replicas: 3,
      watchNamespaces: ["team-a", "team-b"],
      concurrency: 100,
      maxConcurrentRenders: 32,
      renderLimits: { memoryMiB: 512, timeoutSeconds: 120 },
      resources: { limits: { memory: "32Gi" } },
      chartSources: ["oci://ghcr.io/acme/"],
      policy: { allowedRegistries: ["ghcr.io/acme"], maxReplicas: 5, requireExpandableStorage: true },
      webhooks: { defaults: "policy", certManager: { issuer: "ca-issuer" } },
    };
    const external: MyAppOperatorArgs = {
      operatorPlacement: "external",
      webhooks: { url: "https://127.0.0.1:9443" },
      policy: { maxReplicas: 2 },
    };
    for (const [what, args] of Object.entries({ full, external, minimal: { image: "r.example/o:1" } })) {
      const settings = resolveSettings("myapp-operator", args);
      assert.ok(settings.ok, what);
      const flagSets = [operatorFlags(settings.settings), externalOperatorFlags(settings.settings) ?? []];
      for (const flags of flagSets) assert.doesNotThrow(() => parseOptions(flags, {}), `${what}: ${flags.join(" ")}`);
    }
  });
});
