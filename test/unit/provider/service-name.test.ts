import assert from "node:assert/strict";
import { test } from "node:test";
import { serviceName } from "../../../operator/desired/names.ts";
import { autoName } from "../../../provider/auto-name.ts";
import { serviceNameFor } from "../../../provider/service-name.ts";

// The provider keeps a copy of the operator's naming rule (it may not import operator/): they must agree, or the
// `serviceName` and `endpoint` outputs would name a Service that does not exist.
const names = [
  "web",
  "web-1a2b3c4d",
  "1st-app",
  "a.b.c",
  "x".repeat(63),
  "y".repeat(64),
  `${"long-name-".repeat(20)}end`,
  "9",
  autoName("Web_Frontend", "organization/shop/dev"),
];

for (const name of names) {
  test(`Service name of "${name.length > 30 ? `${name.slice(0, 30)}…` : name}" is the operator's`, () => {
    assert.equal(serviceNameFor(name), serviceName(name));
  });
}

test("an auto-name is used verbatim", () => {
  const name = autoName("web", "organization/shop/dev");
  assert.equal(serviceNameFor(name), name);
});
