import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { labelValue, maxWorkloadNameLength, serviceName, shortHash, workloadName } from "../../../api/index.ts";

const dns1123Label = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const dns1035Label = /^[a-z](?:[-a-z0-9]*[a-z0-9])?$/;

describe("child names", () => {
  it("uses a short valid instance name as it is", () => {
    assert.equal(workloadName("web"), "web");
    assert.equal(serviceName("web"), "web");
    assert.equal(labelValue("web"), "web");
  });

  it("cuts a long name and appends a hash of the whole name", () => {
    // GIVEN a 70-character instance name (valid as an object name, too long for a label)
    const long = `payments-${"a".repeat(61)}`;

    // WHEN the child names are derived
    const workload = workloadName(long);
    const service = serviceName(long);

    // THEN they fit their limits, keep a readable prefix and end in the hash of the full name
    assert.equal(workload, `payments-${"a".repeat(34)}-${shortHash(long)}`);
    assert.equal(workload.length, maxWorkloadNameLength);
    assert.equal(service, `payments-${"a".repeat(45)}-${shortHash(long)}`);
    assert.equal(service.length, 63);
    assert.match(workload, dns1123Label);
    assert.match(service, dns1035Label);
  });

  it("gives two long names with the same prefix different children", () => {
    const a = `${"x".repeat(60)}-one`;
    const b = `${"x".repeat(60)}-two`;
    assert.notEqual(workloadName(a), workloadName(b));
    assert.notEqual(serviceName(a), serviceName(b));
    assert.notEqual(labelValue(a), labelValue(b));
  });

  it("is deterministic: SHA-256, so the same name gives the same children in every release", () => {
    assert.equal(shortHash("abc"), "ba7816bf", "the first 8 hex digits of sha256('abc')");
    const long = "z".repeat(80);
    assert.equal(workloadName(long), workloadName(long));
  });

  it("rewrites dots, which object names allow and DNS labels do not", () => {
    const name = workloadName("web.v2");
    assert.equal(name, `web-v2-${shortHash("web.v2")}`);
    assert.match(name, dns1123Label);
    assert.equal(labelValue("web.v2"), "web.v2", "label values may contain dots");
  });

  it("makes Service names start with a letter", () => {
    assert.equal(workloadName("1st-app"), "1st-app");
    assert.equal(serviceName("1st-app"), `x-1st-app-${shortHash("1st-app")}`);
    assert.match(serviceName("1st-app"), dns1035Label);
  });

  it("keeps long label values within 63 characters, alphanumeric at both ends", () => {
    const long = `${"b".repeat(53)}.-${"c".repeat(20)}`;
    const value = labelValue(long);
    assert.ok(value.length <= 63);
    assert.match(value, /^[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
    assert.equal(value, `${"b".repeat(53)}-${shortHash(long)}`);
  });
});
