/**
 * The instance rights the platform adds to Kubernetes' default roles (components/tenant-roles.ts): a team given
 * `edit` or `admin` in its namespace manages its instances there, `view` reads them, and none of them may write an
 * instance's status, which is the operator's word.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { tenantClusterRoles } from "../../../components/tenant-roles.ts";
import { resolveSettings, type MyAppOperatorArgs } from "../../../components/settings.ts";

function settingsFor(args: MyAppOperatorArgs = {}) {
  const result = resolveSettings("shop-platform", { operatorPlacement: "external", ...args });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.settings;
}

describe("tenantClusterRoles", () => {
  it("aggregate instance rights to admin and edit, reads to view, and never the status to anyone", () => {
    const [edit, view] = tenantClusterRoles(settingsFor());
    assert.equal(edit?.metadata?.name, "shop-platform-tenant-edit");
    assert.equal(edit?.metadata?.labels?.["rbac.authorization.k8s.io/aggregate-to-edit"], "true");
    assert.equal(edit?.metadata?.labels?.["rbac.authorization.k8s.io/aggregate-to-admin"], "true");
    assert.equal(edit?.metadata?.labels?.["rbac.authorization.k8s.io/aggregate-to-view"], undefined);
    assert.deepEqual(edit?.rules, [
      {
        apiGroups: ["example.com"],
        resources: ["myappinstances"],
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      },
      { apiGroups: ["example.com"], resources: ["myappinstances/scale"], verbs: ["get", "patch", "update"] },
    ]);
    assert.equal(view?.metadata?.name, "shop-platform-tenant-view");
    assert.equal(view?.metadata?.labels?.["rbac.authorization.k8s.io/aggregate-to-view"], "true");
    assert.deepEqual(view?.rules, [
      {
        apiGroups: ["example.com"],
        resources: ["myappinstances", "myappinstances/scale", "myappinstances/status"],
        verbs: ["get", "list", "watch"],
      },
    ]);
    // Status may be read by viewers, written by no tenant role
    for (const role of [edit, view]) {
      for (const rule of role?.rules ?? []) {
        const resources = (rule.resources ?? []) as string[];
        const verbs = (rule.verbs ?? []) as string[];
        if (resources.includes("myappinstances/status")) assert.deepEqual(verbs, ["get", "list", "watch"]);
      }
    }
  });

  it("are left out when the platform grants instance rights itself", () => {
    assert.deepEqual(tenantClusterRoles(settingsFor({ tenantRoles: false })), []);
  });
});
