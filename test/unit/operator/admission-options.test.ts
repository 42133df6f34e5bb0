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
      /--webhook-configuration must name the webhook configurations: at most 253 lower-case letters/,
    );
    assert.throws(
      () => parseOptions([on, "--webhook-configuration=hooks.-a"], {}),
      /--webhook-configuration must name the webhook configurations/,
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
  it("the certificate's validity is capped at 87600h, so that the CA's ten times that fits X.509's dates", () => {
    // GIVEN a validity the certificates could not be made with (the CA would end after the year 9999)
    // THEN the flag is refused at start, naming the cap, instead of the operator failing to make its certificates
    assert.throws(
      () => parseOptions(["--webhook-bind-address=:9443", "--webhook-cert-validity=100000000h"], {}),
      /^Error: --webhook-cert-validity must be a duration .*, and at most 87600h \(10 years: the CA lives 10 times as long\), got "100000000h"$/,
    );
    // AND the cap itself is taken, and said in the usage
    const longest = parseOptions(["--webhook-bind-address=:9443", "--webhook-cert-validity=87600h"], {});
    assert.equal(longest.webhook?.certValidityMs, 87_600 * 3_600_000);
    assert.match(usage, /--webhook-cert-validity=DURATION[^\n]*\n.*at most 87600h/);
  });

  it("binds an IPv6 address written in brackets, loopback included", () => {
    // GIVEN the address the MyAppOperator component gives for a webhook URL of https://[::1]:9443
    // THEN the server listens on ::1, where the apiserver calls (127.0.0.1 would leave its calls unanswered)
    assert.deepEqual(parseOptions(["--webhook-bind-address=[::1]:9443"], {}).webhook?.address, {
      host: "::1",
      port: 9443,
    });
    assert.deepEqual(parseOptions(["--webhook-bind-address=[::]:9443"], {}).webhook?.address, {
      host: "::",
      port: 9443,
    });
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

  it("numbers: what the component takes the operator takes, up to the largest safe integer; beyond, neither", () => {
    // GIVEN the largest number the operator's flags take, and numbers past it (written 1e+21, or rounded)
    const largest = Number.MAX_SAFE_INTEGER;
    const external = { operatorPlacement: "external", webhooks: { url: "https://127.0.0.1:9443" } } as const;
    const settings = resolveSettings("op", {
      ...external,
      policy: { maxReplicas: largest, namespaceBudget: { instances: largest, replicas: largest } },
    });
    assert.ok(settings.ok);
    // THEN the flags of the largest start the operator
    const options = parseOptions(externalOperatorFlags(settings.settings) ?? [], {});
    assert.equal(options.policy.maxReplicas, largest);
    assert.deepEqual(options.policy.namespaceBudget, { instances: largest, replicas: largest });
    // AND past it the component refuses, naming the field and the range, as the operator refuses the flag
    const refused = resolveSettings("op", {
      ...external,
      policy: { maxReplicas: 1e21, namespaceBudget: { instances: 2 ** 53 + 2 } },
    });
    assert.ok(!refused.ok);
    assert.deepEqual(refused.issues, [
      { field: "policy.maxReplicas", message: "1e+21 must be a whole number from 1 to 9007199254740991" },
      {
        field: "policy.namespaceBudget.instances",
        message: "9007199254740994 must be a whole number from 1 to 9007199254740991",
      },
    ]);
    assert.throws(() => parseOptions(["--max-replicas=1e+21"], {}), /--max-replicas must be a positive integer/);
    assert.throws(
      () => parseOptions(["--namespace-max-instances=9007199254740994"], {}),
      /--namespace-max-instances must be an integer from 1 to 9007199254740991/,
    );
  });

  it("an external operator's webhook URL: accepted only where the operator, started as told, can listen", () => {
    // GIVEN webhook URLs on the ports an external operator serves metrics (127.0.0.1:8080) and probes (:8081) on,
    // started with externalOperatorFlags, which leave those to the process
    const verdicts = ["127.0.0.1", "[::1]", "localhost", "webhook.example.com", "[fd00::1]"].flatMap((host) =>
      [8080, 8081, 9443].map((port) => {
        const url = `https://${host}:${port}`;
        const settings = resolveSettings("op", { operatorPlacement: "external", webhooks: { url } });
        return { url, settings };
      }),
    );
    // THEN what the component accepts, the operator starts with
    for (const { url, settings } of verdicts.filter((verdict) => verdict.settings.ok)) {
      assert.ok(settings.ok);
      assert.doesNotThrow(() => parseOptions(externalOperatorFlags(settings.settings) ?? [], {}), url);
    }
    // AND what it refuses is refused naming the clash: the operator would refuse to start
    assert.deepEqual(
      verdicts.filter((verdict) => !verdict.settings.ok).map((verdict) => verdict.url),
      [
        "https://127.0.0.1:8080",
        "https://127.0.0.1:8081",
        "https://[::1]:8081",
        "https://localhost:8080",
        "https://localhost:8081",
        "https://webhook.example.com:8080",
        "https://webhook.example.com:8081",
        "https://[fd00::1]:8080",
        "https://[fd00::1]:8081",
      ],
    );
    for (const bind of ["127.0.0.1:8080", "127.0.0.1:8081", "[::1]:8081", ":8080", "[::]:8080"]) {
      assert.throws(() => parseOptions([`--webhook-bind-address=${bind}`], {}), /would listen on the port of/, bind);
    }
  });

  it("list entries: a comma or a repeat is refused by the component, naming the entry, as the operator would", () => {
    // GIVEN entries with a comma (joined into one comma-separated flag, the operator would read two) and repeats
    const result = resolveSettings("op", {
      operatorPlacement: "external",
      webhooks: { url: "https://127.0.0.1:9443" },
      chartSources: ["oci://r.example.com/a,b/", "oci://r.example.com/c/", "oci://R.example.com/c"],
      chartKinds: ["apps/v1/Deployment", "v1/Service", "v1/Service"],
      chartServiceTypes: ["ClusterIP", "LoadBalancer,NodePort"],
      policy: { allowedRegistries: ["ghcr.io/acme", "ghcr.io/acme"] },
    });
    // THEN each is named by its index, with what to do
    assert.ok(!result.ok);
    assert.deepEqual(
      result.issues.map((issue) => issue.field),
      ["chartKinds[2]", "chartServiceTypes[1]", "policy.allowedRegistries[1]", "chartSources[0]", "chartSources[2]"],
    );
    assert.match(
      result.issues[3]?.message ?? "",
      /^"oci:\/\/r.example.com\/a,b\/" contains a comma, which separates the entries of the operator's --chart-sources; list each entry on its own$/,
    );
    // AND the operator refuses the same repeats in its flags
    for (const flag of [
      "--chart-kinds=v1/Service,v1/Service",
      "--chart-service-types=LoadBalancer,LoadBalancer",
      "--allowed-registries=ghcr.io/acme,ghcr.io/acme",
      "--chart-sources=oci://r.example.com/c/,oci://R.example.com/c",
    ]) {
      assert.throws(() => parseOptions([flag], {}), /is listed twice/, flag);
    }
  });
});
