import assert from "node:assert/strict";
import { defaultChartKinds } from "../../../api/index.ts";
import { chartKindRules } from "../../../components/chart-kinds.ts";
import { describe, it } from "node:test";
import {
  clusterScopedRules,
  clusterWideRules,
  leaderElectionRules,
  secureMetricsRules,
  watchedNamespaceRules,
  type OperatorRule,
} from "../../../components/rbac-rules.ts";
import { operatorRbac, policyRules } from "../../../components/rbac-objects.ts";
import { webhookClusterRules } from "../../../components/webhooks.ts";
import { settingsFor } from "./settings-fixture.ts";

/** "group/resource verb" for every grant, for readable comparisons. */
function grants(rules: readonly OperatorRule[]): string[] {
  return rules
    .flatMap((rule) =>
      rule.apiGroups.flatMap((group) =>
        rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group || "core"}/${resource} ${verb}`)),
      ),
    )
    .sort();
}

describe("the operator's rules (rbac-rules.ts)", () => {
  it("grant only what the operator uses: no update where it patches, no watch where it does not watch", () => {
    // The integration test (test/integration/least-privilege.test.ts) proves this list against the requests of a
    // real operator process; here it is pinned so a change shows up in review.
    assert.deepEqual(grants(clusterWideRules()), [
      "apps/deployments create",
      "apps/deployments delete",
      "apps/deployments get",
      "apps/deployments list",
      "apps/deployments patch",
      "apps/deployments watch",
      "apps/statefulsets create",
      "apps/statefulsets delete",
      "apps/statefulsets get",
      "apps/statefulsets list",
      "apps/statefulsets patch",
      "apps/statefulsets watch",
      "core/events list",
      "core/persistentvolumeclaims delete",
      "core/persistentvolumeclaims list",
      "core/persistentvolumeclaims patch",
      "core/persistentvolumeclaims watch",
      "core/services create",
      "core/services delete",
      "core/services get",
      "core/services list",
      "core/services patch",
      "core/services watch",
      "events.k8s.io/events create",
      "events.k8s.io/events patch",
      "example.com/myappinstances list",
      "example.com/myappinstances patch",
      "example.com/myappinstances watch",
      "example.com/myappinstances/finalizers update",
      "example.com/myappinstances/status patch",
      "storage.k8s.io/storageclasses get",
      "storage.k8s.io/storageclasses list",
    ]);
    assert.deepEqual(grants(leaderElectionRules("op-leader")), [
      "coordination.k8s.io/leases create",
      "coordination.k8s.io/leases get",
      "coordination.k8s.io/leases update",
    ]);
    // --metrics-secure asks the apiserver about each scrape's token; nothing else.
    assert.deepEqual(grants(secureMetricsRules), [
      "authentication.k8s.io/tokenreviews create",
      "authorization.k8s.io/subjectaccessreviews create",
    ]);
  });

  it("limit reading and renewing Leases to the operator's own Lease", () => {
    const rules = leaderElectionRules("op-leader");
    for (const rule of rules) {
      if (rule.verbs.some((verb) => verb !== "create")) assert.deepEqual(rule.resourceNames, ["op-leader"]);
    }
  });

  it("never use wildcards, and never touch secrets, pods or configmaps", () => {
    const all = [...clusterWideRules(), ...leaderElectionRules("op-leader"), ...secureMetricsRules];
    for (const rule of all) {
      for (const field of [rule.apiGroups, rule.resources, rule.verbs]) assert.ok(!field.includes("*"), "wildcard");
      for (const resource of ["secrets", "pods", "configmaps"]) assert.ok(!rule.resources.includes(resource), resource);
    }
  });
});

describe("operatorRbac", () => {
  it("cluster-wide: one ClusterRole with every rule, bound to the ServiceAccount; no Roles", () => {
    // GIVEN no watched namespaces WHEN built
    const rbac = operatorRbac(settingsFor());
    // THEN (in-cluster, so with the secure-metrics reviews)
    assert.deepEqual(
      rbac.clusterRole.rules,
      policyRules([
        ...clusterWideRules(),
        ...chartKindRules(defaultChartKinds),
        ...secureMetricsRules,
        ...webhookClusterRules("myapp-operator", [], "webhook"),
      ]),
    );
    assert.deepEqual(rbac.clusterRoleBinding.roleRef, {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: rbac.clusterRole.metadata?.name,
    });
    assert.deepEqual(rbac.clusterRoleBinding.subjects, [
      { kind: "ServiceAccount", name: "myapp-operator", namespace: "myapp-system" },
    ]);
    assert.deepEqual(rbac.watchedNamespaceGrants, []);
    assert.equal(rbac.leaderElection, undefined, "one in-cluster replica does not elect a leader");
  });

  it("namespaced: a Role per watched namespace, and a ClusterRole with only the cluster-scoped reads", () => {
    // GIVEN two watched namespaces and leader election
    const rbac = operatorRbac(settingsFor({ watchNamespaces: ["team-a", "team-b"], replicas: 2 }));
    // THEN
    assert.deepEqual(
      rbac.clusterRole.rules,
      policyRules([
        ...clusterScopedRules,
        ...secureMetricsRules,
        ...webhookClusterRules("myapp-operator", ["team-a", "team-b"], "webhook"),
      ]),
    );
    // ...the namespaces it reads are only the watched ones
    assert.deepEqual(rbac.clusterRole.rules?.at(-1), {
      apiGroups: [""],
      resources: ["namespaces"],
      resourceNames: ["team-a", "team-b"],
      verbs: ["get"],
    });
    assert.deepEqual(
      rbac.watchedNamespaceGrants.map((grant) => [grant.namespace, grant.role.metadata?.namespace, grant.role.rules]),
      [
        ["team-a", "team-a", policyRules([...watchedNamespaceRules, ...chartKindRules(defaultChartKinds)])],
        ["team-b", "team-b", policyRules([...watchedNamespaceRules, ...chartKindRules(defaultChartKinds)])],
      ],
    );
    for (const grant of rbac.watchedNamespaceGrants) {
      assert.deepEqual(grant.binding.roleRef, {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: grant.role.metadata?.name,
      });
      assert.equal(grant.binding.metadata?.namespace, grant.namespace);
    }
    assert.equal(rbac.leaderElection?.namespace, "myapp-system");
    assert.deepEqual(rbac.leaderElection?.role.rules, policyRules(leaderElectionRules("myapp-operator-leader")));
    assert.equal(rbac.webhookCertificate?.namespace, "myapp-system");
    assert.deepEqual(rbac.webhookCertificate?.role.rules, [
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: ["myapp-operator-webhook-cert"],
        verbs: ["get", "patch"],
      },
    ]);
  });

  it("without webhooks: no certificate Role, no webhook or namespace rules", () => {
    const rbac = operatorRbac(settingsFor({ webhooks: { enabled: false } }));
    assert.equal(rbac.webhookCertificate, undefined);
    const resources = rbac.clusterRole.rules?.flatMap((rule) => rule.resources ?? []) ?? [];
    for (const resource of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations", "namespaces"]) {
      assert.ok(!resources.includes(resource), resource);
    }
  });

  it("without webhooks but with remote chart sources: get on the watched Namespaces, for their chart-sources annotation", () => {
    const namespaceRules = (args: Parameters<typeof settingsFor>[0]) =>
      operatorRbac(settingsFor({ webhooks: { enabled: false }, ...args })).clusterRole.rules?.filter((rule) =>
        rule.resources?.includes("namespaces"),
      );
    assert.deepEqual(namespaceRules({ chartSources: ["oci://ghcr.io/acme/"] }), [
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get"] },
    ]);
    assert.deepEqual(namespaceRules({ chartSources: ["oci://ghcr.io/acme/"], watchNamespaces: ["team-a"] }), [
      { apiGroups: [""], resources: ["namespaces"], resourceNames: ["team-a"], verbs: ["get"] },
    ]);
  });

  it("grants opted-in chart kinds in a Role per watched namespace only, and cluster-wide only when watching all", () => {
    // GIVEN a platform that opts into Secrets, ConfigMaps and Ingresses for charts
    const chartKinds = [
      "apps/v1/Deployment",
      "v1/Service",
      "v1/ConfigMap",
      "v1/Secret",
      "networking.k8s.io/v1/Ingress",
    ];
    const wider = ["core/configmaps patch", "core/secrets create", "networking.k8s.io/ingresses patch"];
    // WHEN it watches two namespaces
    const namespaced = operatorRbac(settingsFor({ watchNamespaces: ["team-a", "team-b"], chartKinds }));
    // THEN the wider kinds are granted in those namespaces' Roles, and the ClusterRole grants none of them
    const clusterWide = grants(namespaced.clusterRole.rules as OperatorRule[]);
    for (const grant of wider) assert.ok(!clusterWide.includes(grant), `not cluster-wide: ${grant}`);
    assert.deepEqual(
      namespaced.watchedNamespaceGrants.map((grant) => grant.namespace),
      ["team-a", "team-b"],
    );
    for (const { role } of namespaced.watchedNamespaceGrants) {
      const inNamespace = grants(role.rules as OperatorRule[]);
      for (const grant of wider) assert.ok(inNamespace.includes(grant), `${role.metadata?.namespace}: ${grant}`);
      assert.ok(!inNamespace.includes("core/secrets get"), "Secrets stay write-only");
    }
    // AND WHEN it watches every namespace THEN (and only then) the ClusterRole carries them
    const all = grants(operatorRbac(settingsFor({ chartKinds })).clusterRole.rules as OperatorRule[]);
    for (const grant of wider) assert.ok(all.includes(grant), `cluster-wide: ${grant}`);
  });

  it("by default grants no chart kind beyond the built-in template's, in either mode", () => {
    for (const settings of [settingsFor(), settingsFor({ watchNamespaces: ["team-a"] })]) {
      const rbac = operatorRbac(settings);
      const everything = grants(
        [rbac.clusterRole, ...rbac.watchedNamespaceGrants.map((grant) => grant.role)].flatMap(
          (role) => role.rules as OperatorRule[],
        ),
      );
      const writes = everything.filter((line) => / (create|patch|update|delete)$/.test(line));
      for (const resource of ["configmaps", "secrets", "serviceaccounts", "ingresses", "poddisruptionbudgets"]) {
        assert.ok(!writes.some((line) => line.includes(`/${resource} `)), `${resource}: ${writes.join(", ")}`);
      }
      assert.ok(everything.includes("core/configmaps get"), "the chart source's ConfigMap is read");
    }
  });

  it("grants the Lease to an external operator, whose flags it does not control", () => {
    const rbac = operatorRbac(settingsFor({ operatorPlacement: "external" }));
    assert.equal(rbac.leaderElection?.role.metadata?.namespace, "myapp-system");
  });

  it("grants the token and access reviews of --metrics-secure only to an in-cluster operator", () => {
    const external = operatorRbac(settingsFor({ operatorPlacement: "external", watchNamespaces: ["a"] }));
    assert.deepEqual(external.clusterRole.rules, policyRules(clusterScopedRules));
  });

  it("returns copies: changing a built Role cannot change the shared definition", () => {
    const rbac = operatorRbac(settingsFor());
    rbac.clusterRole.rules?.[0]?.verbs.push("delete");
    assert.ok(!watchedNamespaceRules[0]?.verbs.includes("delete"));
  });
});
