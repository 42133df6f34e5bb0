/**
 * `pulumi up` of an instance that no operator serves (an external placement nobody started, an in-cluster operator
 * whose image never runs): the wait says what to check within seconds, instead of printing the same line until its
 * timeout. Real pulumi CLI, the local cluster, a namespace no operator watches.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { operatorSilenceMs } from "../../provider/waiting/readiness.ts";
import { repoRoot } from "../../tools/lib/paths.ts";
import { adminClient, testNamespace } from "../support/cluster.ts";
import { ensureCrd } from "../support/operator.ts";
import { pulumiProject } from "../support/pulumi-cli.ts";

const client = adminClient();
/** Longer than the silence before the hint, far shorter than a default wait. */
const timeoutSeconds = operatorSilenceMs / 1000 + 15;

test("with no operator, pulumi up says within seconds that none has acted, then fails at its timeout", async (t) => {
  await ensureCrd(client);
  const namespace = await testNamespace(t, client, "no-operator");
  const program = `import { MyAppInstance } from ${JSON.stringify(path.join(repoRoot, "provider/index.ts"))};
new MyAppInstance("lonely", { namespace: ${JSON.stringify(namespace)}, image: "nginx:1.27", timeoutSeconds: ${timeoutSeconds} });
`;
  const project = await pulumiProject(t, "no-operator", program);
  const up = await project.pulumi("up", "--yes", "--skip-preview", "--non-interactive", "--stack", project.stackName);
  assert.equal(up.ok, false, up.output);
  assert.match(
    up.output,
    /lonely \(no-operator-[^)]*\): waiting for the operator to act on generation 1; no operator has acted on it yet: is one running/,
  );
  assert.match(up.output, /npx --no-install myapp-operator/);
  assert.match(up.output, new RegExp(`did not become Ready within ${timeoutSeconds}s`));
});
