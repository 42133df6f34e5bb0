import assert from "node:assert/strict";
import { test } from "node:test";
import { ForbiddenError, InvalidError, NotFoundError, ServerError, TransportError } from "../../../kube/index.ts";
import { interpret } from "../../../provider/server-check.ts";

const inputs = { namespace: "shop" };

const cases: { name: string; error: unknown; expected: ReturnType<typeof interpret> }[] = [
  {
    name: "a 422 with causes: one failure per field, named by input key",
    error: new InvalidError(422, 'MyAppInstance.example.com "web" is invalid', "Invalid", [
      { field: "spec.storage", message: "Forbidden: spec.storage may grow but not shrink: was 2Gi, now 1Gi" },
      { field: "spec.replicas", message: "Invalid value: -1: must be an integer from 0 to 2147483647" },
      { field: "metadata.name", message: 'Invalid value: "Web": a lowercase RFC 1123 subdomain' },
      { field: "metadata.labels", message: "Invalid value: too long" },
    ]),
    expected: {
      checked: true,
      failures: [
        { property: "storage", reason: "Forbidden: spec.storage may grow but not shrink: was 2Gi, now 1Gi" },
        { property: "replicas", reason: "Invalid value: -1: must be an integer from 0 to 2147483647" },
        { property: "name", reason: 'Invalid value: "Web": a lowercase RFC 1123 subdomain' },
        { property: "", reason: "metadata.labels: Invalid value: too long" },
      ],
    },
  },
  {
    name: "a 422 without causes: its message, for the whole resource",
    error: new InvalidError(422, "denied by policy no-latest-tag"),
    expected: { checked: true, failures: [{ property: "", reason: "denied by policy no-latest-tag" }] },
  },
  {
    name: "an admission 403 (a quota): a failure, as `pulumi up` would meet it",
    error: new ForbiddenError(403, 'myappinstances.example.com "extra" is forbidden: exceeded quota: q'),
    expected: {
      checked: true,
      failures: [{ property: "", reason: 'myappinstances.example.com "extra" is forbidden: exceeded quota: q' }],
    },
  },
  {
    name: "the platform webhook's 403: one failure per field it names, without repeating the field",
    error: new ForbiddenError(
      403,
      'admission webhook "validate.myappinstances.example.com" denied the request: spec.replicas: 7 is more than the platform allows per instance (at most 3, --max-replicas)',
      "Forbidden",
      [
        {
          field: "spec.replicas",
          message: "7 is more than the platform allows per instance (at most 3, --max-replicas)",
          reason: "FieldValueForbidden",
        },
      ],
    ),
    expected: {
      checked: true,
      failures: [
        { property: "replicas", reason: "7 is more than the platform allows per instance (at most 3, --max-replicas)" },
      ],
    },
  },
  {
    name: "the webhook's missing chart ConfigMap: a note, since the same stack may create it first",
    error: new InvalidError(422, "denied", "Invalid", [
      {
        field: "spec.chart.configMap",
        message: "ConfigMap shop/web-chart does not exist; create it before the instance",
        reason: "FieldValueNotFound",
      },
    ]),
    expected: {
      checked: false,
      note: "spec.chart.configMap: ConfigMap shop/web-chart does not exist; create it before the instance (if this stack creates it, the instance must depend on it)",
    },
  },
  {
    name: "an RBAC 403: not a verdict on the inputs",
    error: new ForbiddenError(
      403,
      'myappinstances.example.com "web" is forbidden: User "dev" cannot patch resource "myappinstances" in API group "example.com"',
    ),
    expected: {
      checked: false,
      note: 'not allowed to dry-run: myappinstances.example.com "web" is forbidden: User "dev" cannot patch resource "myappinstances" in API group "example.com"',
    },
  },
  {
    name: "404 for the namespace: it is created later in the same run",
    error: new NotFoundError(404, 'namespaces "shop" not found'),
    expected: { checked: false, note: "namespace shop does not exist yet" },
  },
  {
    name: "404 for the resource type: the CRD is not installed yet",
    error: new NotFoundError(404, "the server could not find the requested resource"),
    expected: { checked: false, note: "the CRD myappinstances.example.com is not installed yet" },
  },
  {
    name: "a 5xx: the apiserver could not judge",
    error: new ServerError(503, "etcdserver: leader changed"),
    expected: { checked: false, note: "the apiserver could not answer: etcdserver: leader changed" },
  },
  {
    name: "the defaults policy on a CRD made seconds ago: a note, since the same stack makes it",
    error: new ServerError(
      503,
      "Resource kind example.com/v1, Kind=MyAppInstance not found. There can be a delay between when " +
        "CustomResourceDefinitions are created and when they are available.",
    ),
    expected: {
      checked: false,
      note: "the apiserver's admission policies do not know example.com/v1, Kind=MyAppInstance yet (its CRD is new)",
    },
  },
  {
    name: "no connection",
    error: new TransportError(0, "PATCH /apis/example.com/v1/...: connect ECONNREFUSED 127.0.0.1:6443"),
    expected: {
      checked: false,
      unreachable: true,
      note: "the apiserver could not answer: PATCH /apis/example.com/v1/...: connect ECONNREFUSED 127.0.0.1:6443",
    },
  },
];

for (const c of cases) {
  test(`interpret: ${c.name}`, () => assert.deepEqual(interpret(c.error, inputs), c.expected));
}
