/**
 * The addresses a chart fetch never reaches unless the platform lists the host: IPv4's private, loopback,
 * link-local and CGNAT ranges, and IPv6's, including IPv6 addresses that carry an IPv4 one (mapped, NAT64, 6to4),
 * which reach that IPv4 address.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isPrivateAddress } from "../../../chart/source-policy.ts";

test("private, loopback and link-local addresses are private, in every notation that reaches them", () => {
  const metadata = [
    "169.254.169.254",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "64:ff9b::a9fe:a9fe", // NAT64: reaches 169.254.169.254 on a NAT64 cluster
    "64:ff9b::169.254.169.254",
    "2002:a9fe:a9fe::1", // 6to4
    "[::ffff:a9fe:a9fe]",
  ];
  const others = ["10.0.0.1", "100.64.0.1", "127.0.0.1", "::1", "::", "::127.0.0.1", "fe80::1%eth0", "fc00::1"];
  const deprecated = ["fec0::1", "64:ff9b:1::1"];
  for (const address of [...metadata, ...others, ...deprecated]) assert.equal(isPrivateAddress(address), true, address);
});

test("public addresses are public, IPv6 that carries a public IPv4 included", () => {
  for (const address of ["8.8.8.8", "2001:4860:4860::8888", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"]) {
    assert.equal(isPrivateAddress(address), false, address);
  }
  assert.equal(isPrivateAddress("not-an-address"), true);
});
