/** `npm run operator` as the dev stack's ServiceAccount: the stack's flags fill in what the command line leaves out. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseOptions } from "../../../operator/options.ts";
import { argumentsToCheckFirst, serviceAccountArguments, setsFlag } from "../../../tools/lib/operator-arguments.ts";
import { devStackOperator } from "../../../tools/lib/operator-process.ts";

// The shape of the dev stack's `operatorFlags` output (components/operator-flags.ts externalOperatorFlags).
const identity = devStackOperator([
  "--namespaces=default",
  "--leader-elect",
  "--leader-election-namespace=myapp-system",
  "--leader-election-id=myapp-operator-leader",
  "--log-level=info",
  "--concurrency=2",
  "--max-replicas=3",
  "--webhook-bind-address=127.0.0.1:24443",
  "--webhook-cert-secret=myapp-system/myapp-operator-webhook-cert",
  "--webhook-configuration=myapp-operator",
  "--webhook-hosts=127.0.0.1",
]);
const asServiceAccount = (args: string[], env: NodeJS.ProcessEnv = {}, npmStartServes = false) =>
  parseOptions(serviceAccountArguments(args, env, identity, npmStartServes), env);

describe("serviceAccountArguments", () => {
  it("without arguments: the stack's namespace, Lease, webhook server and policy", () => {
    const options = asServiceAccount([]);
    assert.deepEqual(options.namespaces, ["default"]);
    assert.equal(options.leaderElect, true);
    assert.equal(options.leaderElectionNamespace, "myapp-system");
    assert.equal(options.leaderElectionId, "myapp-operator-leader");
    assert.deepEqual(options.webhook?.address, { host: "127.0.0.1", port: 24443 });
    assert.deepEqual(options.webhook?.hosts, ["127.0.0.1"]);
    assert.equal(options.policy.maxReplicas, 3);
  });

  it("a flag the command line sets keeps its value, as --x=v or --x v, for every group of the stack's flags", () => {
    for (const form of [
      (flag: string, value: string) => [`${flag}=${value}`],
      (flag: string, value: string) => [flag, value],
    ]) {
      // GIVEN a Lease id, webhook hosts, a limit and namespaces of the user's own
      const options = asServiceAccount([
        ...form("--leader-election-id", "mine"),
        ...form("--webhook-hosts", "myhost.example"),
        ...form("--max-replicas", "7"),
        ...form("--namespaces", "shop"),
      ]);
      // THEN they win; the stack's flags fill in the rest
      assert.equal(options.leaderElectionId, "mine");
      assert.equal(options.leaderElectionNamespace, "myapp-system");
      assert.equal(options.leaderElect, true);
      assert.deepEqual(options.webhook?.hosts, ["myhost.example"]);
      assert.deepEqual(options.webhook?.address, { host: "127.0.0.1", port: 24443 });
      assert.equal(options.policy.maxReplicas, 7);
      assert.deepEqual(options.namespaces, ["shop"]);
    }
  });

  it("a MYAPP_* variable counts as set: the stack's flag would override it", () => {
    const env = { MYAPP_MAX_REPLICAS: "5", MYAPP_LEADER_ELECT: "false" };
    const options = asServiceAccount([], env);
    assert.equal(options.policy.maxReplicas, 5);
    assert.equal(options.leaderElect, false);
  });

  it("while npm start's operator serves the webhooks, none unless the command line gives an address", () => {
    assert.equal(asServiceAccount([], {}, true).webhook, undefined);
    const own = asServiceAccount(["--webhook-bind-address=127.0.0.1:0"], {}, true).webhook;
    assert.deepEqual(own?.address, { host: "127.0.0.1", port: 0 });
    assert.equal(own?.configuration, "myapp-operator");
    // The user's own webhook settings without a server of theirs are refused, not dropped.
    assert.throws(() => asServiceAccount(["--webhook-hosts=myhost.example"], {}, true), /only --webhook-bind-address/);
  });
});

describe("argumentsToCheckFirst", () => {
  it("checks webhook values before a token is minted, when the stack's bind address may yet come", () => {
    // GIVEN webhook flags without a bind address, in ServiceAccount mode: the stack adds its address later
    assert.doesNotThrow(() => parseOptions(argumentsToCheckFirst(["--webhook-hosts=myhost.example"], {}, true), {}));
    assert.throws(
      () => parseOptions(argumentsToCheckFirst(["--webhook-hosts=??"], {}, true), {}),
      /--webhook-hosts must be DNS names/,
    );
    // AND with credentials of the user's own, nothing adds one: refused at once
    assert.throws(
      () => parseOptions(argumentsToCheckFirst(["--webhook-hosts=myhost.example"], {}, false), {}),
      /--webhook-hosts configures the admission webhook server/,
    );
    assert.deepEqual(argumentsToCheckFirst(["--concurrency=3"], {}, true), ["--concurrency=3"]);
  });
});

describe("setsFlag", () => {
  it("matches a flag by its whole name, in both forms, and by the operator's variable for it", () => {
    assert.ok(setsFlag(["--helm", "/x"], {}, "--helm"));
    assert.ok(setsFlag(["--helm=/x"], {}, "--helm=helm"));
    assert.ok(!setsFlag(["--helmet=/x"], {}, "--helm"));
    assert.ok(setsFlag([], { MYAPP_HELM: "/x" }, "--helm"));
    // --leader-election-id has no variable: MYAPP_LEADER_ELECTION_ID means nothing to the operator.
    assert.ok(!setsFlag([], { MYAPP_LEADER_ELECTION_ID: "x" }, "--leader-election-id"));
  });
});
