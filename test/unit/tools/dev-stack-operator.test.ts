/** `npm start`'s operator runs with the flags the dev stack's platform gives it, and is restarted when they change. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  checkoutWebhookPort,
  devStackOperator,
  flagChanges,
  localWebhookUrl,
  restartReason,
} from "../../../tools/lib/operator-process.ts";

test("the dev stack's operatorFlags become the operator's namespaces and flags", () => {
  const identity = devStackOperator([
    "--namespaces=default,shop",
    "--leader-elect",
    "--max-replicas=3",
    "--webhook-bind-address=127.0.0.1:9443",
  ]);
  assert.deepEqual(identity.watchNamespaces, ["default", "shop"]);
  assert.deepEqual(identity.flags, ["--leader-elect", "--max-replicas=3", "--webhook-bind-address=127.0.0.1:9443"]);
  assert.deepEqual(identity.webhookFlags, ["--webhook-bind-address=127.0.0.1:9443"]);
  assert.deepEqual(identity.leaderElectionFlags, ["--leader-elect"]);
  // Without a stack yet: what stacks/index.ts declares unchanged.
  const initial = devStackOperator();
  assert.deepEqual(initial.watchNamespaces, ["default"]);
  const port = new URL(localWebhookUrl).port;
  assert.ok(initial.flags?.includes(`--webhook-bind-address=127.0.0.1:${port}`), initial.flags?.join(" "));
});

test("each checkout serves its dev stack's webhooks on a port of its own, below the ephemeral range", () => {
  const ports = ["/work/main", "/tmp/clone", "/home/me/myapp", "/home/me/myapp2"].map(checkoutWebhookPort);
  assert.equal(new Set(ports).size, ports.length);
  for (const port of ports) assert.ok(port >= 20_000 && port < 30_000, String(port));
  assert.equal(checkoutWebhookPort("/work/main"), ports[0], "the same checkout, the same port");
});

test("flagChanges names what was added and removed, and nothing when the same", () => {
  const before = devStackOperator(["--namespaces=default", "--leader-elect", "--max-replicas=3"]);
  const started = { watchNamespaces: before.watchNamespaces, flags: before.flags ?? [] };
  assert.equal(flagChanges(started, before), undefined);
  const after = devStackOperator(["--namespaces=default,shop", "--leader-elect", "--namespace-max-instances=3"]);
  assert.equal(
    flagChanges(started, after),
    "added --namespace-max-instances=3 --namespaces=default,shop; removed --max-replicas=3 --namespaces=default",
  );
  // A record from before flags were recorded: restarted once.
  assert.ok(flagChanges(undefined, before));
});

test("a running operator is restarted when the stack's flags changed or its token is refused, else kept", () => {
  // GIVEN an operator of this cluster whose ServiceAccount a destroy deleted (its token is now refused)
  // WHEN npm start decides whether to keep it
  // THEN it is restarted, saying why; a flag change says that first; with neither it is kept
  assert.equal(
    restartReason(undefined, "Unauthorized"),
    "its ServiceAccount's token cannot list MyAppInstances (Unauthorized)",
  );
  assert.equal(
    restartReason("added --max-replicas=3", undefined),
    "the dev stack's platform changed (added --max-replicas=3)",
  );
  assert.equal(restartReason(undefined, undefined), undefined);
});
